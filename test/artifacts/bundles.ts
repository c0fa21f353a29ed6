/**
 * The Lambda artifacts: each function bundled exactly as `cdk deploy` bundles it (infra's `esbuildOptions`, the
 * flags NodejsFunction passes to esbuild), alone in a directory with no node_modules anywhere above it, and run
 * there in a fresh Node process the way the Lambda runtime runs it: import `index.mjs`, call its `handler` export
 * with one event and a context, and report the result.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions, LAMBDA_RUNTIME } from '#infra/burnrate-function.ts';
import type { ArtifactFunction } from './cfn.ts';

export interface Artifact {
  fn: ArtifactFunction;
  /** The directory holding only `index.mjs` (and its map): the function's /var/task. */
  dir: string;
  bytes: number;
}

/**
 * Builds every function's bundle into `<root>/<name>/index.mjs`. ONE esbuild run with all the entry points (and
 * code splitting off, as in infra's options): each output is the same bundle a build of its entry alone makes —
 * byte for byte, which the artifact test checks for one of them with {@link buildAlone} — but the shared modules
 * (the AWS SDK, zod, middy) are parsed once instead of once per function.
 */
export async function buildArtifacts(functions: readonly ArtifactFunction[], root: string): Promise<Artifact[]> {
  const reachable = nodeModulesAbove(root);
  if (reachable) throw new Error(`${reachable} is reachable from ${root}: the bundles would not be tested alone`);
  const dirName = (fn: ArtifactFunction) => fn.name.replace(/[^\w-]+/g, '_');
  const groups = new Map<boolean, ArtifactFunction[]>();
  for (const fn of functions) groups.set(fn.sourceMap, [...(groups.get(fn.sourceMap) ?? []), fn]);
  await Promise.all(
    [...groups].map(([sourceMap, group]) => {
      const { outfile: _outfile, entryPoints: _entryPoints, ...options } = esbuildOptions(group[0]!.entry, join(root, 'unused.mjs'), sourceMap);
      return build({
        ...options,
        entryPoints: group.map((fn) => ({ in: fn.entry, out: `${dirName(fn)}/index` })),
        outdir: root,
        outExtension: { '.js': '.mjs' },
        logLevel: 'error',
      });
    }),
  );
  return Promise.all(
    functions.map(async (fn) => {
      const dir = join(root, dirName(fn));
      return { fn, dir, bytes: (await stat(join(dir, 'index.mjs'))).size };
    }),
  );
}

/** One function built alone, with exactly infra's `esbuildOptions` (what NodejsFunction runs), into `outfile`. */
export async function buildAlone(fn: ArtifactFunction, outfile: string): Promise<void> {
  await mkdir(dirname(outfile), { recursive: true });
  await build({ ...esbuildOptions(fn.entry, outfile, fn.sourceMap), logLevel: 'error' });
}

/** The first `node_modules` directory that Node's resolution could find from `dir` upward, if any. */
export function nodeModulesAbove(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    const candidate = join(current, 'node_modules');
    if (existsSync(candidate)) return candidate;
    if (dirname(current) === current) return undefined;
  }
}

/**
 * The environment the Lambda runtime itself sets (not the function's configuration): region, credentials of the
 * execution role (dummies here), the function's name, memory and version, the task root.
 */
export function lambdaRuntimeEnvironment(fn: ArtifactFunction, dir: string, region: string): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: 'ASIAARTIFACTTEST0000',
    AWS_SECRET_ACCESS_KEY: 'artifact-test-secret-access-key',
    AWS_SESSION_TOKEN: 'artifact-test-session-token',
    AWS_EXECUTION_ENV: `AWS_Lambda_${LAMBDA_RUNTIME.name}`,
    AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.logicalId}`,
    AWS_LAMBDA_LOG_STREAM_NAME: 'artifact-test',
    LAMBDA_TASK_ROOT: dir,
    // No instance metadata here (credentials come from the variables above, as on Lambda).
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

export interface Invocation {
  /** The handler resolved (`result`) or threw / the module failed to load (`error`). */
  ok: boolean;
  result?: unknown;
  error?: { name?: string; message?: string; stack?: string };
  /** Exit code of the process (0 after a reported result). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The Lambda runtime in miniature: import the bundle from the task root, call `handler(event, context)`, write
 * `{ok, result | error}` to fd 3, exit. An unhandled rejection crashes it, as it crashes a Lambda runtime.
 */
const RUNNER = `
import { readFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const report = (out) => { writeSync(3, JSON.stringify(out)); process.exit(0); };
const fail = (e) => report({ ok: false, error: { name: e?.name, message: e?.message ?? String(e), stack: e?.stack } });
process.on('unhandledRejection', fail);
process.on('uncaughtException', fail);
const input = JSON.parse(readFileSync(0, 'utf8'));
try {
  const mod = await import(pathToFileURL(process.env.LAMBDA_TASK_ROOT + '/index.mjs').href);
  if (typeof mod.handler !== 'function') throw new Error('index.mjs exports no function named handler');
  const deadline = Date.now() + input.timeoutMs;
  const context = { ...input.context, getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()), done() {}, fail() {}, succeed() {} };
  const result = await mod.handler(input.event, context);
  report({ ok: true, result: result === undefined ? null : result });
} catch (e) { fail(e); }
`;

/** Runs one invocation of the artifact in its own Node process, with exactly `env`. */
export function invokeArtifact(artifact: Artifact, env: Record<string, string>, event: unknown, requestId: string): Promise<Invocation> {
  const { fn, dir } = artifact;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: fn.logicalId,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${env.AWS_REGION}:000000000000:function:${fn.logicalId}`,
    memoryLimitInMB: String(fn.memorySize),
    awsRequestId: requestId,
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME,
  };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', RUNNER], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let report = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (report += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), fn.timeoutSeconds * 1000 + 5000);
    child.once('error', reject);
    child.once('close', (exitCode) => {
      clearTimeout(timer);
      let parsed: Pick<Invocation, 'ok' | 'result' | 'error'>;
      try {
        parsed = JSON.parse(report) as Pick<Invocation, 'ok' | 'result' | 'error'>;
      } catch {
        parsed = { ok: false, error: { message: `the process ended without a result (exit ${exitCode})` } };
      }
      resolve({ ...parsed, exitCode, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin!.end(JSON.stringify({ event, context, timeoutMs: fn.timeoutSeconds * 1000 }));
  });
}

/** At most `size` tasks at a time. */
export function pool(size: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finished task hands its slot straight to the next waiting one.
    if (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}
