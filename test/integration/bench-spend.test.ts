/**
 * The smoke test of `npm run bench:spend` (bench/spend-lib.ts), small: its loader writes 3 keys × 2 models × 3 days
 * of aggregates with ingestion's own item builders, and its measurer's figures — checked against the sums of the
 * events the loader priced — agree with what GET /spend answers, grouping by grouping, day by day. So the
 * benchmark measures real answers over real items, nothing hard-coded. (Timings are printed by the bench, never
 * asserted here.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { isoDate } from '#shared/time/periods.ts';
import { applyUpdate, benchCostMicros, benchDate, expectedTotals, loadAggregates, measureKeySearch, measureSpend, type Measured } from '../../bench/spend-lib.ts';
import { api, dynamo, pointAtStack, registerUser, stack } from './harness.ts';

const SHAPE = { keys: 3, models: 2, days: 3 };
let restore: () => void;
beforeAll(() => {
  restore = pointAtStack();
});
afterAll(() => restore());

describe('bench:spend, small', () => {
  it('applies the update forms ingestion emits, exactly, and refuses any other', () => {
    const item = applyUpdate(
      { pk: 'p', sk: 's', old: 1 },
      {
        UpdateExpression: 'SET a = :a, #b = if_not_exists(#b, :b) ADD n :n, #m :m REMOVE old',
        ExpressionAttributeNames: { '#b': 'b', '#m': 'm:2026-11:cost' },
        ExpressionAttributeValues: { ':a': 'x', ':b': 'y', ':n': 9_007_199_254_740_993n, ':m': 2 },
      },
    );
    expect(item).toEqual({ pk: 'p', sk: 's', a: 'x', b: 'y', n: 9_007_199_254_740_993n, 'm:2026-11:cost': 2 });
    expect(applyUpdate(item, { UpdateExpression: 'SET #b = if_not_exists(#b, :b) ADD n :n', ExpressionAttributeNames: { '#b': 'b' }, ExpressionAttributeValues: { ':b': 'z', ':n': 7n } })).toMatchObject({ b: 'y', n: 9_007_199_254_741_000n });
    expect(() => applyUpdate({}, { UpdateExpression: 'SET a = a + :one', ExpressionAttributeValues: { ':one': 1 } })).toThrow(/unexpected SET/);
  });

  it("the loader's items answer GET /spend exactly as the events' sums, and the measurer reports those answers", async () => {
    const user = await registerUser();
    const now = new Date();
    const today = isoDate(now);
    const loaded = await loadAggregates(user.accountId, SHAPE, { now, concurrency: 2 });
    // Per key: its key item, 3·2 day × model rows, 3 day × key and 1–2 month × key items; then the account's.
    expect(loaded.items).toBeGreaterThan(SHAPE.keys * (1 + 6 + 3));

    // The key item has ingestion's shape: totals, rolling counters, the gsi1 that lists it; the account counts it.
    const keyItem = (await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.providerKey(user.accountId, loaded.keyHashes[1]!) }))).Item!;
    const keyTotal = [0, 1, 2].flatMap((d) => [0, 1].map((m) => benchCostMicros(1, m, d))).reduce((a, b) => a + b, 0);
    expect(Number(keyItem.totalCostMicros)).toBe(keyTotal);
    expect(Number(keyItem.totalRequests)).toBe(6);
    expect(Number(keyItem[`d:${today}:cost`])).toBe(benchCostMicros(1, 0, 2) + benchCostMicros(1, 1, 2));
    expect(keyItem).toMatchObject({ ...keys.providerKeyIndex(user.accountId, loaded.keyHashes[1]!), provider: 'openai', hint: `sk-…${loaded.keyHashes[1]!.slice(-4)}` });
    const account = (await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.account(user.accountId) }))).Item!;
    expect(Number(account.keyCount)).toBe(SHAPE.keys);

    // The measurer, fed by the API (requests from the gateway's x-dynamodb-requests; read units not measurable here).
    const get = async (path: string): Promise<Measured> => {
      const started = performance.now();
      const res = await api(path, { token: user.token });
      return {
        status: res.status,
        body: res.body,
        ms: performance.now() - started,
        requests: Number(res.headers.get('x-dynamodb-requests')),
        commands: res.headers.get('x-dynamodb-commands') ?? '',
        rcu: null,
      };
    };
    const rows = await measureSpend(get, SHAPE, today, ['mtd', 2, 3, 366], 1);
    expect(rows).toHaveLength(16);
    for (const row of rows) {
      expect(row.mismatch, `${row.groupBy} ${row.days} days`).toBeUndefined();
      expect(row.exact).toBe(true);
      expect(row.requests).toBeGreaterThan(0);
      const expected = expectedTotals(SHAPE, today, row.from, row.to);
      expect(row.totalCost).toBe((Number(expected.costMicros) / 1e6).toFixed(6));
    }

    // Day by day, independently of the measurer: each day is the sum of its events' costs.
    const byDay = (await api(`/spend?groupBy=day&from=${benchDate(today, 3, 0)}&to=${today}`, { token: user.token })).body;
    for (let d = 0; d < 3; d++) {
      let micros = 0;
      for (let k = 0; k < 3; k++) for (let m = 0; m < 2; m++) micros += benchCostMicros(k, m, d);
      expect(byDay.groups[d]).toMatchObject({ date: benchDate(today, 3, d), costUsd: micros / 1e6, requests: 6 });
    }
    // The export reads the loader's key × day × model rows: one per key, day and model.
    const csv = await api(`/spend/export?from=${benchDate(today, 3, 0)}&to=${today}`, { token: user.token });
    expect(csv.status).toBe(200);
    expect(String(csv.body).trim().split('\r\n')).toHaveLength(1 + 3 * 2 * 3);

    // The key searches the bench times: each finds its key, `total` counts every key; a search that can't find
    // anything is reported as a mismatch, not passed.
    await api(`/keys/${loaded.keyHashes[2]}`, { method: 'PATCH', token: user.token, body: { label: 'Batch worker 2 (eu-west)' } });
    const searches = await measureKeySearch(get, loaded.keyHashes, 1, 2, 'Batch worker 2 (eu-west)');
    expect(searches.map((r) => r.name)).toHaveLength(6);
    for (const row of searches) {
      expect(row.mismatch, row.name).toBeUndefined();
      expect(row.requests, row.name).toBeGreaterThan(0);
    }
    const wrong = await measureKeySearch(get, [...loaded.keyHashes.slice(0, 2), 'f'.repeat(64)], 1, 2);
    expect(wrong.find((r) => r.name.includes('hash prefix'))!.mismatch).toBe('not found');
  }, 60_000);
});
