/**
 * Closed months (docs/features/spend-and-exports.md "Closed months"), against the OpenAI stand-in (its clock frozen at noon UTC today, no
 * late arrivals) and the local stack: a past month every connection has settled closes by itself at the next sync;
 * an admin closes one (409 for the current month, for one closed already, and while days are unsettled unless
 * forced); a closed month never changes, and a later downward revision of one of its days' bills is booked as a
 * correction today: in /spend, the key's breakdown, its month-to-date (what budgets count), the CSV and FOCUS.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, pointConnectorsAtStack, registerUser, setPlan, syncHere, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, type StandInOrg } from './standins.ts';
import { parseCsv } from './csv.ts';

const today = () => new Date().toISOString().slice(0, 10);
const thisMonth = () => today().slice(0, 7);
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const micros = (usd: number) => BigInt(Math.round(usd * 1e6));
const usdMicros = (text: string) => {
  const negative = text.startsWith('-');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const v = BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
  return negative ? -v : v;
};
/** The last month: its first and last day. */
const lastMonth = () => {
  const last = addDays(`${thisMonth()}-01`, -1);
  return { month: last.slice(0, 7), first: `${last.slice(0, 7)}-01`, last };
};

let org: StandInOrg;
let restore: () => void;
let user: RegisteredUser;
let connectionId: string;

beforeAll(async () => {
  org = await newStandInOrg('openai', { now: `${today()}T12:00:00Z`, late: null });
  restore = await pointConnectorsAtStack(new Map());
  user = await registerUser();
  await setPlan(user.accountId, 'SCALE');
  const res = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: org.adminKey } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  connectionId = res.body.id;
  expect((await syncHere(user.accountId, connectionId)).status).toBe('done');
}, 240_000);

afterAll(async () => {
  await org?.remove();
  restore?.();
});

async function focusRows(from: string, to: string): Promise<Record<string, string>[]> {
  const created = await api('/spend/exports', { method: 'POST', token: user.token, body: { from, to, format: 'focus' } });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  let ready: any;
  for (let i = 0; i < 600 && ready?.status !== 'ready'; i++) {
    ready = (await api(`/spend/exports/${created.body.id}`, { token: user.token })).body;
    expect(ready.status).not.toBe('failed');
    if (ready.status !== 'ready') await new Promise((r) => setTimeout(r, 50));
  }
  const rows = parseCsv(gunzipSync(Buffer.from(await (await fetch(ready.url)).arrayBuffer())).toString('utf8'));
  const [header, ...data] = rows;
  return data.map((r) => Object.fromEntries(header!.map((c, i) => [c, r[i]!])));
}

describe('GET /months and POST /months/{month}/close', () => {
  it('last month, settled by the connection, closed by itself at the sync; this month open', async () => {
    const { month, last } = lastMonth();
    const res = await api(`/months?from=${month}&to=${thisMonth()}`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items).toEqual([
      { month, status: 'closed', closedAt: expect.any(String), closedBy: 'burnrate', settledThrough: [{ connectionId, provider: 'openai', date: last }] },
      { month: thisMonth(), status: 'open', closedAt: null, closedBy: null, settledThrough: [{ connectionId, provider: 'openai', date: expect.any(String) }] },
    ]);
    // The default range: the last 12 months, this one last.
    const all = await api('/months', { token: user.token });
    expect(all.body.items).toHaveLength(12);
    expect(all.body.items.at(-1).month).toBe(thisMonth());
  });

  it('409 for the current month and for a month closed already; 400 for a bad month or range', async () => {
    const current = await api(`/months/${thisMonth()}/close`, { method: 'POST', token: user.token });
    expect(current.status).toBe(409);
    expect(current.body.type).toBe('/problems/month-open');
    const again = await api(`/months/${lastMonth().month}/close`, { method: 'POST', token: user.token, body: {} });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('/problems/month-closed');
    expect((await api('/months/2026-13/close', { method: 'POST', token: user.token })).status).toBe(400);
    expect((await api('/months?from=2020-01&to=2026-01', { token: user.token })).status).toBe(400);
    expect((await api('/months?from=2026-05&to=2026-01', { token: user.token })).status).toBe(400);
    expect((await api('/months?month=2026-01', { token: user.token })).status).toBe(400);
    expect((await api(`/months/${lastMonth().month}/close`, { method: 'POST', token: user.token, body: { force: 'yes' } })).status).toBe(400);
  });

  it('409 month-not-settled while a connection has days it has not billed; force closes it with its estimates', async () => {
    const other = await registerUser();
    await setPlan(other.accountId, 'SCALE');
    const second = await newStandInOrg('openai', { now: `${today()}T12:00:00Z`, late: null });
    try {
      // Connected, not synced yet: none of last month's days is settled.
      const conn = await api('/connections', { method: 'POST', token: other.token, body: { provider: 'openai', adminKey: second.adminKey } });
      expect(conn.status).toBe(201);
      const { month } = lastMonth();
      const refused = await api(`/months/${month}/close`, { method: 'POST', token: other.token });
      expect(refused.status).toBe(409);
      expect(refused.body.type).toBe('/problems/month-not-settled');
      expect(refused.body.detail).toMatch(/OpenAI/);
      const forced = await api(`/months/${month}/close`, { method: 'POST', token: other.token, body: { force: true } });
      expect(forced.status, JSON.stringify(forced.body)).toBe(200);
      expect(forced.body).toMatchObject({ month, status: 'closed', closedBy: other.userId, settledThrough: [{ connectionId: conn.body.id, provider: 'openai', date: null }] });
    } finally {
      await second.remove();
    }
  });
});

describe('a closed month never changes; a later revision is a correction on the day it is found', () => {
  it('a downward revision of one of its days: the closed month answers the same, today carries the difference, in /spend, breakdowns, CSV and FOCUS', { timeout: 120_000 }, async () => {
    const { first, last } = lastMonth();
    // A day of last month within the 35 days every sync reads the bill of again.
    const day = addDays(`${thisMonth()}-01`, -2);
    const state = await org.state();
    const series = (state.series as any[]).find((s) => s.keyId && s.kind === 'completions' && (s.until === null || s.until > Date.parse(`${day}T23:59:59Z`) / 1000) && s.since < Date.parse(`${day}T00:00:00Z`) / 1000);
    expect(series).toBeDefined();
    const hash = keyHash('openai', series.keyId);

    const monthBefore = await api(`/spend?from=${first}&to=${last}&groupBy=day`, { token: user.token });
    const keyBefore = await api(`/keys/${hash}?from=${first}&to=${today()}`, { token: user.token });
    const csvBefore = await api<string>(`/spend/export?from=${first}&to=${last}`, { token: user.token });
    const todayBefore = await api(`/spend?from=${today()}&to=${today()}`, { token: user.token });
    const reconBefore = await api(`/connections/${connectionId}/reconciliation?from=${day}&to=${day}`, { token: user.token });
    expect(reconBefore.body.days[0].settled).toBe(true);

    await org.control('/revise', { apiKeyId: series.keyId, model: series.model, tier: series.tier, date: day, set: { uncached: 1000, cached: 0, cacheWrite: 0, output: 10, requests: 2 } });
    expect((await syncHere(user.accountId, connectionId)).status).toBe('done');

    // What the provider bills for that day now, against before: the difference, exactly.
    const reconAfter = await api(`/connections/${connectionId}/reconciliation?from=${day}&to=${day}`, { token: user.token });
    const difference = micros(reconAfter.body.days[0].billedUsd) - micros(reconBefore.body.days[0].billedUsd);
    expect(difference).toBeLessThan(0n);

    // The closed month answers the same figures.
    expect((await api(`/spend?from=${first}&to=${last}&groupBy=day`, { token: user.token })).body).toEqual(monthBefore.body);
    expect((await api<string>(`/spend/export?from=${first}&to=${last}`, { token: user.token })).body).toBe(csvBefore.body);
    const keyAfter = await api(`/keys/${hash}?from=${first}&to=${today()}`, { token: user.token });
    expect(keyAfter.body.breakdown.daily.filter((d: any) => d.date <= last)).toEqual(keyBefore.body.breakdown.daily.filter((d: any) => d.date <= last));

    // Today carries the correction: in /spend, the key's breakdown (a row of its own), its month to date (budgets).
    const todayAfter = await api(`/spend?from=${today()}&to=${today()}`, { token: user.token });
    expect(micros(todayAfter.body.total.costUsd) - micros(todayBefore.body.total.costUsd)).toBe(difference);
    const corrections = (keyAfter.body.breakdown.byModel as any[]).filter((m) => m.correction === true);
    expect(corrections).toEqual([expect.objectContaining({ provider: 'openai', model: series.model, correction: true, correctionOf: day })]);
    expect(micros(corrections[0].costUsd)).toBe(difference);
    expect(micros(keyAfter.body.spend.monthToDate) - micros(keyBefore.body.spend.monthToDate)).toBe(difference);

    // CSV: today's rows marked correction, summing to the difference.
    const csv = await api<string>(`/spend/export?from=${today()}&to=${today()}`, { token: user.token });
    const [cols, ...lines] = parseCsv(csv.body);
    const at = (name: string) => cols!.indexOf(name);
    expect(at('correction')).toBe(at('settled') + 1);
    const marked = lines.filter((l) => l[at('correction')] === 'true');
    expect(marked.length).toBeGreaterThan(0);
    for (const l of marked) expect(l).toEqual(expect.arrayContaining([today(), hash]));
    expect(marked.reduce((s, l) => s + usdMicros(l[at('cost_usd')]!), 0n)).toBe(difference);
    expect(lines.filter((l) => l[at('correction')] !== 'true').every((l) => l[at('correction')] === 'false')).toBe(true);

    // FOCUS: ChargeClass Correction, its charge period the day it corrects.
    const focus = await focusRows(today(), today());
    const fixes = focus.filter((r) => r.ChargeClass === 'Correction');
    expect(fixes.length).toBeGreaterThan(0);
    for (const r of fixes) expect(r).toMatchObject({ ChargePeriodStart: `${day}T00:00:00Z`, ChargePeriodEnd: `${addDays(day, 1)}T00:00:00Z` });
    expect(fixes.reduce((s, r) => s + usdMicros(r.BilledCost!), 0n)).toBe(difference);

    // A sync that finds nothing new books nothing more.
    expect((await syncHere(user.accountId, connectionId)).status).toBe('done');
    expect((await api(`/spend?from=${today()}&to=${today()}`, { token: user.token })).body.total).toEqual(todayAfter.body.total);
  });
});

describe('events of a closed month', () => {
  it('an event sent late for a day of a closed month counts today, as a correction of that day; the closed month is unchanged', async () => {
    const { first, last } = lastMonth();
    const day = addDays(`${thisMonth()}-01`, -1);
    const sending = await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'late proxy' } });
    expect(sending.status).toBe(201);
    const monthBefore = await api(`/spend?from=${first}&to=${last}`, { token: user.token });
    const todayBefore = await api(`/spend?from=${today()}&to=${today()}`, { token: user.token });
    const hash = 'c'.repeat(64);
    const res = await api('/ingest', {
      method: 'POST',
      headers: { 'x-api-key': sending.body.key },
      body: { events: [{ requestId: `late-${Date.now()}`, keyHash: hash, provider: 'anthropic', model: 'claude-sonnet-4-5', inputTokens: 1000, outputTokens: 100, costUsd: 1.25, timestamp: `${day}T10:00:00Z` }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.accepted).toBe(1);
    expect((await api(`/spend?from=${first}&to=${last}`, { token: user.token })).body.total).toEqual(monthBefore.body.total);
    const todayAfter = await api(`/spend?from=${today()}&to=${today()}`, { token: user.token });
    expect(micros(todayAfter.body.total.costUsd) - micros(todayBefore.body.total.costUsd)).toBe(1_250_000n);
    const key = await api(`/keys/${hash}?from=${today()}&to=${today()}`, { token: user.token });
    expect(key.body.breakdown.byModel).toEqual([expect.objectContaining({ model: 'claude-sonnet-4-5', costUsd: 1.25, correction: true, correctionOf: day })]);
  });
});

describe('month views', () => {
  it('GET /keys?month=: each key with that month’s spend and requests, sorted by it; the sums equal GET /spend of the month', async () => {
    const { month, first, last } = lastMonth();
    const res = await api(`/keys?month=${month}&limit=100`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const items = res.body.items as any[];
    expect(items.length).toBe(res.body.total);
    for (const k of items) expect(k.spend.month).toEqual(expect.any(Number));
    for (let i = 1; i < items.length; i++) expect(items[i - 1].spend.month).toBeGreaterThanOrEqual(items[i].spend.month);
    const spend = await api(`/spend?from=${first}&to=${last}`, { token: user.token });
    expect(items.reduce((s, k) => s + micros(k.spend.month), 0n)).toBe(micros(spend.body.total.costUsd));
    expect(items.reduce((s, k) => s + k.requests.month, 0)).toBe(spend.body.total.requests);
    // Without month: no month figures; sort=month needs month.
    expect((await api('/keys?limit=1', { token: user.token })).body.items[0].spend.month).toBeUndefined();
    expect((await api('/keys?sort=month', { token: user.token })).status).toBe(400);
    expect((await api('/keys?month=2026-13', { token: user.token })).status).toBe(400);
  });

  it('a key deleted before the connection was made keeps its project (from its usage) in the key list and the CSV', async () => {
    const state = await org.state();
    const deleted = (state.keys as any[]).find((k) => k.status === 'deleted');
    const project = (state.projects as any[]).find((p) => p.id === deleted.projectId);
    const hash = keyHash('openai', deleted.id);
    const key = await api(`/keys/${hash}`, { token: user.token });
    expect(key.status).toBe(200);
    expect(key.body).toMatchObject({ providerStatus: 'deleted', project: { id: project.id, name: project.name } });
    const { first, last } = lastMonth();
    const csv = await api<string>(`/spend/export?from=${first}&to=${last}`, { token: user.token });
    const [cols, ...lines] = parseCsv(csv.body);
    const rows = lines.filter((l) => l[cols!.indexOf('key_hash')] === hash);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect([r[cols!.indexOf('project_id')], r[cols!.indexOf('project_name')]]).toEqual([project.id, project.name]);
  });
});
