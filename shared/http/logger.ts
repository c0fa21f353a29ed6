/**
 * One structured JSON logger per container: one line per entry on stdout/stderr, in the shape Powertools for AWS
 * Lambda's Logger prints (https://docs.powertools.aws.dev/lambda/typescript/latest/features/logger/#standard-structured-keys):
 * `level`, `message`, `timestamp`, `service`, the Lambda context's `cold_start`, `function_arn`,
 * `function_memory_size`, `function_name`, `function_request_id`, `xray_trace_id`, then the entry's own keys (an Error
 * as `error: {name, location, message, stack, cause}`, BigInts as text, circular references dropped, empty values
 * left out). Written here rather than bundled from `@aws-lambda-powertools/logger`: the same lines for ~2.6 KB instead of
 * ~20 KB in every function (docs/performance-cold-starts.md).
 *
 * Level: `AWS_LAMBDA_LOG_LEVEL` (Lambda's advanced logging controls) if set, else `POWERTOOLS_LOG_LEVEL`, else
 * `LOG_LEVEL`, else INFO (TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT), read when the logger is built.
 * `POWERTOOLS_DEV` set to true prints indented JSON through the global console.
 */
import { Console } from 'node:console';
import type { Context } from 'aws-lambda';
import type { MiddlewareObj } from '@middy/core';

const LEVELS = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 } as const;
type LevelName = keyof typeof LEVELS;
type Method = 'trace' | 'debug' | 'info' | 'warn' | 'error';
const RESERVED = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);

const levelOf = (value: string | undefined): number | undefined => {
  const name = (value === 'FATAL' ? 'CRITICAL' : value?.toUpperCase()) as LevelName | undefined;
  return name && Object.hasOwn(LEVELS, name) ? LEVELS[name] : undefined;
};
const isTrue = (value: string | undefined) => ['1', 'y', 'yes', 't', 'true', 'on'].includes((value ?? '').trim().toLowerCase());

/** `at f (/var/task/index.mjs:12:34)` → `/var/task/index.mjs:12`, as Powertools reports an error's `location`. */
function locationOf(stack: string | undefined): string {
  for (const line of stack?.split('\n') ?? []) {
    const match = /\(([^()]*?):(\d+?):(\d+?)\)\\?$/.exec(line);
    if (match) return `${match[1]}:${Number(match[2])}`;
  }
  return '';
}

function formatError(error: Error, dev: boolean): Record<string, unknown> {
  const { name, message, stack, cause } = error;
  const out: Record<string, unknown> = {
    name,
    location: locationOf(stack),
    message,
    stack: dev && typeof stack === 'string' ? stack.split('\n') : stack,
    cause: cause instanceof Error ? formatError(cause, dev) : cause,
  };
  for (const key in error) if (!['name', 'message', 'stack', 'cause'].includes(key)) out[key] = (error as unknown as Record<string, unknown>)[key];
  return out;
}

interface LambdaFields {
  cold_start: boolean;
  function_arn: string;
  function_memory_size: string | number;
  function_name: string;
  function_request_id: string;
}

export class Logger {
  private readonly service: string;
  private readonly threshold: number;
  private readonly dev: boolean;
  private readonly out: Pick<Console, Method | 'log'>;
  private lambda: LambdaFields | undefined;
  /** Lambda says how the container started: only an on-demand one has a cold start (provisioned concurrency: none). */
  private coldStart = process.env.AWS_LAMBDA_INITIALIZATION_TYPE?.trim() === 'on-demand';
  private temporary: Record<string, unknown> = {};

  constructor(options: { serviceName?: string } = {}) {
    const env = process.env;
    this.service = options.serviceName ?? 'service_undefined';
    this.threshold = levelOf(env.AWS_LAMBDA_LOG_LEVEL) ?? levelOf(env.POWERTOOLS_LOG_LEVEL || env.LOG_LEVEL) ?? LEVELS.INFO;
    this.dev = isTrue(env.POWERTOOLS_DEV);
    this.out = this.dev ? console : new Console({ stdout: process.stdout, stderr: process.stderr });
  }

  /** The invocation's Lambda context on every entry from now on (`cold_start` true on the container's first). */
  addContext(context: Context): void {
    this.lambda = {
      cold_start: this.coldStart,
      function_arn: context.invokedFunctionArn,
      function_memory_size: context.memoryLimitInMB,
      function_name: context.functionName,
      function_request_id: context.awsRequestId,
    };
    this.coldStart = false;
  }

  /** Keys on every entry until {@link resetKeys} (the HTTP handler's `accountId`). */
  appendKeys(keys: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(keys)) if (!RESERVED.has(key)) this.temporary[key] = value;
  }

  resetKeys(): void {
    this.temporary = {};
  }

  trace(message: string, ...extra: unknown[]): void {
    this.print(LEVELS.TRACE, 'TRACE', 'log', message, extra);
  }
  debug(message: string, ...extra: unknown[]): void {
    this.print(LEVELS.DEBUG, 'DEBUG', 'debug', message, extra);
  }
  info(message: string, ...extra: unknown[]): void {
    this.print(LEVELS.INFO, 'INFO', 'info', message, extra);
  }
  warn(message: string, ...extra: unknown[]): void {
    this.print(LEVELS.WARN, 'WARN', 'warn', message, extra);
  }
  error(message: string, ...extra: unknown[]): void {
    this.print(LEVELS.ERROR, 'ERROR', 'error', message, extra);
  }
  critical(message: string, ...extra: unknown[]): void {
    this.print(LEVELS.CRITICAL, 'CRITICAL', 'error', message, extra);
  }

  private print(level: number, name: LevelName, method: Method | 'log', message: string, extra: unknown[]): void {
    if (level < this.threshold) return;
    const own: Record<string, unknown> = { ...this.temporary };
    for (const item of extra) {
      if (item === undefined || item === null) continue;
      if (item instanceof Error) own.error = item;
      else if (typeof item === 'string') own.extra = item;
      else for (const [key, value] of Object.entries(item)) if (!RESERVED.has(key)) own[key] = value;
    }
    const entry: Record<string, unknown> = {
      level: name,
      message,
      timestamp: new Date().toISOString(),
      service: this.service,
      ...this.lambda,
      sampling_rate: 0,
      xray_trace_id: /(?:^|;)Root=([^;]*)/.exec(process.env._X_AMZN_TRACE_ID ?? '')?.[1],
      ...own,
    };
    for (const key of Object.keys(entry)) if (entry[key] === undefined || entry[key] === '' || entry[key] === null) delete entry[key];
    this.out[method](JSON.stringify(entry, this.replacer(), this.dev ? 4 : 0));
  }

  /** Errors as objects, BigInts as text, a circular reference left out (Powertools' replacer). */
  private replacer() {
    const ancestors: unknown[] = [];
    const dev = this.dev;
    return function (this: unknown, _key: string, value: unknown): unknown {
      const replaced = value instanceof Error ? formatError(value, dev) : value;
      if (typeof replaced === 'bigint') return replaced.toString();
      if (typeof replaced === 'object' && replaced !== null) {
        while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
        if (ancestors.includes(replaced)) return undefined;
        ancestors.push(replaced);
      }
      return replaced;
    };
  }
}

/** middy: the invocation's Lambda context on the logger before the handler; `resetKeys`: its appended keys dropped after. */
export function injectLambdaContext(target: Logger, options: { resetKeys?: boolean } = {}): MiddlewareObj {
  const reset = async () => {
    if (options.resetKeys) target.resetKeys();
  };
  return {
    before: async (request) => target.addContext(request.context as Context),
    after: reset,
    onError: reset,
  };
}

export const logger = new Logger({ serviceName: 'burnrate' });
