/**
 * The local stack is safe and tidy (issue 9 item 8): DynamoDB Local only on loopback, a random Stripe webhook
 * secret per data directory, HOST refused beyond loopback, one stack per data directory, SIGTERM to `npm start`
 * stops every child, friendly port messages, WARN logging by default, and an index at GET /api.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { checkHost, LOCK_FILE, lockDataDir, type LocalStackInfo } from '#local/stack.ts';
import { freePort, startStackProcess, type StackProcess } from './global-setup.ts';
import { stack } from './harness.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `local/start.ts` (or `npm start`) to its end; for starts that must fail fast. */
async function runStart(env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_REQUESTS: '0', ALERT_SWEEP_INTERVAL_MS: '0', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }, timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

const ports = async () => ({
  PORT: String(await freePort()),
  DYNAMODB_PORT: String(await freePort()),
  COGNITO_PORT: String(await freePort()),
  STRIPE_PORT: String(await freePort()),
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** An address of this machine that is not loopback (undefined on a machine without one). */
function externalAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
}

/** Whether a TCP connection to host:port is accepted. */
async function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(3000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** `root` and all its descendants (Linux: /proc/<pid>/task/<tid>/children). */
function processTree(root: number): number[] {
  const all = [root];
  for (let i = 0; i < all.length; i++) {
    for (const task of safeReaddir(`/proc/${all[i]}/task`)) {
      const children = safeRead(`/proc/${all[i]}/task/${task}/children`).trim();
      if (children) all.push(...children.split(/\s+/).map(Number));
    }
  }
  return [...new Set(all)];
}

const safeReaddir = (path: string) => {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
};
const safeRead = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

/** /proc/net/tcp{,6} hex address → text (`0100007F` → 127.0.0.1; 32 hex digits → IPv6, in 4-byte little-endian words). */
function procAddress(hex: string): string {
  const bytes = (word: string) => word.match(/../g)!.reverse().map((b) => parseInt(b, 16));
  if (hex.length === 8) return bytes(hex).join('.');
  const all = hex.match(/.{8}/g)!.flatMap(bytes);
  const groups = Array.from({ length: 8 }, (_, i) => ((all[2 * i]! << 8) | all[2 * i + 1]!).toString(16));
  return groups.join(':');
}

/** Listening TCP sockets (state 0A) owned by `pids`, from /proc/net/tcp{,6} and each process's fds. */
async function listeningSockets(pids: number[]): Promise<{ pid: number; address: string; port: number }[]> {
  const inodes = new Map<string, number>();
  for (const pid of pids) {
    for (const fd of safeReaddir(`/proc/${pid}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode) inodes.set(inode, pid);
      } catch {
        // closed meanwhile
      }
    }
  }
  const found: { pid: number; address: string; port: number }[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of safeRead(table).split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '0A') continue;
      const pid = inodes.get(fields[9]!);
      if (pid === undefined) continue;
      const [hex, port] = fields[1]!.split(':');
      found.push({ pid, address: procAddress(hex!), port: parseInt(port!, 16) });
    }
  }
  return found;
}

/** 127.0.0.0/8, ::1, and IPv4-mapped loopback (::ffff:127.x.y.z). */
function isLoopback(address: string): boolean {
  if (/^127\./.test(address)) return true;
  const groups = address.split(':').map((g) => parseInt(g, 16));
  if (groups.length !== 8) return false;
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return true;
  return groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff && groups[6]! >> 8 === 127;
}

describe('a running local stack', () => {
  let s: StackProcess;
  beforeAll(async () => {
    // The test project silences the handlers' logs (POWERTOOLS_LOG_LEVEL=SILENT): this stack runs with npm start's defaults.
    s = await startStackProcess(undefined, { POWERTOOLS_LOG_LEVEL: undefined, LOG_LEVEL: undefined });
  }, 90_000);
  afterAll(async () => {
    await s?.stop();
    if (s) await rm(s.dataDir, { recursive: true, force: true });
  });

  it.runIf(process.platform === 'linux')('no listening socket of the stack (node and every child) is bound beyond 127.0.0.1 / ::1', async () => {
    const pids = processTree(s.info.pids.stack);
    expect(pids).toContain(s.info.pids.dynamodb);
    expect(pids).toContain(s.info.pids.cognito);
    const listeners = await listeningSockets(pids);
    // The stack's own ports are among them (the check sees what it must), and every one is on loopback.
    const ports = new Set(listeners.map((l) => l.port));
    expect(ports).toContain(Number(new URL(s.info.dynamodbEndpoint).port));
    expect(ports).toContain(Number(new URL(s.info.cognitoEndpoint).port));
    const beyond = listeners.filter((l) => !isLoopback(l.address));
    expect(beyond, JSON.stringify(listeners)).toEqual([]);
  });

  it('DynamoDB Local answers on 127.0.0.1 only, on the advertised port itself', async () => {
    const port = Number(new URL(s.info.dynamodbEndpoint).port);
    expect(new URL(s.info.dynamodbEndpoint).hostname).toBe('127.0.0.1');
    const client = new DynamoDBClient({ endpoint: s.info.dynamodbEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    expect((await client.send(new ListTablesCommand({}))).TableNames).toContain(s.info.tableName);
    client.destroy();
    const external = externalAddress();
    if (external) expect(await accepts(external, port), `${external}:${port}`).toBe(false);
    // The port is bound on loopback only: the same port on another address is free.
    if (external) {
      const probe = createServer();
      probe.listen({ port, host: external });
      await once(probe, 'listening');
      await new Promise((r) => probe.close(r));
    }
    // The jar itself listens there (no proxy in front, no other port of its own).
    const { execFileSync } = await import('node:child_process');
    const args = execFileSync('ps', ['-o', 'args=', '-p', String(s.info.pids.dynamodb)], { encoding: 'utf8' });
    expect(Number(/-port\s+(\d+)/.exec(args)?.[1])).toBe(port);
  });

  it('the Stripe webhook secret is random per data directory and kept under it', async () => {
    expect(s.info.stripeWebhookSecret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect((await readFile(join(s.dataDir, 'stripe-webhook-secret'), 'utf8')).trim()).toBe(s.info.stripeWebhookSecret);
    expect(s.info.stripeWebhookSecret).not.toBe(stack().stripeWebhookSecret);
  });

  it('GET /api answers an index linking health and the OpenAPI document', async () => {
    const res = await fetch(s.info.apiUrl.replace('localhost', '127.0.0.1'));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { links: Record<string, { href: string }> };
    expect(body.links.health?.href).toBe('/api/health');
    expect(body.links.openapi?.href).toBe('/api/openapi.json');
    for (const { href } of Object.values(body.links)) {
      expect((await fetch(new URL(href, s.info.apiUrl.replace('localhost', '127.0.0.1')))).status).toBe(200);
    }
  });

  it('logs at WARN by default: a refused request leaves no INFO line', async () => {
    const res = await fetch(`${s.info.apiUrl.replace('localhost', '127.0.0.1')}/auth/login`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    await sleep(300);
    expect(s.output()).not.toContain('request refused');
    expect(s.output()).not.toContain('"level":"INFO"');
  });

  it('a second start on the same data directory stops at once with a clear message', async () => {
    const second = await runStart({ ...(await ports()), DATA_DIR: s.dataDir });
    expect(second.code).toBe(1);
    expect(second.output).toContain(`Another local stack (pid ${s.info.pids.stack}) is running on the data directory ${s.dataDir}`);
    // The first one is untouched.
    expect((await fetch(`${s.info.apiUrl.replace('localhost', '127.0.0.1')}/health`)).status).toBe(200);
  }, 60_000);
});

describe('starting refuses what is unsafe, with clear messages', () => {
  it('HOST beyond loopback is refused unless ALLOW_REMOTE=1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'burnrate-host-'));
    const run = await runStart({ ...(await ports()), DATA_DIR: dir, HOST: '0.0.0.0' });
    await rm(dir, { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.output).toContain('HOST=0.0.0.0 would open the local stack to other machines');
    expect(run.output).toContain('ALLOW_REMOTE=1');
    expect(() => checkHost('192.168.1.5', {})).toThrow(/published in its source code/);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(() => checkHost('0.0.0.0', { ALLOW_REMOTE: '1' })).not.toThrow();
    expect(warn.mock.calls.join(' ')).toMatch(/WARNING.*published in its source code/);
    warn.mockRestore();
    for (const host of ['127.0.0.1', 'localhost', '::1']) expect(() => checkHost(host, {})).not.toThrow();
  }, 60_000);

  it('a busy STRIPE_PORT gets the same friendly message as the other ports', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'burnrate-stripe-'));
    const holder = createServer();
    holder.listen({ port: 0, host: '127.0.0.1' });
    await once(holder, 'listening');
    const busy = (holder.address() as { port: number }).port;
    const run = await runStart({ ...(await ports()), DATA_DIR: dir, STRIPE_PORT: String(busy) });
    await new Promise((r) => holder.close(r));
    await rm(dir, { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.output).toContain(`Port ${busy} (the Stripe stand-in) is already in use. Stop whatever holds it, or set STRIPE_PORT to another port.`);
  }, 60_000);

  it('a stale lock (its process is gone) is taken over; a live one is not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'burnrate-lock-'));
    const dead = spawn(process.execPath, ['-e', '0']);
    await once(dead, 'exit');
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: dead.pid }));
    const release = await lockDataDir(dir);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await expect(lockDataDir(dir)).rejects.toThrow(`Another local stack (pid ${process.pid})`);
    await release();
    await expect(readFile(join(dir, LOCK_FILE), 'utf8')).rejects.toThrow();
    await rm(dir, { recursive: true, force: true });
  });
});

describe('SIGTERM to the `npm start` process', () => {
  it('stops the stack and every child', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'burnrate-sigterm-'));
    const env = await ports();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, ...env, DATA_DIR: dir, LOG_REQUESTS: '0', ALERT_SWEEP_INTERVAL_MS: '0' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (c: Buffer) => (output += c.toString()));
    npm.stderr.on('data', (c: Buffer) => (output += c.toString()));
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const res = await fetch(`http://127.0.0.1:${env.PORT}/api/health`).catch(() => undefined);
        if (res?.status === 200) break;
        if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`the stack did not start:\n${output}`);
        await sleep(300);
      }
      // Written just after the API starts answering: read once it is there.
      let info: LocalStackInfo | undefined;
      while (!info) {
        info = await readFile(join(dir, 'local-stack.json'), 'utf8').then((text) => JSON.parse(text) as LocalStackInfo).catch(() => undefined);
        if (!info && Date.now() > deadline) throw new Error(`no local-stack.json:\n${output}`);
        if (!info) await sleep(50);
      }
      const pids = [info.pids.stack, info.pids.dynamodb!, info.pids.cognito!];
      expect(pids.every(alive)).toBe(true);
      process.kill(npm.pid!, 'SIGTERM');
      const gone = Date.now() + 20_000;
      while (pids.some(alive) && Date.now() < gone) await sleep(200);
      expect(pids.filter(alive), output).toEqual([]);
      await expect(readFile(join(dir, LOCK_FILE), 'utf8')).rejects.toThrow();
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group is gone
      }
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
