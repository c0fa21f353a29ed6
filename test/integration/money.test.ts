/**
 * Exact money at the ceiling ($9,000,000,000 per key total, per key per day, per account per month): the review's
 * scenario replayed against the running stack, a race at the ceiling, and a stored amount past 2^53 µ$.
 */
import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { rollingNames } from '#shared/db/rolling.ts';
import { writeChunk } from '#shared/db/usage-writes.ts';
import { planChunks } from '#shared/ingest/chunks.ts';
import { isRejection, priceEvent } from '#shared/ingest/events.ts';
import { api, dynamo, pointAtStack, registerUser, stack, type RegisteredUser } from './harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newKeyHash = () => sha256(`sk-test-${randomUUID()}`);
const BILLION = 1_000_000_000;
const CEILING_USD = 9_000_000_000;

interface Tenant {
  user: RegisteredUser;
  ingestKey: string;
}

async function tenant(): Promise<Tenant> {
  const user = await registerUser();
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: {} });
  expect(res.status).toBe(201);
  return { user, ingestKey: res.body.key };
}

const event = (keyHash: string, costUsd: number) => ({
  requestId: randomUUID(),
  keyHash,
  provider: 'openai',
  model: 'gpt-4o',
  inputTokens: 10,
  outputTokens: 10,
  costUsd,
});

async function ingest(t: Tenant, events: unknown[]) {
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, body: { events } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { accepted: number; duplicates: number; rejected: { index: number; code: string; message: string }[] };
}

async function get(t: Tenant, path: string) {
  const res = await api(path, { token: t.user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function expectSpendEverywhere(t: Tenant, hash: string, usd: number) {
  const list = await get(t, '/keys');
  expect(list.items.find((k: { hash: string }) => k.hash === hash).spend).toEqual({ today: usd, monthToDate: usd, total: usd, forecastMonthEnd: usd });
  const one = await get(t, `/keys/${hash}`);
  expect(one.spend).toEqual({ today: usd, monthToDate: usd, total: usd, forecastMonthEnd: usd });
  expect(one.breakdown.daily.at(-1).costUsd).toBe(usd);
  expect(one.breakdown.byModel).toEqual([expect.objectContaining({ model: 'gpt-4o', costUsd: usd })]);
}

describe('the money ceiling', () => {
  it('ten $1,000,000,000 events in one batch: 200, nine accepted, the tenth amount_out_of_range; reads exact; budget exceeded and alerted', async () => {
    const t = await tenant();
    const budget = await api('/budgets', { method: 'POST', token: t.user.token, body: { monthlyLimit: 1000, alertThreshold: 80, scope: 'ACCOUNT' } });
    expect(budget.status).toBe(201);
    const hash = newKeyHash();

    const result = await ingest(t, Array.from({ length: 10 }, () => event(hash, BILLION)));
    expect(result.accepted).toBe(9);
    expect(result.duplicates).toBe(0);
    expect(result.rejected).toEqual([{ index: 9, code: 'amount_out_of_range', message: expect.stringContaining('$9,000,000,000') }]);

    await expectSpendEverywhere(t, hash, CEILING_USD);
    const budgets = await get(t, '/budgets');
    expect(budgets.items[0]).toMatchObject({ spend: { monthToDate: CEILING_USD }, status: 'exceeded', percentUsed: 900_000_000 });
    const alerts = await get(t, '/alerts');
    expect(alerts.items.map((a: { type: string }) => a.type).sort()).toEqual(['budget_exceeded', 'budget_threshold']);
    expect(alerts.items.find((a: { type: string }) => a.type === 'budget_exceeded').observedSpend).toBe(CEILING_USD);

    // The account's month is full: one micro-dollar more on another key is refused, a free event is not.
    const more = await ingest(t, [event(newKeyHash(), 0.000001), event(hash, 0)]);
    expect(more.accepted).toBe(1);
    expect(more.rejected).toEqual([expect.objectContaining({ index: 0, code: 'amount_out_of_range' })]);
    await expectSpendEverywhere(t, hash, CEILING_USD);
  });

  it('nine, then one more in another batch: the second is refused, nothing reads as 0', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    expect((await ingest(t, Array.from({ length: 9 }, () => event(hash, BILLION)))).accepted).toBe(9);
    const second = await ingest(t, [event(hash, BILLION)]);
    expect(second).toEqual({ accepted: 0, duplicates: 0, rejected: [expect.objectContaining({ index: 0, code: 'amount_out_of_range' })] });
    await expectSpendEverywhere(t, hash, CEILING_USD);
  });

  it('up to exactly the ceiling to the micro-dollar, and not one micro-dollar more', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    const fill = [...Array.from({ length: 8 }, () => event(hash, BILLION)), event(hash, 999_999_999.999999)];
    expect((await ingest(t, fill)).accepted).toBe(9);
    const last = await ingest(t, [event(hash, 0.000002), event(hash, 0.000001)]);
    expect(last.accepted).toBe(1);
    expect(last.rejected.map((r) => [r.index, r.code])).toEqual([[0, 'amount_out_of_range']]);
    await expectSpendEverywhere(t, hash, CEILING_USD);
  });

  it('8999999999.999999 reads back exactly in the raw response text (no binary rounding on the wire)', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    const budget = await api('/budgets', { method: 'POST', token: t.user.token, body: { monthlyLimit: 1000, alertThreshold: 80, scope: 'ACCOUNT' } });
    expect(budget.status).toBe(201);
    const fill = [...Array.from({ length: 8 }, () => event(hash, BILLION)), event(hash, 999_999_999.999999)];
    expect((await ingest(t, fill)).accepted).toBe(9);
    const raw = async (path: string) => {
      const res = await fetch(`${stack().apiUrl}${path}`, { headers: { authorization: `Bearer ${t.user.token}` } });
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBe(200);
      return text;
    };
    const exact = '8999999999.999999';
    // A double can't carry it: parsed as a number it reads …998, so the text is what must be right.
    expect(String(Number(exact))).not.toBe(exact);
    expect(await raw(`/keys/${hash}`)).toContain(`"spend":{"today":${exact},"monthToDate":${exact},"total":${exact},"forecastMonthEnd":${exact}}`);
    expect(await raw('/keys')).toContain(`"total":${exact}`);
    expect(await raw('/spend?groupBy=key')).toContain(`"total":{"costUsd":${exact},`);
    expect(await raw('/budgets')).toContain(`"spend":{"monthToDate":${exact}}`);
    expect(await raw('/alerts')).toContain(`"observedSpend":${exact}`);
    // Nothing else changes: smaller amounts stay plain JSON numbers.
    expect(await raw('/budgets')).toContain('"monthlyLimit":1000,');
  });

  it('two batches racing for the last room: together they never pass the ceiling', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    await ingest(t, [event(hash, 1)]); // the key exists: both batches add to a known key
    const results = await Promise.all([0, 1, 2].map(() => ingest(t, Array.from({ length: 4 }, () => event(hash, BILLION)))));
    const accepted = results.reduce((n, r) => n + r.accepted, 0);
    const refused = results.flatMap((r) => r.rejected);
    expect(accepted).toBe(8); // $1 + 8 × $1e9 fits; a ninth billion would pass the ceiling by $1
    expect(refused).toHaveLength(4);
    expect(refused.every((r) => r.code === 'amount_out_of_range')).toBe(true);
    await expectSpendEverywhere(t, hash, 8 * BILLION + 1);
  });

  it('a stored amount past 2^53 µ$ (written before the ceiling) reads as itself, never as 0', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    const now = new Date();
    const r = rollingNames(now.toISOString().slice(0, 10), now.toISOString().slice(0, 7));
    const at = now.toISOString();
    await dynamo().send(
      new PutCommand({
        TableName: stack().tableName,
        Item: {
          ...keys.providerKey(t.user.accountId, hash),
          ...keys.providerKeyIndex(t.user.accountId, hash),
          accountId: t.user.accountId,
          keyHash: hash,
          provider: 'openai',
          firstSeenAt: at,
          lastSeenAt: at,
          totalCostMicros: 10_000_000_000_000_000n,
          totalRequests: 10,
          [r.dayCost]: 10_000_000_000_000_000n,
          [r.dayRequests]: 10,
          [r.monthCost]: 10_000_000_000_000_000n,
          [r.monthRequests]: 10,
          unpricedRequests: 0,
        },
      }),
    );
    const list = await get(t, '/keys');
    expect(list.items.find((k: { hash: string }) => k.hash === hash).spend).toEqual({ today: 1e10, monthToDate: 1e10, total: 1e10, forecastMonthEnd: 1e10 });
    // and it is full: nothing more is added to it
    const more = await ingest(t, [event(hash, 1)]);
    expect(more.rejected).toEqual([expect.objectContaining({ code: 'amount_out_of_range' })]);
  });

  it('the write itself refuses to pass the ceiling, whatever the caller read before (the transaction writes nothing)', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    expect((await ingest(t, Array.from({ length: 5 }, () => event(hash, BILLION)))).accepted).toBe(5);
    const undo = pointAtStack();
    try {
      const now = new Date();
      const priced = Array.from({ length: 5 }, (_, i) => {
        const p = priceEvent(event(hash, BILLION), i, now);
        if (isRejection(p)) throw new Error(p.message);
        return p;
      });
      const today = now.toISOString().slice(0, 10);
      const month = today.slice(0, 7);
      const [chunk] = planChunks(priced, { knownKeys: new Set([hash]), today, month });
      const outcome = await writeChunk({ accountId: t.user.accountId, chunk: chunk!, now, today, month, periodStart: `${month}-01`, limits: { trackedRequests: 10_000, keys: 5 } });
      expect(outcome).toEqual({ status: 'ceiling' });
    } finally {
      undo();
    }
    await expectSpendEverywhere(t, hash, 5 * BILLION);
  });
});
