/**
 * The functions' logger prints the lines Powertools for AWS Lambda's Logger prints (its standard structured keys), so
 * log queries and the artifact runs read them alike: the same calls through both, compared key by key.
 */
import { Writable } from 'node:stream';
import { Console } from 'node:console';
import type { Context } from 'aws-lambda';
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { injectLambdaContext, Logger } from '#shared/http/logger.ts';

const context = {
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:burnrate-test',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  memoryLimitInMB: '512',
  functionName: 'burnrate-test',
  functionVersion: '$LATEST',
} as unknown as Context;

/** What a logger writes to stdout and stderr, one parsed line each. */
function capture(make: () => object) {
  const lines: { stream: 'out' | 'err'; entry: Record<string, unknown> }[] = [];
  const sink = (stream: 'out' | 'err') => new Writable({ write: (chunk, _e, done) => (lines.push(...String(chunk).trim().split('\n').map((l) => ({ stream, entry: JSON.parse(l) as Record<string, unknown> }))), done()) });
  const logger = make();
  Object.assign(logger, { console: new Console({ stdout: sink('out'), stderr: sink('err') }), out: new Console({ stdout: sink('out'), stderr: sink('err') }) });
  return { logger, lines };
}

const saved = { ...process.env };
beforeEach(() => {
  delete process.env.POWERTOOLS_LOG_LEVEL;
  delete process.env.LOG_LEVEL;
  delete process.env.AWS_LAMBDA_LOG_LEVEL;
  delete process.env.POWERTOOLS_DEV;
  process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
  process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
});
afterEach(() => {
  process.env = { ...saved };
});

type Calls = (l: { info(m: string, ...x: unknown[]): void; warn(m: string, ...x: unknown[]): void; error(m: string, ...x: unknown[]): void; debug(m: string, ...x: unknown[]): void; addContext(c: Context): void; appendKeys(k: Record<string, unknown>): void; resetKeys(): void }) => void;

const calls: Calls = (l) => {
  l.info('before any context', { connectionId: 'con_1', cells: 3 });
  l.addContext(context);
  l.appendKeys({ accountId: 'br_1' });
  const cause = new RangeError('inner');
  const error = Object.assign(new Error('outer', { cause }), { status: 503 });
  l.error('sync failed', error);
  l.warn('big numbers', { micros: 12345678901234567890n, nothing: undefined, empty: '', none: null }, 'and a string');
  const loop: Record<string, unknown> = { a: 1 };
  loop.self = loop;
  l.info('a loop', { loop });
  l.debug('not shown at INFO');
  l.resetKeys();
  l.addContext(context);
  l.info('second invocation');
};

describe('the logger', () => {
  it('prints what Powertools Logger prints for the same calls (stream, keys, values)', () => {
    const ours = capture(() => new Logger({ serviceName: 'burnrate' }));
    const theirs = capture(() => new PowertoolsLogger({ serviceName: 'burnrate' }));
    calls(ours.logger as unknown as Parameters<Calls>[0]);
    calls(theirs.logger as unknown as Parameters<Calls>[0]);
    // The timestamps differ by the time between the calls, the stacks by the line each call was made from.
    const same = (lines: typeof ours.lines) => JSON.stringify(lines, (key, value: unknown) => (key === 'timestamp' ? typeof value : key === 'stack' ? String(value).split('\n')[0] : value));
    expect(same(ours.lines)).toBe(same(theirs.lines));
    expect(ours.lines).toHaveLength(5);
    expect(ours.lines[1]!.entry).toMatchObject({ level: 'ERROR', cold_start: true, function_request_id: context.awsRequestId, accountId: 'br_1', error: { name: 'Error', message: 'outer', status: 503, cause: { name: 'RangeError', message: 'inner' } } });
    expect(ours.lines[4]!.entry).toMatchObject({ cold_start: false });
    expect(ours.lines[4]!.entry).not.toHaveProperty('accountId');
  });

  it('takes its level from AWS_LAMBDA_LOG_LEVEL, then POWERTOOLS_LOG_LEVEL, then LOG_LEVEL', () => {
    process.env.LOG_LEVEL = 'ERROR';
    const a = capture(() => new Logger({ serviceName: 'burnrate' }));
    (a.logger as Logger).warn('hidden');
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    const b = capture(() => new Logger({ serviceName: 'burnrate' }));
    (b.logger as Logger).debug('shown');
    process.env.AWS_LAMBDA_LOG_LEVEL = 'WARN';
    const c = capture(() => new Logger({ serviceName: 'burnrate' }));
    (c.logger as Logger).info('hidden');
    process.env.AWS_LAMBDA_LOG_LEVEL = 'SILENT';
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    const d = capture(() => new Logger({ serviceName: 'burnrate' }));
    (d.logger as Logger).error('hidden');
    expect([a, b, c, d].map((x) => x.lines.length)).toEqual([0, 1, 0, 0]);
  });

  it('the middy middleware adds the context before the handler and drops appended keys after it (and after an error)', async () => {
    const { logger, lines } = capture(() => new Logger({ serviceName: 'burnrate' }));
    const l = logger as Logger;
    const mw = injectLambdaContext(l, { resetKeys: true });
    await mw.before!({ context } as never);
    l.appendKeys({ accountId: 'br_2' });
    l.info('in');
    await mw.onError!({ context } as never);
    l.info('out');
    expect(lines.map((x) => [x.entry.message, x.entry.accountId, x.entry.function_name])).toEqual([
      ['in', 'br_2', 'burnrate-test'],
      ['out', undefined, 'burnrate-test'],
    ]);
  });
});
