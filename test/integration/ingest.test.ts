import { beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { api, registerUser, setPlan, type RegisteredUser } from './harness.ts';

const PROBLEM = 'application/problem+json';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newKeyHash = () => sha256(`sk-test-${randomUUID()}`);
const today = () => new Date().toISOString().slice(0, 10);

interface Tenant {
  user: RegisteredUser;
  ingestKey: string;
}

/** A tenant on SCALE: these tests discover many keys (FREE allows 5; limits.test.ts covers FREE). */
async function tenant(): Promise<Tenant> {
  const user = await registerUser();
  await setPlan(user.accountId, 'SCALE');
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'proxy' } });
  expect(res.status).toBe(201);
  return { user, ingestKey: res.body.key };
}

function event(keyHash: string, extra: Record<string, unknown> = {}) {
  return { requestId: randomUUID(), keyHash, provider: 'openai', model: 'gpt-4o-mini', inputTokens: 100, outputTokens: 50, ...extra };
}

async function ingest(t: Tenant, events: unknown[]) {
  return api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, body: { events } });
}

async function key(t: Tenant, hash: string, query = '') {
  const res = await api(`/keys/${hash}${query}`, { token: t.user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('POST /ingest', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant();
  });

  it('discovers a key and prices the contract example exactly ($0.72)', async () => {
    const hash = newKeyHash();
    const res = await ingest(t, [
      event(hash, { keyHint: 'sk-…4f2a', inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 1_000_000 }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
    const k = await key(t, hash);
    expect(k).toMatchObject({
      hash,
      label: null,
      hint: 'sk-…4f2a',
      provider: 'openai',
      spend: { today: 0.72, monthToDate: 0.72, total: 0.72 },
      requests: { today: 1, monthToDate: 1, total: 1 },
      unpricedRequests: 0,
    });
    expect(k.firstSeenAt).toMatch(/Z$/);
    expect(k.breakdown.byModel).toEqual([
      { provider: 'openai', model: 'gpt-4o-mini', costUsd: 0.72, requests: 1, inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 1_000_000 },
    ]);
  });

  it('counts a replayed batch once: the replay is all duplicates and changes nothing', async () => {
    const hash = newKeyHash();
    const events = Array.from({ length: 30 }, () => event(hash, { costUsd: 0.01 }));
    expect((await ingest(t, events)).body).toEqual({ accepted: 30, duplicates: 0, rejected: [] });
    const before = await key(t, hash);
    expect((await ingest(t, events)).body).toEqual({ accepted: 0, duplicates: 30, rejected: [] });
    const mixed = [...events.slice(0, 5), event(hash, { costUsd: 0.01 })];
    expect((await ingest(t, mixed)).body).toEqual({ accepted: 1, duplicates: 5, rejected: [] });
    const after = await key(t, hash);
    expect(before.spend.total).toBe(0.3);
    expect(after.spend.total).toBe(0.31);
    expect(after.requests.total).toBe(31);
  });

  it('counts a repeat inside one batch once', async () => {
    const hash = newKeyHash();
    const e = event(hash, { costUsd: 1 });
    expect((await ingest(t, [e, e, { ...e, costUsd: 5 }])).body).toEqual({ accepted: 1, duplicates: 2, rejected: [] });
    expect((await key(t, hash)).spend.total).toBe(1);
  });

  it('20 parallel batches of 50 events of $0.01 on one key give exactly $10.00 and 1,000 requests', async () => {
    const hash = newKeyHash();
    const batches = Array.from({ length: 20 }, () => Array.from({ length: 50 }, () => event(hash, { costUsd: 0.01 })));
    const results = await Promise.all(batches.map((b) => ingest(t, b)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.reduce((n, r) => n + r.body.accepted, 0)).toBe(1000);
    const k = await key(t, hash);
    expect(k.spend).toEqual({ today: 10, monthToDate: 10, total: 10, forecastMonthEnd: 10 }); // a new key: no complete day yet
    expect(k.requests.total).toBe(1000);
    // and replaying all 20 in parallel adds nothing
    const replays = await Promise.all(batches.map((b) => ingest(t, b)));
    expect(replays.reduce((n, r) => n + r.body.duplicates, 0)).toBe(1000);
    expect((await key(t, hash)).spend.total).toBe(10);
  });

  it('1,000 events of $0.000001 give exactly $0.001', async () => {
    const hash = newKeyHash();
    const res = await ingest(t, Array.from({ length: 1000 }, () => event(hash, { costUsd: 0.000001 })));
    expect(res.body.accepted).toBe(1000);
    expect((await key(t, hash)).spend.total).toBe(0.001);
  });

  it('discovers a key exactly once when 20 batches race, and counts it once in the usage', async () => {
    const racer = await tenant();
    const hash = newKeyHash();
    const results = await Promise.all(Array.from({ length: 20 }, () => ingest(racer, [event(hash, { costUsd: 0.5 })])));
    expect(results.every((r) => r.body.accepted === 1)).toBe(true);
    const list = await api('/keys', { token: racer.user.token });
    expect(list.body.items.map((k: { hash: string }) => k.hash)).toEqual([hash]);
    expect(list.body.items[0].spend.total).toBe(10);
    const status = await api('/billing/status', { token: racer.user.token });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE', usage: { trackedRequests: 20, limit: 10_000_000, keys: 1, keyLimit: 1000 } });
  });

  it('reports bad events by index without sinking the batch', async () => {
    const hash = newKeyHash();
    const res = await ingest(t, [
      event(hash, { costUsd: 1 }),
      event('not-a-hash'),
      event(hash, { cachedInputTokens: 101 }),
      event(hash, { timestamp: new Date(Date.now() + 10 * 60_000).toISOString() }),
      event(hash, { timestamp: new Date(Date.now() - 40 * 86_400_000).toISOString() }),
      'not an object',
      event(hash, { costUsd: 2 }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(2);
    expect(res.body.rejected.map((r: { index: number; code: string }) => [r.index, r.code])).toEqual([
      [1, 'invalid_event'],
      [2, 'invalid_event'],
      [3, 'timestamp_in_future'],
      [4, 'timestamp_too_old'],
      [5, 'invalid_event'],
    ]);
    expect(res.body.rejected[0].message).toContain('keyHash');
    expect((await key(t, hash)).spend.total).toBe(3);
  });

  it('tracks an unknown model at $0 as unpriced, and a dated model at its family price', async () => {
    const hash = newKeyHash();
    await ingest(t, [event(hash, { model: 'brand-new-model' }), event(hash, { model: 'gpt-4o-2024-08-06', inputTokens: 1_000_000, outputTokens: 0 })]);
    const k = await key(t, hash);
    expect(k.unpricedRequests).toBe(1);
    expect(k.spend.total).toBe(2.5);
  });

  it('prices an event in its serviceTier with its web searches; a bad serviceTier or webSearchRequests rejects only that event', async () => {
    const hash = newKeyHash();
    const M = 1_000_000;
    const res = await ingest(t, [
      // gpt-5.1 priority: $2.50 / $0.25 / $20 per 1M (standard would be $1.25 / $0.125 / $10).
      event(hash, { model: 'gpt-5.1', inputTokens: M, cachedInputTokens: 0, outputTokens: M, serviceTier: 'priority' }),
      // flex: OpenAI's Batch API rates, half of $1.25 + $10.
      event(hash, { model: 'gpt-5.1', inputTokens: M, outputTokens: M, serviceTier: 'flex' }),
      event(hash, { model: 'gpt-5.1', inputTokens: M, outputTokens: M, serviceTier: 'turbo' }),
      event(hash, { model: 'gpt-5.1', inputTokens: M, outputTokens: M, webSearchRequests: -1 }),
      event(hash, { model: 'gpt-5.1', inputTokens: M, outputTokens: M, webSearchRequests: 1.5 }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(2);
    expect(res.body.rejected).toEqual([
      { index: 2, code: 'invalid_event', message: expect.stringContaining('serviceTier') },
      { index: 3, code: 'invalid_event', message: expect.stringContaining('webSearchRequests') },
      { index: 4, code: 'invalid_event', message: expect.stringContaining('webSearchRequests') },
    ]);
    expect((await key(t, hash)).spend.total).toBe(22.5 + 5.625);
    // Anthropic: 4 web searches at $10 per 1,000 on top of 1M input of claude-sonnet-4-6 ($3).
    const searcher = newKeyHash();
    expect((await ingest(t, [event(searcher, { provider: 'anthropic', model: 'claude-sonnet-4-6', inputTokens: M, outputTokens: 0, webSearchRequests: 4 })])).body.accepted).toBe(1);
    expect(await key(t, searcher)).toMatchObject({ spend: { total: 3.04 }, unpricedRequests: 0 });
    // A priority call of a model without a published priority price: the standard price, counted as unpriced.
    const noPriority = newKeyHash();
    expect((await ingest(t, [event(noPriority, { provider: 'anthropic', model: 'claude-sonnet-4-6', inputTokens: M, outputTokens: 0, serviceTier: 'priority' })])).body.accepted).toBe(1);
    expect(await key(t, noPriority)).toMatchObject({ spend: { total: 3 }, unpricedRequests: 1 });
    // A Claude Sonnet 4.5 call past 200K input tokens: every token at the long-context rates (250K × $6 + 10K × $22.50 per 1M).
    const longCall = newKeyHash();
    expect((await ingest(t, [event(longCall, { provider: 'anthropic', model: 'claude-sonnet-4-5', inputTokens: 250_000, outputTokens: 10_000 })])).body.accepted).toBe(1);
    expect(await key(t, longCall)).toMatchObject({ spend: { total: 1.725 }, unpricedRequests: 0 });
  });

  it('raises one unpriced_model alert per model, however many events and batches bring it', async () => {
    const own = await tenant();
    const model = `gpt-unlisted-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 3; i++) {
      const res = await ingest(own, [event(newKeyHash(), { model }), event(newKeyHash(), { model }), event(newKeyHash(), { model: 'gpt-4o-mini' })]);
      expect(res.body.accepted).toBe(3);
    }
    const alerts = await api('/alerts?type=unpriced_model&limit=100', { token: own.user.token });
    expect(alerts.status).toBe(200);
    expect(alerts.body.items).toHaveLength(1);
    expect(alerts.body.items[0]).toMatchObject({ type: 'unpriced_model', title: expect.stringContaining(model), message: expect.stringContaining(`PUT /prices/openai/${model}`) });
  });

  it('answers 400 for a malformed batch: no events, too many, not an array, unknown fields', async () => {
    const bodies = [{ events: [] }, { events: Array(1001).fill(event(newKeyHash())) }, { events: {} }, { events: [event(newKeyHash())], accountId: 'x' }, {}];
    for (const body of bodies) {
      const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, body });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
    }
  });

  it('answers 401 without an ingest key, with a wrong one, with a user token, and after revocation', async () => {
    const hash = newKeyHash();
    const body = { events: [event(hash)] };
    expect((await api('/ingest', { method: 'POST', body })).status).toBe(401);
    expect((await api('/ingest', { method: 'POST', body, headers: { 'x-api-key': `brk_${'A'.repeat(43)}` } })).status).toBe(401);
    expect((await api('/ingest', { method: 'POST', body, token: t.user.token })).status).toBe(401);
    const extra = await api('/ingest-keys', { method: 'POST', token: t.user.token, body: {} });
    expect((await api('/ingest', { method: 'POST', body, headers: { 'x-api-key': extra.body.key } })).status).toBe(200);
    expect((await api(`/ingest-keys/${extra.body.id}`, { method: 'DELETE', token: t.user.token })).status).toBe(204);
    const refused = await api('/ingest', { method: 'POST', body: { events: [event(hash)] }, headers: { 'x-api-key': extra.body.key } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toBe(PROBLEM);
  });

  it('answers 413 for a body over 1 MB, and takes one just under it', async () => {
    const hash = newKeyHash();
    const body = JSON.stringify({ events: [event(hash)] });
    const padded = (size: number) => body.slice(0, -1) + ' '.repeat(size - body.length) + '}';
    const tooBig = await api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, rawBody: padded(1024 * 1024 + 1) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.headers.get('content-type')).toBe(PROBLEM);
    const justFits = await api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, rawBody: padded(1024 * 1024) });
    expect(justFits.status).toBe(200);
  });
});

describe('/keys', () => {
  let t: Tenant;
  let other: Tenant;
  const hashes = [newKeyHash(), newKeyHash(), newKeyHash()];
  beforeAll(async () => {
    [t, other] = await Promise.all([tenant(), tenant()]);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    await ingest(t, [
      event(hashes[0]!, { costUsd: 1 }),
      event(hashes[1]!, { costUsd: 3 }),
      event(hashes[2]!, { costUsd: 2 }),
      event(hashes[2]!, { costUsd: 0.5, timestamp: yesterday, model: 'gpt-4o' }),
    ]);
  });

  it('lists keys by month-to-date spend, most first, with today and totals', async () => {
    const res = await api('/keys', { token: t.user.token });
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.items.map((k: { hash: string }) => k.hash)).toEqual([hashes[1], hashes[2], hashes[0]]);
    const k2 = res.body.items[1];
    expect(k2.spend.today).toBe(2);
    expect(k2.spend.total).toBe(2.5);
    expect(k2.requests.total).toBe(2);
  });

  it('paginates with an opaque cursor bound to the account', async () => {
    const first = await api('/keys?limit=2', { token: t.user.token });
    expect(first.body.items).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api(`/keys?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: t.user.token });
    expect(second.body.items.map((k: { hash: string }) => k.hash)).toEqual([hashes[0]]);
    expect(second.body.nextCursor).toBeNull();
    const foreign = await api(`/keys?cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: other.user.token });
    expect(foreign.status).toBe(400);
    const forged = await api(`/keys?cursor=${first.body.nextCursor.slice(0, -2)}xx`, { token: t.user.token });
    expect(forged.status).toBe(400);
    for (const limit of ['0', '101', 'abc', '1.5']) {
      expect((await api(`/keys?limit=${limit}`, { token: t.user.token })).status).toBe(400);
    }
    expect((await api('/keys?sort=asc', { token: t.user.token })).status).toBe(400);
  });

  it('breaks a key down by day (zero-filled) and model over a range', async () => {
    const to = today();
    const from = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
    const k = await key(t, hashes[2]!, `?from=${from}&to=${to}`);
    expect(k.breakdown.from).toBe(from);
    expect(k.breakdown.daily.map((d: { date: string }) => d.date)).toHaveLength(4);
    expect(k.breakdown.daily.map((d: { costUsd: number }) => d.costUsd)).toEqual([0, 0, 0.5, 2]);
    expect(k.breakdown.byModel.map((m: { model: string; costUsd: number }) => [m.model, m.costUsd])).toEqual([
      ['gpt-4o-mini', 2],
      ['gpt-4o', 0.5],
    ]);
    expect((await api(`/keys/${hashes[2]}?from=2020-01-01&to=2021-06-01`, { token: t.user.token })).status).toBe(400);
    expect((await api(`/keys/${hashes[2]}?from=${to}&to=${from}`, { token: t.user.token })).status).toBe(400);
    expect((await api(`/keys/${hashes[2]}?from=2026-13-01`, { token: t.user.token })).status).toBe(400);
  });

  it('labels a key, clears the label, and validates it', async () => {
    const set = await api(`/keys/${hashes[0]}`, { method: 'PATCH', token: t.user.token, body: { label: '  Prod proxy ' } });
    expect(set.status).toBe(200);
    expect(set.body.label).toBe('Prod proxy');
    expect((await key(t, hashes[0]!)).label).toBe('Prod proxy');
    const cleared = await api(`/keys/${hashes[0]}`, { method: 'PATCH', token: t.user.token, body: { label: null } });
    expect(cleared.body.label).toBeNull();
    for (const body of [{}, { label: '' }, { label: 'x'.repeat(101) }, { label: 3 }, { label: 'a', spend: 0 }]) {
      expect((await api(`/keys/${hashes[0]}`, { method: 'PATCH', token: t.user.token, body })).status).toBe(400);
    }
  });

  it("answers 404 for another account's key on every route, and changes nothing", async () => {
    const theirs = hashes[1]!;
    expect((await api(`/keys/${theirs}`, { token: other.user.token })).status).toBe(404);
    const patch = await api(`/keys/${theirs}`, { method: 'PATCH', token: other.user.token, body: { label: 'mine now' } });
    expect(patch.status).toBe(404);
    expect(patch.headers.get('content-type')).toBe(PROBLEM);
    expect((await api('/keys', { token: other.user.token })).body.items).toEqual([]);
    expect((await key(t, theirs)).label).toBeNull();
    expect((await api('/keys/not-a-hash', { token: t.user.token })).status).toBe(404);
    expect((await api(`/keys/${newKeyHash()}`, { token: t.user.token })).status).toBe(404);
  });

  it('needs a token', async () => {
    expect((await api('/keys')).status).toBe(401);
    expect((await api(`/keys/${hashes[0]}`)).status).toBe(401);
    expect((await api('/billing/status')).status).toBe(401);
  });
});
