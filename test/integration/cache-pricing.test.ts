/**
 * Exact prompt-cache pricing through ingestion, end to end (docs/features/ingestion-and-pricing.md): events with
 * 5-minute and 1-hour cache writes are priced at the built-in table's write prices (or the account's own), the totals
 * of GET /spend and the key's breakdown are exact, and cache parts that exceed inputTokens are rejected one by one.
 */
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, registerUser, setPlan, type RegisteredUser } from './harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const today = () => new Date().toISOString().slice(0, 10);
let user: RegisteredUser;
let ingestKey: string;

beforeAll(async () => {
  user = await registerUser();
  await setPlan(user.accountId, 'SCALE');
  ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key;
});

const ingest = (events: unknown[]) => api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events } });
const event = (keyHash: string, extra: object) => ({ requestId: randomUUID(), keyHash, provider: 'anthropic', model: 'claude-sonnet-4-6', outputTokens: 0, ...extra });
/** One key's group of GET /spend (today, grouped by key): its totals as GET /spend sums them. */
async function spendOf(keyHash: string) {
  const res = await api(`/spend?from=${today()}&to=${today()}&groupBy=key`, { token: user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { hash, label, name, hint, provider, ...total } = res.body.groups.find((g: { hash: string }) => g.hash === keyHash);
  expect([hash, label, name, hint, provider]).toEqual([keyHash, null, null, null, expect.any(String)]);
  return { total };
}

describe('cache writes in ingestion', () => {
  it('prices each class at its built-in rate (Claude Sonnet 4.6, no long-context rates: $3 input, $0.30 reads, $3.75 5-minute and $6 1-hour writes, $15 output)', async () => {
    const keyHash = sha256(randomUUID());
    const res = await ingest([
      // 10M input = 1M uncached + 4M reads + 3M 5-minute writes + 2M 1-hour writes; 1M output:
      // 3 + 1.2 + 11.25 + 12 + 15 = $42.45 (at the input price for every write it would be $34.20)
      event(keyHash, { inputTokens: 10_000_000, cachedInputTokens: 4_000_000, cacheWriteInputTokens: 3_000_000, cacheWrite1hInputTokens: 2_000_000, outputTokens: 1_000_000 }),
      // one token of each write class: 3.75 + 6 = 9.75 µ$, rounded once → $0.00001
      event(keyHash, { inputTokens: 2, cacheWriteInputTokens: 1, cacheWrite1hInputTokens: 1 }),
    ]);
    expect(res.body).toEqual({ accepted: 2, duplicates: 0, rejected: [] });
    const spend = await spendOf(keyHash);
    expect(spend.total).toEqual({ costUsd: 42.45001, requests: 2, inputTokens: 10_000_002, cachedInputTokens: 4_000_000, outputTokens: 1_000_000 });
    const key = (await api(`/keys/${keyHash}`, { token: user.token })).body;
    expect(key.spend.total).toBe(42.45001);
    expect(key.breakdown.byModel).toEqual([{ provider: 'anthropic', model: 'claude-sonnet-4-6', ...spend.total }]);
  });

  it('prices OpenAI cache writes at the input price where the table lists none (gpt-4o-mini)', async () => {
    const keyHash = sha256(randomUUID());
    const e = { ...event(keyHash, {}), provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1_000_000, cachedInputTokens: 400_000, cacheWriteInputTokens: 600_000, outputTokens: 1_000_000 };
    expect((await ingest([e])).body.accepted).toBe(1);
    expect((await spendOf(keyHash)).total.costUsd).toBe(0.72); // the contract's example: writes priced as input
  });

  it('rejects an event whose cache parts exceed inputTokens, with a message naming them; the rest of the batch counts', async () => {
    const keyHash = sha256(randomUUID());
    const res = await ingest([
      event(keyHash, { inputTokens: 100, cachedInputTokens: 50, cacheWriteInputTokens: 30, cacheWrite1hInputTokens: 21 }),
      event(keyHash, { inputTokens: 100, cacheWrite1hInputTokens: 101 }),
      event(keyHash, { inputTokens: 100, cacheWriteInputTokens: -1 }),
      event(keyHash, { inputTokens: 100, cachedInputTokens: 50, cacheWriteInputTokens: 30, cacheWrite1hInputTokens: 20 }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected).toEqual([
      { index: 0, code: 'invalid_event', message: expect.stringMatching(/^cachedInputTokens \+ cacheWriteInputTokens \+ cacheWrite1hInputTokens: .*inputTokens/) },
      { index: 1, code: 'invalid_event', message: expect.stringMatching(/^cachedInputTokens \+ cacheWriteInputTokens \+ cacheWrite1hInputTokens: .*inputTokens/) },
      { index: 2, code: 'invalid_event', message: expect.stringContaining('cacheWriteInputTokens') },
    ]);
    // 0 × 3 + 50 × 0.3 + 30 × 3.75 + 20 × 6 µ$ = 247.5 → 248 µ$
    expect((await spendOf(keyHash)).total).toMatchObject({ costUsd: 0.000248, requests: 1, inputTokens: 100, cachedInputTokens: 50 });
  });

  it("prices writes at the account's own write prices, and at its input price when the own price has none", async () => {
    const put = await api('/prices/anthropic/claude-haiku-4-5', { method: 'PUT', token: user.token, body: { input: 1, cachedInput: 0.5, cacheWrite: 2, cacheWrite1h: 4, output: 8 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const keyHash = sha256(randomUUID());
    const counts = { inputTokens: 4_000_000, cachedInputTokens: 1_000_000, cacheWriteInputTokens: 1_000_000, cacheWrite1hInputTokens: 1_000_000, outputTokens: 1_000_000 };
    expect((await ingest([{ ...event(keyHash, counts), model: 'claude-haiku-4-5-20251001' }])).body.accepted).toBe(1);
    expect((await spendOf(keyHash)).total.costUsd).toBe(1 + 0.5 + 2 + 4 + 8);

    await api('/prices/anthropic/claude-haiku-4-5', { method: 'PUT', token: user.token, body: { input: 1, output: 8 } });
    const other = sha256(randomUUID());
    expect((await ingest([{ ...event(other, counts), model: 'claude-haiku-4-5' }])).body.accepted).toBe(1);
    expect((await spendOf(other)).total.costUsd).toBe(4 + 8); // every input token at $1 (reads and writes default to input)
    expect((await api('/prices/anthropic/claude-haiku-4-5', { method: 'DELETE', token: user.token })).status).toBe(204);
  });
});
