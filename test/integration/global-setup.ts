/**
 * vitest globalSetup of the integration tests: one local stack (`local/start.ts`, exactly what `npm start`
 * runs) as a child process on free ports with a fresh data directory; its endpoints are provided as `stack`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import type { LocalStackInfo } from '#local/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: LocalStackInfo;
  }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

/** A port that was free a moment ago (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface StackProcess {
  info: LocalStackInfo;
  dataDir: string;
  child: ChildProcess;
  /** The child's output so far. */
  output(): string;
  /** SIGTERM (a clean stop of the stack), SIGKILL to its whole process group after 5 s. */
  stop(): Promise<void>;
}

/**
 * Starts `local/start.ts` as a child on fresh free ports and waits until `GET /api/health` answers 200.
 * `dataDir` defaults to a new temp directory; `extraEnv` is added to the child's environment.
 */
export async function startStackProcess(
  dataDir?: string,
  extraEnv: Partial<NodeJS.ProcessEnv> = {},
): Promise<StackProcess> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'burnrate-it-')));
  const [port, dynamodbPort, cognitoPort, stripePort] = await distinctFreePorts(4);
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...extraEnv,
      PORT: String(port),
      DATA_DIR: dir,
      DYNAMODB_PORT: String(dynamodbPort),
      COGNITO_PORT: String(cognitoPort),
      STRIPE_PORT: String(stripePort),
      // The sealing key of connections' admin keys: one per data folder, in a folder of the tests' own (never the
      // developer's ~/.config/burnrate), outside the data folder as in `npm start`.
      CONNECTIONS_KEY_DIR: join(tmpdir(), 'burnrate-it-keys'),
      // Tests run the alert sweeper themselves (sweep.test.ts): no background sweep racing them.
      ALERT_SWEEP_INTERVAL_MS: '0',
      LOG_REQUESTS: '0',
      // Our end of its stdin closes when this process dies: the stack then stops instead of living on.
      STOP_ON_STDIN_END: '1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    },
    // Its own process group: a last-resort SIGKILL reaches DynamoDB Local and cognito-local too.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-32 * 1024);
    if (process.env.DEBUG_STACK === '1') process.stderr.write(chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      resolve();
    });
  });

  const stop = async () => {
    if (exit === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    // Anything left in the group (a child the stack failed to stop) goes too.
    killGroup(child, 'SIGKILL');
  };

  const apiUrl = `http://127.0.0.1:${port}/api`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  try {
    for (;;) {
      if (exit !== undefined) throw new Error(`the local stack ${exit} while starting:\n${output}`);
      if (Date.now() > deadline) {
        throw new Error(`the local stack did not answer GET /api/health within ${READY_TIMEOUT_MS / 1000} s:\n${output}`);
      }
      const res = await fetch(`${apiUrl}/health`).catch(() => undefined);
      if (res?.status === 200) break;
      await res?.body?.cancel();
      await Promise.race([sleep(200), exited]);
    }
    // The stack writes local-stack.json just after its API starts answering: read once it is there.
    let info: LocalStackInfo | undefined;
    while (!info) {
      if (exit !== undefined) throw new Error(`the local stack ${exit} while starting:\n${output}`);
      try {
        info = JSON.parse(await readFile(join(dir, 'local-stack.json'), 'utf8')) as LocalStackInfo;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`the local stack wrote no readable local-stack.json within ${READY_TIMEOUT_MS / 1000} s (${String(error)}):\n${output}`);
        await Promise.race([sleep(50), exited]);
      }
    }
    return { info, dataDir: dir, child, output: () => output, stop };
  } catch (error) {
    await stop();
    if (!dataDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

export default async function setup(project: TestProject) {
  // The project's `test.env` (e.g. CURSOR_SECRET) reaches the handlers too, as it reaches the test workers.
  // COUNT_DB_REQUESTS: every response carries its DynamoDB request count (request-cost.test.ts reads it).
  // RATE_LIMITS=off: the suite registers hundreds of users from 127.0.0.1 (identity-limits.test.ts tests the limits
  // on a stack of its own, with them on).
  // DYNAMODB_IN_MEMORY=1: the suite's stack lives as long as the run, so its table needs no file (every write to
  // DynamoDB Local's SQLite file waited on the disk; what persists across a restart is tested on stacks of their
  // own: restart.test.ts, local-safety.test.ts).
  const stack = await startStackProcess(undefined, { ...project.config.env, COUNT_DB_REQUESTS: '1', RATE_LIMITS: 'off', DYNAMODB_IN_MEMORY: '1' });
  project.provide('stack', stack.info);
  return async () => {
    await stack.stop();
    await rm(stack.dataDir, { recursive: true, force: true });
    await rm(stack.info.connectionsKeyFile, { force: true });
  };
}
