import { beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { api, registerUser, type RegisteredUser } from './harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newKeyHash = () => sha256(`sk-test-${randomUUID()}`);
const DAY = 86_400_000;

interface Tenant {
  user: RegisteredUser;
  ingestKey: string;
}

async function tenant(): Promise<Tenant> {
  const user = await registerUser();
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: {} });
  return { user, ingestKey: res.body.key };
}

const event = (keyHash: string, costUsd: number, extra: Record<string, unknown> = {}) => ({
  requestId: randomUUID(),
  keyHash,
  provider: 'openai',
  model: 'gpt-4o',
  inputTokens: 10,
  outputTokens: 10,
  costUsd,
  ...extra,
});

async function ingest(t: Tenant, events: unknown[]) {
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, body: { events } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function alerts(t: Tenant, query = '') {
  const res = await api(`/alerts${query}`, { token: t.user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { items: Record<string, any>[]; nextCursor: string | null };
}

async function rule(t: Tenant, body: Record<string, unknown>) {
  const res = await api('/alert-rules', { method: 'POST', token: t.user.token, body: { channels: ['email'], isActive: true, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function budget(t: Tenant, body: Record<string, unknown>) {
  const res = await api('/budgets', { method: 'POST', token: t.user.token, body: { scope: 'ACCOUNT', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('alert evaluation after ingestion', () => {
  it('20 concurrent ingests crossing a daily threshold create exactly one alert', async () => {
    const t = await tenant();
    const r = await rule(t, { type: 'cost_threshold', name: 'Daily $5', config: { threshold: 5, period: 'daily' } });
    const hash = newKeyHash();
    await ingest(t, [event(hash, 0.01)]); // discover the key first
    await Promise.all(Array.from({ length: 20 }, () => ingest(t, [event(hash, 0.5)])));
    const list = await alerts(t);
    expect(list.items).toHaveLength(1);
    const a = list.items[0]!;
    expect(a).toMatchObject({
      type: 'cost_threshold',
      status: 'triggered',
      ruleId: r.id,
      budgetId: null,
      keyHash: null,
      period: new Date().toISOString().slice(0, 10),
      threshold: 5,
      acknowledgedAt: null,
      acknowledgedBy: null,
    });
    expect(a.id).toMatch(/^alt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a.observedSpend).toBeGreaterThanOrEqual(5);
    expect(a.deliveries).toEqual([{ channel: 'email', status: expect.stringMatching(/^(pending|suppressed)$/), attempts: expect.any(Number) }]);
    expect(a.title).toContain('Daily $5');
    const rules = await api('/alert-rules', { token: t.user.token });
    expect(rules.body.items[0].lastTriggeredAt).toBe(a.triggeredAt);
    // more spend the same day: still one
    await ingest(t, [event(hash, 3)]);
    expect((await alerts(t)).items).toHaveLength(1);
  });

  it('a budget raises budget_threshold then budget_exceeded, once each', async () => {
    const t = await tenant();
    const b = await budget(t, { monthlyLimit: 10, alertThreshold: 80, name: 'Team' });
    const hash = newKeyHash();
    await ingest(t, [event(hash, 7.99)]);
    expect((await alerts(t)).items).toHaveLength(0);
    await ingest(t, [event(hash, 0.01)]); // exactly 80%
    let list = await alerts(t);
    expect(list.items.map((a) => a.type)).toEqual(['budget_threshold']);
    expect(list.items[0]).toMatchObject({ budgetId: b.id, threshold: 8, observedSpend: 8 });
    await ingest(t, [event(hash, 1)]);
    expect((await alerts(t)).items).toHaveLength(1);
    await ingest(t, [event(hash, 1)]); // exactly the limit
    list = await alerts(t);
    expect(list.items.map((a) => a.type)).toEqual(['budget_exceeded', 'budget_threshold']);
    expect(list.items[0]).toMatchObject({ threshold: 10, observedSpend: 10 });
    await ingest(t, [event(hash, 5)]);
    expect((await alerts(t)).items).toHaveLength(2);
    const budgets = await api('/budgets', { token: t.user.token });
    expect(budgets.body.items[0]).toMatchObject({ status: 'exceeded', percentUsed: 150, spend: { monthToDate: 15 } });
  });

  it('one jump past both levels raises one of each', async () => {
    const t = await tenant();
    await budget(t, { monthlyLimit: 1, alertThreshold: 50 });
    await ingest(t, [event(newKeyHash(), 2)]);
    expect((await alerts(t)).items.map((a) => a.type).sort()).toEqual(['budget_exceeded', 'budget_threshold']);
  });

  it('a KEY budget watches only its key', async () => {
    const t = await tenant();
    const [mine, other] = [newKeyHash(), newKeyHash()];
    await ingest(t, [event(mine, 0.01), event(other, 0.01)]);
    await budget(t, { scope: 'KEY', keyHash: mine, monthlyLimit: 1, alertThreshold: 100 });
    await ingest(t, [event(other, 5)]);
    expect((await alerts(t)).items).toHaveLength(0);
    await ingest(t, [event(mine, 1)]);
    const list = await alerts(t);
    expect(list.items.map((a) => [a.type, a.keyHash])).toEqual([
      ['budget_exceeded', mine],
      ['budget_threshold', mine],
    ]);
  });

  it('an inactive rule never fires', async () => {
    const t = await tenant();
    await rule(t, { type: 'cost_threshold', name: 'Off', isActive: false, config: { threshold: 1, period: 'monthly' } });
    await rule(t, { type: 'new_key', name: 'Off too', isActive: false, config: {} });
    await ingest(t, [event(newKeyHash(), 5)]);
    expect((await alerts(t)).items).toHaveLength(0);
  });

  it('a threshold lowered below the current spend fires on the next ingestion', async () => {
    const t = await tenant();
    const r = await rule(t, { type: 'cost_threshold', name: 'Weekly', config: { threshold: 100, period: 'weekly' } });
    const hash = newKeyHash();
    await ingest(t, [event(hash, 20)]);
    expect((await alerts(t)).items).toHaveLength(0);
    const patched = await api(`/alert-rules/${r.id}`, { method: 'PATCH', token: t.user.token, body: { config: { threshold: 10, period: 'weekly' } } });
    expect(patched.status).toBe(200);
    await ingest(t, [event(hash, 0.01)]);
    const list = await alerts(t);
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ type: 'cost_threshold', threshold: 10, observedSpend: 20.01 });
  });

  it('new_key fires once when a key is discovered, even by racing batches', async () => {
    const t = await tenant();
    await ingest(t, [event(newKeyHash(), 1)]); // a key from before the rule: no alert
    const r = await rule(t, { type: 'new_key', name: 'New keys', config: {} });
    const hash = newKeyHash();
    await Promise.all(Array.from({ length: 10 }, () => ingest(t, [event(hash, 0.01, { keyHint: 'sk-…beef' })])));
    const list = await alerts(t);
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ type: 'new_key', ruleId: r.id, keyHash: hash, threshold: null, observedSpend: null });
    expect(list.items[0]!.title).toContain('sk-…beef');
  });

  it('spend_spike compares the day with the average of the 7 days before', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    const now = Date.now();
    // $1 on each of the 7 days before today: average $1
    await ingest(t, Array.from({ length: 7 }, (_, i) => event(hash, 1, { timestamp: new Date(now - (i + 1) * DAY).toISOString() })));
    await rule(t, { type: 'spend_spike', name: 'Spike', config: { multiplier: 3, minSpend: 2 } });
    await ingest(t, [event(hash, 2.99)]);
    expect((await alerts(t)).items).toHaveLength(0);
    await ingest(t, [event(hash, 0.01)]); // $3.00 today = 3 × $1
    const list = await alerts(t);
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ type: 'spend_spike', observedSpend: 3, threshold: 3 });
  });
});

describe('GET /alerts and acknowledge', () => {
  let t: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    [t, other] = await Promise.all([tenant(), tenant()]);
    await rule(t, { type: 'new_key', name: 'New keys', config: {} });
    for (let i = 0; i < 5; i++) await ingest(t, [event(newKeyHash(), 0.01)]);
  });

  it('lists newest first and paginates with a cursor bound to the account', async () => {
    const all = await alerts(t);
    expect(all.items).toHaveLength(5);
    const times = all.items.map((a) => a.id);
    expect([...times].sort().reverse()).toEqual(times);
    const first = await alerts(t, '?limit=2');
    expect(first.items.map((a) => a.id)).toEqual(times.slice(0, 2));
    const second = await alerts(t, `?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second.items.map((a) => a.id)).toEqual(times.slice(2, 4));
    const third = await alerts(t, `?limit=2&cursor=${encodeURIComponent(second.nextCursor!)}`);
    expect(third.items.map((a) => a.id)).toEqual(times.slice(4));
    const foreign = await api(`/alerts?cursor=${encodeURIComponent(first.nextCursor!)}`, { token: other.user.token });
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get('content-type')).toBe('application/problem+json');
    expect((await api('/alerts?cursor=bm90LWEtY3Vyc29y.AAAA', { token: t.user.token })).status).toBe(400);
    expect((await api('/alerts?status=open', { token: t.user.token })).status).toBe(400);
  });

  it('acknowledges once: the second keeps the first time; status filter follows', async () => {
    const [a] = (await alerts(t)).items;
    const first = await api(`/alerts/${a!.id}/acknowledge`, { method: 'PATCH', token: t.user.token });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: a!.id, status: 'acknowledged', acknowledgedBy: t.user.userId });
    expect(first.body.acknowledgedAt).toMatch(/Z$/);
    await new Promise((r) => setTimeout(r, 20));
    const second = await api(`/alerts/${a!.id}/acknowledge`, { method: 'PATCH', token: t.user.token });
    expect(second.body.acknowledgedAt).toBe(first.body.acknowledgedAt);
    const acked = await alerts(t, '?status=acknowledged');
    expect(acked.items.map((x) => x.id)).toEqual([a!.id]);
    const open = await alerts(t, '?status=triggered');
    expect(open.items).toHaveLength(4);
    expect(open.items.map((x) => x.id)).not.toContain(a!.id);
  });

  it("answers 404 for another account's alert and changes nothing", async () => {
    const [a] = (await alerts(t, '?status=triggered')).items;
    const res = await api(`/alerts/${a!.id}/acknowledge`, { method: 'PATCH', token: other.user.token });
    expect(res.status).toBe(404);
    expect((await alerts(t, '?status=triggered')).items.map((x) => x.id)).toContain(a!.id);
    expect((await api('/alerts/alt_nope/acknowledge', { method: 'PATCH', token: t.user.token })).status).toBe(404);
    expect((await alerts(other)).items).toEqual([]);
  });

  it('needs a token', async () => {
    expect((await api('/alerts')).status).toBe(401);
  });
});
