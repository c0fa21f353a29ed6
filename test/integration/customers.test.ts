/**
 * Customers and features (docs/features/tags-and-chargeback.md "Customers and features"): the reporter takes every
 * `x-burnrate-*` header off the call before it leaves for the provider (official `openai` and `@anthropic-ai/sdk`
 * clients, per-request headers and client default headers) and reports `customerId` / `feature`; POST /ingest
 * checks them event by event; GET /spend groupBy=customer|feature and GET /customers sum them exactly; FREE counts
 * 100 customers a month and the rest under `(other customers)` with the `plan_customer_limit` note.
 */
import { createHash, randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReporter } from '../../reporter/src/index.ts';
import { ANTHROPIC_KEY, OPENAI_KEY, startInferenceStandin, type Standin } from '../../reporter/test/inference-standin.ts';
import { api, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const micros = (usd: number) => BigInt(Math.round(usd * 1e6));
const silent = { warn: () => undefined };
const month = new Date().toISOString().slice(0, 7);
const monthRange = `from=${month}-01&to=${new Date().toISOString().slice(0, 10)}`;

let standin: Standin;
beforeAll(async () => {
  standin = await startInferenceStandin();
});
afterAll(() => standin.close());

async function ingestKeyOf(user: RegisteredUser): Promise<string> {
  return (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key as string;
}

describe('POST /ingest: customerId and feature', () => {
  it('takes both (optional) and rejects only the event with a bad one', async () => {
    const user = await registerUser();
    const key = await ingestKeyOf(user);
    const base = () => ({ requestId: randomUUID(), keyHash: sha256(`c-${randomUUID()}`), provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1, outputTokens: 1, costUsd: 0.5 });
    const events = [
      { ...base(), customerId: 'acme', feature: 'search' },
      { ...base(), customerId: 'ü'.repeat(128) },
      { ...base(), customerId: 'x'.repeat(129) },
      { ...base(), customerId: 'a\nb' },
      { ...base(), customerId: '' },
      { ...base(), customerId: '(other customers)' },
      { ...base(), feature: 'f'.repeat(65) },
      { ...base(), feature: 7 },
      base(),
    ];
    const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': key }, body: { events } });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(3);
    expect((res.body.rejected as any[]).map((r) => [r.index, r.code])).toEqual([2, 3, 4, 5, 6, 7].map((i) => [i, 'invalid_event']));
    const byFeature = await api(`/spend?${monthRange}&groupBy=feature`, { token: user.token });
    // Named groups most cost first; the spend that names no feature last.
    expect(byFeature.body.groups).toEqual([
      { feature: 'search', costUsd: 0.5, requests: 1, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 },
      { feature: null, costUsd: 1, requests: 2, inputTokens: 2, cachedInputTokens: 0, outputTokens: 2 },
    ]);
    expect(byFeature.body.total.costUsd).toBe(1.5);
  });
});

describe('the reporter marks calls with customers and features; the provider never sees the marks', () => {
  let user: RegisteredUser;
  beforeAll(async () => {
    user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
  });

  it('official clients, per-request and default headers: /spend?groupBy=customer shows the customers with exact sums', async () => {
    const reporter = createReporter({ ingestKey: await ingestKeyOf(user), baseUrl: stack().apiUrl, logger: silent });
    const seenBefore = standin.seen.length;
    const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch });
    const forGlobex = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch, defaultHeaders: { 'x-burnrate-customer': 'globex', 'X-Burnrate-Feature': 'summaries' } });
    const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] };
    await openai.chat.completions.create(ask, { headers: { 'x-burnrate-customer': 'acme', 'x-burnrate-feature': 'chat', 'x-burnrate-anything': 'secret' } });
    const stream = await openai.chat.completions.create({ ...ask, stream: true }, { headers: { 'X-BURNRATE-CUSTOMER': 'acme' } });
    for await (const chunk of stream) void chunk;
    await forGlobex.chat.completions.create(ask);
    await openai.chat.completions.create(ask);
    const anthropic = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: standin.url, fetch: reporter.fetch });
    await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'x-burnrate-customer': 'acme', 'x-burnrate-feature': 'chat' } });
    await reporter.close();
    expect(reporter.stats()).toMatchObject({ sent: 5, rejected: 0 });

    const seen = standin.seen.slice(seenBefore);
    expect(seen).toHaveLength(5);
    for (const s of seen) expect(Object.keys(s.headers).filter((h) => h.toLowerCase().startsWith('x-burnrate'))).toEqual([]);
    expect(seen.every((s) => !s.raw.includes('acme') && !s.raw.includes('globex'))).toBe(true);

    // Exact: every OpenAI call costs the same (the stand-in's usage), as does the Anthropic one.
    const key = async (k: string) => micros((await api(`/keys/${sha256(k)}`, { token: user.token })).body.spend.monthToDate);
    const perOpenAi = (await key(OPENAI_KEY)) / 4n;
    const perAnthropic = await key(ANTHROPIC_KEY);
    const res = await api(`/spend?${monthRange}&groupBy=customer`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const groups = new Map((res.body.groups as any[]).map((g) => [g.customer, g]));
    expect(micros(groups.get('acme').costUsd)).toBe(2n * perOpenAi + perAnthropic);
    expect(groups.get('acme').requests).toBe(3);
    expect(micros(groups.get('globex').costUsd)).toBe(perOpenAi);
    expect(micros(groups.get(null).costUsd)).toBe(perOpenAi);
    expect((res.body.groups as any[]).reduce((s, g) => s + micros(g.costUsd), 0n)).toBe(micros(res.body.total.costUsd));
    const acmeOnly = await api(`/spend?${monthRange}&groupBy=customer&customer=acme`, { token: user.token });
    expect(micros(acmeOnly.body.total.costUsd)).toBe(2n * perOpenAi + perAnthropic);
    const features = new Map(((await api(`/spend?${monthRange}&groupBy=feature`, { token: user.token })).body.groups as any[]).map((g) => [g.feature, g.requests]));
    expect(Object.fromEntries(features)).toEqual({ chat: 2, summaries: 1, null: 2 });

    const customers = await api(`/customers?${monthRange}`, { token: user.token });
    expect(customers.status).toBe(200);
    expect(customers.body.items.map((c: any) => c.customerId)).toEqual(['acme', 'globex']);
    expect(customers.body.items[0]).toMatchObject({ requests: 3, firstSeenAt: expect.any(String), lastSeenAt: expect.any(String) });
    const byName = await api(`/customers?${monthRange}&sort=name&limit=1`, { token: user.token });
    expect(byName.body.items.map((c: any) => c.customerId)).toEqual(['acme']);
    const next = await api(`/customers?${monthRange}&sort=name&limit=1&cursor=${encodeURIComponent(byName.body.nextCursor)}`, { token: user.token });
    expect(next.body).toMatchObject({ items: [{ customerId: 'globex' }], nextCursor: null });
    // Not whole months, or a filter without its grouping: 400.
    expect((await api(`/spend?from=${month}-02&to=${month}-03&groupBy=customer`, { token: user.token })).status).toBe(400);
    expect((await api(`/spend?${monthRange}&customer=acme`, { token: user.token })).status).toBe(400);
  });
});

describe('FREE: 100 customers a month', () => {
  it('counts the customers past 100 under (other customers), with the plan_customer_limit note', async () => {
    const user = await registerUser();
    const key = await ingestKeyOf(user);
    const keyHash = sha256(`free-${randomUUID()}`);
    const event = (customerId: string, costUsd: number) => ({ requestId: randomUUID(), keyHash, provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1, outputTokens: 1, costUsd, customerId });
    const first = Array.from({ length: 100 }, (_, i) => event(`c${String(i).padStart(3, '0')}`, 1));
    expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': key }, body: { events: first } })).body.accepted).toBe(100);
    const second = [...Array.from({ length: 5 }, (_, i) => event(`late-${i}`, 5)), event('c000', 1)];
    expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': key }, body: { events: second } })).body.accepted).toBe(6);
    const res = await api(`/spend?${monthRange}&groupBy=customer`, { token: user.token });
    const groups = res.body.groups as any[];
    expect(groups[0]).toMatchObject({ customer: '(other customers)', costUsd: 25, requests: 5 });
    expect(groups.find((g) => g.customer === 'c000')).toMatchObject({ costUsd: 2, requests: 2 });
    expect(groups.filter((g) => typeof g.customer === 'string' && g.customer.startsWith('late-'))).toEqual([]);
    expect(groups.at(-1)).toMatchObject({ customer: 'others', count: 1, costUsd: 1 });
    expect(groups.reduce((s, g) => s + micros(g.costUsd), 0n)).toBe(micros(res.body.total.costUsd));
    expect(res.body.total.costUsd).toBe(126);
    expect(res.body.coverage.complete).toBe(false);
    expect(res.body.coverage.notes).toContainEqual(expect.objectContaining({ code: 'plan_customer_limit' }));
    const listed = await api(`/customers?${monthRange}&limit=100`, { token: user.token });
    expect(listed.body.items).toHaveLength(100);
    expect(listed.body.items[0]).toMatchObject({ customerId: '(other customers)', costUsd: 25 });
    const rest = await api(`/customers?${monthRange}&limit=100&cursor=${encodeURIComponent(listed.body.nextCursor)}`, { token: user.token });
    expect(rest.body).toMatchObject({ items: [expect.any(Object)], nextCursor: null });
  });
});
