/**
 * Child-process plumbing shared by the embedded services (DynamoDB Local, cognito-local):
 * keep the tail of their output for error messages, stop them reliably, poll until they answer.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (e.g. ENOENT: the command is not installed). */
  error?: Error;
}

export interface SupervisedChild {
  readonly name: string;
  readonly pid: number | undefined;
  /** Settles once the process has exited, or failed to start. Never rejects. */
  readonly exited: Promise<ExitInfo>;
  /** The exit, once it happened. */
  readonly exitInfo: ExitInfo | undefined;
  /** True once `stop()` was called: an exit after that is expected. */
  readonly stopping: boolean;
  /** The last few KB of the process's stdout and stderr, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_BYTES = 16 * 1024;

/**
 * Watches a spawned child: drains its pipes (a full pipe would block it) into a bounded tail,
 * and turns its exit into a promise. With `echo`, its output is copied to this process's stderr.
 */
export function supervise(name: string, child: ChildProcess, options: { echo?: boolean } = {}): SupervisedChild {
  let tail = '';
  let stopping = false;
  let exitInfo: ExitInfo | undefined;
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    if (options.echo) process.stderr.write(chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // However this process ends (an uncaught error, process.exit), the child must not outlive it.
  const killOnExit = () => {
    if (!exitInfo) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const exited = new Promise<ExitInfo>((resolve) => {
    child.on('error', (error) => {
      // A spawn failure emits 'error' and may never emit 'exit'.
      if (child.pid === undefined) {
        exitInfo = { code: null, signal: null, error };
        process.off('exit', killOnExit);
        resolve(exitInfo);
      }
    });
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      process.off('exit', killOnExit);
      resolve(exitInfo);
    });
  });

  return {
    name,
    pid: child.pid,
    exited,
    get exitInfo() {
      return exitInfo;
    },
    get stopping() {
      return stopping;
    },
    output: () => stripAnsi(tail).trim(),
    async stop(graceMs = 5000) {
      stopping = true;
      if (exitInfo) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** One line describing how a child ended, with the tail of its output. */
export function describeExit(child: SupervisedChild, info: ExitInfo): string {
  const how = info.error
    ? `could not be started: ${info.error.message}`
    : info.signal
      ? `was killed by ${info.signal}`
      : `exited with code ${info.code}`;
  const output = child.output();
  return `${child.name} ${how}${output ? `\n--- last output of ${child.name} ---\n${output}` : ''}`;
}

/**
 * Fails fast with a readable message when a port is taken, instead of letting a child die on
 * "Address already in use" — or worse, letting the readiness probe talk to whatever holds the port.
 */
export async function assertPortFree(port: number, what: string, envVar: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`Port ${port} (${what}) is already in use. Stop whatever holds it, or set ${envVar} to another port.`)
          : error,
      );
    });
    // No host: binds the dual-stack wildcard, which collides with a listener on any local address.
    server.listen({ port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Polls `probe` until it resolves. Gives up when the child exits (with its output) or after `timeoutMs`.
 */
export async function waitUntilReady<T>(
  child: SupervisedChild,
  probe: () => Promise<T>,
  { timeoutMs = 30_000, intervalMs = 150 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (child.exitInfo) throw new Error(describeExit(child, child.exitInfo));
    try {
      return await probe();
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? lastError.message : String(lastError);
      const output = child.output();
      throw new Error(
        `${child.name} did not answer within ${timeoutMs / 1000} s (last error: ${reason})` +
          (output ? `\n--- last output of ${child.name} ---\n${output}` : ''),
      );
    }
    await Promise.race([sleep(intervalMs), child.exited]);
  }
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
