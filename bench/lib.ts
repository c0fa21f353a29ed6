/**
 * Small helpers shared by the benchmarks: options, free ports, a session (temp dir, cleanups, signals, exit code),
 * a worker pool, a progress bar on stderr, percentiles, aligned tables. Benchmarks print figures; they never assert
 * on timings.
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

// ---------------------------------------------------------------------------------------------------------------
// Options

/**
 * An integer option from argv (`--events=100`, `--events 100`, `EVENTS=100`) or the environment (`EVENTS`).
 * argv wins over the environment. Throws on anything that is not an integer ≥ `min`.
 */
export function intOption(name: string, fallback: number, min = 1): number {
  const raw = argOption(name) ?? process.env[name.toUpperCase()];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw.replace(/_/g, ''));
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name.toUpperCase()} must be an integer ≥ ${min}, got "${raw}".`);
  return value;
}

function argOption(name: string): string | undefined {
  const args = process.argv.slice(2);
  const long = `--${name.toLowerCase()}`;
  const env = `${name.toUpperCase()}=`;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith(`${long}=`)) return arg.slice(long.length + 1);
    if (arg === long) return args[i + 1];
    if (arg.startsWith(env)) return arg.slice(env.length);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Ports and the machine

/** `n` distinct free TCP ports on 127.0.0.1 (each found by listening on port 0; all held until all are known). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

export function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version}, ${process.platform}/${process.arch}`;
}

// ---------------------------------------------------------------------------------------------------------------
// A benchmark's lifecycle

export interface BenchSession {
  /** A fresh directory under the OS temp dir, removed when the session ends. */
  dataDir: string;
  /**
   * Registers `fn` to run when the session ends (normally or on SIGINT/SIGTERM); cleanups run in reverse order of
   * registration, before the directory is removed. A failing one is logged as `${what} failed:` and the rest go on.
   */
  onCleanup(what: string, fn: () => unknown): void;
  /**
   * Runs `main`, then the cleanups; resolves to its exit code (1 if it threw: the error goes to `onError`, by
   * default `console.error`). The caller exits with it.
   */
  run(main: () => Promise<number>, onError?: (error: unknown) => void): Promise<number>;
}

/**
 * The lifecycle every benchmark shares: a temp directory (`tmpPrefix` + random), cleanups, and SIGINT/SIGTERM
 * handlers (each once) that write `\n${signal}: ${signalMessage}` to stderr, run the cleanups and exit with 130.
 * The cleanups run at most once, whichever comes first.
 */
export async function benchSession(tmpPrefix: string, signalMessage = 'stopping the stack'): Promise<BenchSession> {
  const dataDir = await mkdtemp(join(tmpdir(), tmpPrefix));
  const cleanups: { what: string; fn: () => unknown }[] = [];
  let cleaning: Promise<void> | undefined;

  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      for (const { what, fn } of cleanups.reverse()) {
        try {
          await fn();
        } catch (error) {
          console.error(`${what} failed:`, error);
        }
      }
      await rm(dataDir, { recursive: true, force: true }).catch((error: unknown) => console.error(`removing ${dataDir} failed:`, error));
    })());

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: ${signalMessage}\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  return {
    dataDir,
    onCleanup: (what, fn) => void cleanups.push({ what, fn }),
    async run(main, onError = (error) => console.error(error)) {
      let exitCode = 0;
      try {
        exitCode = await main();
      } catch (error) {
        onError(error);
        exitCode = 1;
      } finally {
        await cleanup();
      }
      return exitCode;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Running work

/**
 * Runs `task(i)` for i in [0, total) with at most `concurrency` in flight (at 1: a plain sequential loop).
 * Each worker takes the next index when its task is done.
 */
export async function pool(total: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const index = next++;
      await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}

// ---------------------------------------------------------------------------------------------------------------
// Progress

/**
 * `[#####.....] 42% 8400/20000 events  1234 ev/s` on stderr: redrawn in place with `\r` when stderr is a TTY
 * (at most 10 times a second), otherwise one line per 10% done.
 */
export class Progress {
  private done = 0;
  private readonly started = performance.now();
  private lastDraw = 0;
  private lastTenth = 0;
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly unit = 'events',
    private readonly rateUnit = 'ev/s',
  ) {}

  add(n: number): void {
    this.done += n;
    if (this.tty) {
      const now = performance.now();
      if (now - this.lastDraw >= 100 || this.done >= this.total) {
        this.lastDraw = now;
        process.stderr.write(`\r${this.line()}\x1b[K`);
      }
      return;
    }
    const tenth = Math.floor((this.done / this.total) * 10);
    if (tenth > this.lastTenth) {
      this.lastTenth = tenth;
      process.stderr.write(`${this.line()}\n`);
    }
  }

  /** Ends the bar's line (TTY only; the 100% line was drawn by the last `add`). */
  finish(): void {
    if (this.tty) process.stderr.write(`\r${this.line()}\x1b[K\n`);
  }

  private line(): string {
    const width = 30;
    const ratio = this.total === 0 ? 1 : Math.min(1, this.done / this.total);
    const filled = Math.round(ratio * width);
    const seconds = (performance.now() - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(this.done / seconds) : 0;
    const pct = String(Math.floor(ratio * 100)).padStart(3);
    return `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${pct}% ${this.done}/${this.total} ${this.unit}  ${rate} ${this.rateUnit}`;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Statistics

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array (p in 0–100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Printing

/** `1234.5` → `1,235`; `digits` decimals kept. */
export function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Milliseconds with a precision that suits their size. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

/**
 * An aligned table: the first row is the header; columns after the first are right-aligned unless `left` lists them.
 * Returns the text (lines joined by `\n`).
 */
export function table(rows: readonly (readonly string[])[], options: { left?: number[]; indent?: string } = {}): string {
  const left = new Set([0, ...(options.left ?? [])]);
  const indent = options.indent ?? '  ';
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const line = (row: readonly string[]) =>
    indent + row.map((cell, i) => (left.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  const [header, ...body] = rows;
  if (!header) return '';
  return [line(header), indent + widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** A section title. */
export function heading(text: string): string {
  return `\n== ${text} ${'='.repeat(Math.max(0, 100 - text.length - 4))}`;
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP against the local stack, and a tenant to measure with

/** One JSON request; the body parsed when it is JSON (the text otherwise). */
export async function call<T>(url: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: T }> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await fetch(url, { ...init, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: res.status, body: parsed as T };
}

export function expectStatus(what: string, res: { status: number; body: unknown }, status: number): void {
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body)}`);
}

/**
 * A fresh account with an ingest key, on SCALE (10M tracked requests, 1,000 keys a period) as the billing webhook
 * would set it, so plan limits never cut a run short. The plan is written with the stack's own document client.
 */
export async function benchTenant(
  stack: { apiUrl: string; tableName: string },
  label: string,
): Promise<{ accountId: string; token: string; ingestKey: string }> {
  const apiUrl = stack.apiUrl;
  const register = await call<{ accountId: string; token: string }>(`${apiUrl}/auth/register`, {
    method: 'POST',
    json: {
      email: `${label}-${randomBytes(6).toString('hex')}@example.com`,
      password: `Bench${randomBytes(6).toString('hex')}9`,
      firstName: 'Bench',
      lastName: 'Mark',
      companyName: `${label} Co`,
    },
  });
  expectStatus('POST /auth/register', register, 201);
  const { accountId, token } = register.body;
  const { db } = await import('#shared/db/client.ts');
  const { keys } = await import('#shared/db/keys.ts');
  await db().send(
    new UpdateCommand({
      TableName: stack.tableName,
      Key: keys.account(accountId),
      UpdateExpression: 'SET #plan = :plan',
      ExpressionAttributeNames: { '#plan': 'plan' },
      ExpressionAttributeValues: { ':plan': 'SCALE' },
    }),
  );
  const ingestKey = await call<{ key: string }>(`${apiUrl}/ingest-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    json: { name: label },
  });
  expectStatus('POST /ingest-keys', ingestKey, 201);
  return { accountId, token, ingestKey: ingestKey.body.key };
}

/**
 * The local stack in this process, on free ports in the session's temp dir, stopped by the session's cleanup.
 * Imported when called, so a bench sets its environment (log level, SDK notices) before any client exists.
 */
export async function startBenchStack(session: BenchSession) {
  const { startLocalStack } = await import('#local/stack.ts');
  const [port, dynamodbPort, cognitoPort] = (await freePorts(3)) as [number, number, number];
  const started = performance.now();
  // The sealing key in a temp folder too (never the developer's ~/.config/burnrate).
  const keyDir = join(tmpdir(), 'burnrate-it-keys');
  const stack = await startLocalStack({ port, dataDir: session.dataDir, dynamodbPort, cognitoPort, quiet: true, keyDir });
  session.onCleanup('stopping the stack', () => stack.stop());
  console.log(`  local stack up in ${ms(performance.now() - started)} ms: ${stack.apiUrl}, DynamoDB Local ${stack.dynamodbEndpoint}`);
  return { stack, dynamodbPort };
}
