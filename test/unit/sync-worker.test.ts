/**
 * One connector worker per provider: the sync message names the provider, and a worker carries its own provider's kit
 * only, so a message of another provider (a routing mistake) fails its record instead of being synced or dropped.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSyncMessage, queueSyncs, setLocalSyncSink, type SyncMessage } from '#shared/connections/queue.ts';
import { kitOf } from '#shared/connections/kit.ts';
import { openAiKit } from '#shared/connections/kits/openai.ts';
import { openRouterKit } from '#shared/connections/kits/openrouter.ts';
import { join } from 'node:path';
import { build } from 'esbuild';
import { syncWorker } from '#shared/sync/worker.ts';
import { limitsParts, parseLimitsMessage, queueLimits, setLocalLimitsSink, type LimitsMessage } from '#shared/sync/limits-queue.ts';
import { limitsWorker } from '#shared/sync/limits.ts';
import { queuedLimitsHooks } from '#shared/sync/hooks.ts';
import { openAiLever } from '#shared/enforcement/levers.ts';
import { esbuildOptions, PROJECT_ROOT } from '#infra/burnrate-function.ts';
import { startLimitsQueue } from '#local/limits-queue.ts';

const accountId = 'br_01JZ3N5Q8W4XKJ7T2M9R6V0ABC';
const connectionId = 'con_01JZ3N5Q8W4XKJ7T2M9R6V0ABD';
const event = (body: unknown): SQSEvent => ({ Records: [{ messageId: 'm1', body: JSON.stringify(body) } as SQSEvent['Records'][number]] });

afterEach(() => {
  setLocalSyncSink(undefined);
  setLocalLimitsSink(undefined);
});

describe('the sync message names its provider', () => {
  it('parses a message with a known provider, and refuses one without (or with another)', () => {
    expect(parseSyncMessage(JSON.stringify({ accountId, connectionId, provider: 'openai' }))).toEqual({ accountId, connectionId, provider: 'openai' });
    expect(parseSyncMessage(JSON.stringify({ accountId, connectionId }))).toBeUndefined();
    expect(parseSyncMessage(JSON.stringify({ accountId, connectionId, provider: 'mistral' }))).toBeUndefined();
  });

  it('queues each message with its provider (locally: the one sink)', async () => {
    const got: SyncMessage[] = [];
    setLocalSyncSink((messages) => got.push(...messages));
    await queueSyncs([{ accountId, connectionId, provider: 'anthropic' }]);
    expect(got).toEqual([{ accountId, connectionId, provider: 'anthropic' }]);
  });
});

describe('a worker per provider', () => {
  it('a worker refuses a message of a provider it does not carry: the record fails, nothing is synced', async () => {
    const worker = syncWorker({ openai: openAiKit });
    await expect(worker(event({ accountId, connectionId, provider: 'openrouter' }), {} as Context)).rejects.toThrow(/syncs openai, not openrouter/);
  });

  it('each kit is its own provider, with the oldest day it still reports', () => {
    expect(kitOf({ openai: openAiKit }, 'openai').provider).toBe('openai');
    expect(() => kitOf({ openai: openAiKit }, 'anthropic')).toThrow(/not anthropic/);
    expect(openAiKit.firstReadableDay('2026-11-28')).toBeUndefined();
    expect(openRouterKit.firstReadableDay('2026-11-28')! < '2026-11-28').toBe(true);
  });
});

describe('the limits phase off the worker (shared/sync/limits-queue.ts, shared/sync/limits.ts)', () => {
  const hashOf = (i: number) => i.toString(16).padStart(64, '0');
  const message = (grown: [string, boolean][]): LimitsMessage => ({ accountId, connectionId, provider: 'openai', at: '2026-11-28T23:00:00.000Z', grown });

  it("the workers' bundles carry no lever and no enforcement; the limits functions carry their own provider's lever", async () => {
    const inputsOf = async (entry: string) => {
      const built = await build({ ...esbuildOptions(join(PROJECT_ROOT, 'functions', `${entry}.ts`), join(PROJECT_ROOT, '.test-data', 'never-written.mjs')), write: false, metafile: true });
      return Object.keys(built.metafile!.inputs);
    };
    for (const provider of ['openai', 'anthropic', 'openrouter']) {
      const worker = await inputsOf(`connections/worker-${provider}`);
      expect(worker.filter((i) => /shared\/(enforcement|anomaly)\/|shared\/sync\/levers\.ts|\/zod\//.test(i)), provider).toEqual([]);
      expect(worker, provider).toContain('shared/sync/limits-queue.ts');
      const limits = await inputsOf(`connections/limits-${provider}`);
      expect(limits, provider).toEqual(expect.arrayContaining(['shared/enforcement/service.ts', 'shared/enforcement/levers.ts', 'shared/anomaly/service.ts']));
      expect(limits.filter((i) => i.startsWith('shared/connections/kits/')), provider).toEqual([]);
    }
  }, 60_000);

  it('a pass whose grown keys do not fit in a message is split in parts under the limit, each a full pass; the parts parse back', () => {
    const grown = Array.from({ length: 3000 }, (_, i): [string, boolean] => [hashOf(i), i % 2 === 0]);
    const parts = limitsParts(message(grown), 50_000);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(JSON.stringify(part).length).toBeLessThanOrEqual(50_000);
      expect(parseLimitsMessage(JSON.stringify(part))).toEqual(part);
    }
    expect(parts.flatMap((p) => p.grown)).toEqual(grown);
    expect(limitsParts(message([]))).toEqual([message([])]);
    // 1,000 keys (a plan's most) fit in one message of the default size.
    expect(limitsParts(message(grown.slice(0, 1000)))).toHaveLength(1);
  });

  it('refuses a malformed body', () => {
    for (const bad of ['nope', '{}', JSON.stringify({ ...message([]), provider: 'mistral' }), JSON.stringify({ ...message([]), at: 'yesterday' }), JSON.stringify({ ...message([]), grown: [['x', true]] }), JSON.stringify({ ...message([]), grown: [[hashOf(1), 'yes']] })]) {
      expect(parseLimitsMessage(bad), bad).toBeUndefined();
    }
  });

  it('queues each part locally, and without a queue or sink warns and sends nothing', async () => {
    const got: LimitsMessage[] = [];
    setLocalLimitsSink((messages) => got.push(...messages));
    await queueLimits(message([[hashOf(1), true]]));
    expect(got).toEqual([message([[hashOf(1), true]])]);
    setLocalLimitsSink(undefined);
    await expect(queueLimits(message([]))).resolves.toBeUndefined();
  });

  it('a limits function refuses a message of another provider, and keeps a failed record\'s later records of its connection back (FIFO)', async () => {
    const limits = limitsWorker({ openai: openAiLever });
    const other = 'con_01JZ3N5Q8W4XKJ7T2M9R6V0ABE';
    const record = (id: string, group: string, body: unknown) => ({ messageId: id, body: JSON.stringify(body), attributes: { MessageGroupId: group } }) as unknown as SQSEvent['Records'][number];
    const result = await limits(
      {
        Records: [
          record('a', connectionId, { ...message([]), provider: 'anthropic' }),
          record('b', connectionId, message([])),
          record('c', other, 'malformed'),
        ],
      },
      {} as Context,
    );
    // The first fails (a routing mistake), the second waits behind it; another connection's malformed body is dropped.
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }]);
  });
});

describe('the local FIFO limits queue (local/limits-queue.ts, local/queue.ts)', () => {
  it("keeps a connection's passes in order: a failed one comes back before its connection's next; other connections go on", async () => {
    const other = 'con_01JZ3N5Q8W4XKJ7T2M9R6V0ABE';
    const seen: string[] = [];
    let failedOnce = false;
    const queue = startLimitsQueue('openai', {
      baseDelayMs: 30,
      concurrency: 2,
      log: () => undefined,
      handler: async (event) => {
        const failures: { itemIdentifier: string }[] = [];
        for (const r of event.Records) {
          const m = JSON.parse(r.body) as LimitsMessage;
          expect(r.attributes.MessageGroupId).toBe(m.connectionId);
          if (m.at === '2026-11-28T23:00:01.000Z' && !failedOnce) {
            failedOnce = true;
            failures.push({ itemIdentifier: r.messageId });
            seen.push(`${m.connectionId.slice(-1)}:${m.at.slice(17, 19)}:failed`);
            continue;
          }
          seen.push(`${m.connectionId.slice(-1)}:${m.at.slice(17, 19)}`);
        }
        return { batchItemFailures: failures };
      },
    });
    try {
      const at = (s: number) => `2026-11-28T23:00:0${s}.000Z`;
      await queueLimits({ accountId, connectionId, provider: 'openai', at: at(1), grown: [] });
      await queueLimits({ accountId, connectionId, provider: 'openai', at: at(2), grown: [] });
      await queueLimits({ accountId, connectionId: other, provider: 'openai', at: at(3), grown: [] });
      await queue.drain();
    } finally {
      await queue.stop();
    }
    const mine = seen.filter((s) => s.startsWith('D:'));
    expect(mine).toEqual(['D:01:failed', 'D:01', 'D:02']);
    // The other connection did not wait for the retry.
    expect(seen.indexOf('E:03')).toBeLessThan(seen.indexOf('D:01'));
  });
});

describe("the worker's limits hooks when the queue refuses", () => {
  it('a release that cannot be queued fails (its sync message comes back); a pass after an import is logged, the sync keeps its result', async () => {
    const saved = { url: process.env.LIMITS_QUEUE_URL, key: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    // A queue URL nothing answers at (the SDK sends to the queue URL's host).
    process.env.LIMITS_QUEUE_URL = 'http://127.0.0.1:9/000000000000/burnrate-limits.fifo';
    process.env.AWS_ACCESS_KEY_ID ??= 'AKIAUNITTEST000000000';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'unit-test-secret';
    try {
      const hooks = queuedLimitsHooks('openai');
      await expect(hooks.released!(accountId, connectionId, undefined, new Date('2026-11-28T23:00:00Z'), undefined)).rejects.toThrow(/was not queued/);
      const conn = { accountId, id: connectionId, provider: 'openai' } as Parameters<NonNullable<typeof hooks.afterImport>>[0];
      await expect(hooks.afterImport!(conn, 'sk-admin-never-sent', new Date('2026-11-28T23:00:00Z'), undefined, new Map())).resolves.toBeUndefined();
    } finally {
      for (const [name, value] of [['LIMITS_QUEUE_URL', saved.url], ['AWS_ACCESS_KEY_ID', saved.key], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }, 30_000);
});
