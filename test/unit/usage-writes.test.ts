/**
 * The chunk writer's builders (shared/db/usage-writes.ts): one per item family, each checked on its own, and their
 * composition for ingestion pinned to the exact actions it wrote before the builders existed (the snapshot file was
 * recorded from the 184-line buildChunkActions, so ingestion's writes stay byte-identical).
 */
import { describe, expect, it } from 'vitest';
import { planChunks } from '#shared/ingest/chunks.ts';
import type { PricedEvent } from '#shared/ingest/events.ts';
import {
  accountUsageItems,
  buildChunkActions,
  eventItems,
  exportRowAttributes,
  keyDayModelItems,
  keyTotalItems,
  planCounterItems,
  spendByKeyItems,
  spendByModelItems,
} from '#shared/db/usage-writes.ts';

const NOW = new Date('2026-11-21T12:00:00.000Z');
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

function event(index: number, keyHash: string, date: string, model: string, costMicros: number, extra: Partial<PricedEvent> = {}): PricedEvent {
  return {
    index,
    requestId: `req-${index}`,
    keyHash,
    provider: 'openai',
    model,
    inputTokens: 100 + index,
    cachedInputTokens: index,
    cacheWriteInputTokens: 0,
    cacheWrite1hInputTokens: 0,
    outputTokens: 50 + index,
    costMicros,
    priced: costMicros > 0,
    timestamp: `${date}T10:00:00.000Z`,
    date,
    ...extra,
  };
}

const events: PricedEvent[] = [
  event(0, A, '2026-11-21', 'gpt-4o', 1_000, { keyHint: 'abcd' }),
  event(1, A, '2026-11-21', 'gpt-4o', 2_000),
  event(2, A, '2026-11-18', 'gpt-4o-mini', 3_000),
  event(3, B, '2026-11-21', 'gpt-4o', 0),
  event(4, B, '2026-10-30', 'gpt-4.1', 5_000, { keyHint: 'wxyz' }),
  event(5, A, '2026-11-02', 'gpt-4o', 7_000),
];

/** JSON with bigints marked, so the snapshot tells 5n from 5. */
const serialize = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v), 1);

describe('buildChunkActions (ingestion)', () => {
  it('writes exactly the actions it wrote before the builders were split out', async () => {
    const ctx = { knownKeys: new Set([A]), today: '2026-11-21', month: '2026-11', recentDays: new Set(['2026-11-20', '2026-11-18']) };
    const [chunk] = planChunks(events, ctx);
    const built = buildChunkActions({
      accountId: 'br_01TEST',
      chunk: chunk!,
      now: NOW,
      today: ctx.today,
      month: ctx.month,
      periodStart: '2026-11-01T00:00:00.000Z',
      limits: { trackedRequests: 10_000, keys: 5 },
    });
    await expect(serialize(built)).toMatchFileSnapshot('./__snapshots__/usage-writes.ingest-chunk.json');
  });
});

const ACCOUNT = 'br_01TEST';
const sums = (n: bigint, requests = n) => ({ costMicros: n * 10n, requests, inputTokens: n * 100n, cachedInputTokens: n, outputTokens: n * 5n, unpricedRequests: 0n });
const clock = { now: NOW, today: '2026-11-21', month: '2026-11' };

describe('the item-family builders', () => {
  it('events: one conditional Put per event, meaning its requestId', () => {
    const out = eventItems(ACCOUNT, [events[0]!, events[1]!], NOW);
    expect(out.actions.map((a) => a.Put?.Item?.pk)).toEqual([`EVENT#${ACCOUNT}#req-0`, `EVENT#${ACCOUNT}#req-1`]);
    expect(out.actions.every((a) => a.Put?.ConditionExpression === 'attribute_not_exists(pk)')).toBe(true);
    expect(out.meaning).toEqual([{ requestId: 'req-0' }, { requestId: 'req-1' }]);
  });

  it('export rows: gsi1 attributes that order the rows by day, key, provider, model', () => {
    const row = exportRowAttributes(ACCOUNT, { keyHash: A, date: '2026-11-20', provider: 'openai', model: 'gpt-4o', sums: sums(1n) });
    expect(row.values).toEqual({ ':gsi1pk': `SPEND#${ACCOUNT}#ROWS`, ':gsi1sk': `DAY#2026-11-20#${A}#openai#gpt-4o` });
  });

  it('key × day × model: ADDs the sums (negative ones too: a downward revision) and carries the export row', () => {
    const out = keyDayModelItems(ACCOUNT, [{ keyHash: A, date: '2026-11-20', provider: 'anthropic', model: 'claude-sonnet-4', sums: sums(-3n, 0n) }]);
    const u = out.actions[0]!.Update!;
    expect(u.Key).toEqual({ pk: `KEY#${ACCOUNT}#${A}`, sk: 'DAY#2026-11-20#anthropic#claude-sonnet-4' });
    expect(u.ExpressionAttributeValues![':costMicros']).toBe(-30n);
    expect(u.ExpressionAttributeValues![':gsi1sk']).toBe(`DAY#2026-11-20#${A}#anthropic#claude-sonnet-4`);
    expect(out.meaning).toEqual([null]);
  });

  it("key totals: a new key is created once (listed on gsi1); a known key is held under the ceiling; rolling counters for periods with counts, requests or not", () => {
    const fresh = { keyHash: B, isNew: true, provider: 'anthropic', total: sums(2n, 0n), today: sums(2n, 0n), month: sums(2n, 0n), recent: new Map(), attributes: { source: 'connection', name: 'CI' } };
    const known = { keyHash: A, isNew: false, provider: 'openai', total: sums(1n), today: sums(0n), month: sums(1n), recent: new Map([['2026-11-20', sums(1n)]]) };
    const out = keyTotalItems(ACCOUNT, [fresh, known], clock);
    const [a, b] = out.actions.map((x) => x.Update!);
    expect(a!.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(a!.ExpressionAttributeValues![':gsi1pk']).toBe(`ACCOUNT#${ACCOUNT}#KEYS`);
    // Anthropic imports count 0 requests: the day's cost counter is written all the same.
    expect(Object.values(a!.ExpressionAttributeNames!)).toEqual(expect.arrayContaining(['d:2026-11-21:cost', 'm:2026-11:cost', 'source', 'name']));
    expect(b!.ConditionExpression).toBe('attribute_not_exists(totalCostMicros) OR totalCostMicros <= :maxTotal');
    expect(Object.values(b!.ExpressionAttributeNames!)).not.toContain('d:2026-11-21:cost');
    expect(Object.values(b!.ExpressionAttributeNames!)).toContain('d:2026-11-20:cost');
    expect(out.meaning).toEqual([{ newKey: B }, { ceiling: 'key' }]);
  });

  it("account day/month: days plain, months under the money ceiling", () => {
    const out = accountUsageItems(ACCOUNT, new Map([['2026-11-20', sums(1n)]]), new Map([['2026-11', sums(1n)]]));
    expect(out.actions.map((a) => a.Update!.Key!.sk)).toEqual(['DAY#2026-11-20', 'MONTH#2026-11']);
    expect(out.actions[0]!.Update!.ConditionExpression).toBeUndefined();
    expect(out.actions[1]!.Update!.ConditionExpression).toBe('attribute_not_exists(costMicros) OR costMicros <= :maxCost');
    expect(out.meaning).toEqual([null, { ceiling: 'month' }]);
  });

  it('spend by model and by key: the GET /spend aggregates', () => {
    const byModel = spendByModelItems(ACCOUNT, [{ date: '2026-11-20', provider: 'openai', model: 'gpt-4o', sums: sums(1n) }]);
    expect(byModel.actions[0]!.Update!.Key).toEqual({ pk: `SPEND#${ACCOUNT}#MODELS`, sk: 'DAY#2026-11-20#openai#gpt-4o' });
    const byKey = spendByKeyItems(ACCOUNT, [{ date: '2026-11', keyHash: A, sums: sums(1n) }], [{ date: '2026-11-20', keyHash: A, sums: sums(1n) }]);
    expect(byKey.actions.map((a) => a.Update!.Key!.sk)).toEqual([`MONTH#2026-11#${A}`, `DAY#2026-11-20#${A}`]);
  });

  it("plan counters: tracked requests under the period's limit; the key count only when keys are new", () => {
    const none = planCounterItems(ACCOUNT, '2026-11-01', 0, 0, { trackedRequests: 10, keys: 5 });
    expect(none.actions).toHaveLength(1);
    expect(none.actions[0]!.Update!.ExpressionAttributeValues).toMatchObject({ ':n': 0, ':max': 10 });
    const two = planCounterItems(ACCOUNT, '2026-11-01', 3, 2, { trackedRequests: 10, keys: 5 });
    expect(two.actions[1]!.Update!.ExpressionAttributeValues).toEqual({ ':n': 2, ':max': 3 });
    expect(two.meaning).toEqual([{ limit: 'requests' }, { limit: 'keys' }]);
  });
});
