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
import { syncWorker } from '#shared/sync/worker.ts';

const accountId = 'br_01JZ3N5Q8W4XKJ7T2M9R6V0ABC';
const connectionId = 'con_01JZ3N5Q8W4XKJ7T2M9R6V0ABD';
const event = (body: unknown): SQSEvent => ({ Records: [{ messageId: 'm1', body: JSON.stringify(body) } as SQSEvent['Records'][number]] });

afterEach(() => setLocalSyncSink(undefined));

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
