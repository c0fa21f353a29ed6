/**
 * OpenRouter settles to OpenRouter's figure (docs/features/connections.md), and history a provider no longer holds
 * is a coverage note: against the OpenRouter stand-in (its clock frozen at noon UTC today) and the local stack.
 * - A completed day of the connection shows what OpenRouter's activity charges the account: every key's day is the sum
 *   of its activity rows' `usage`, and what no listed key explains (a key deleted before the connection was made) is
 *   the connection's usage without a key, so the reconciliation's shown figure equals its billed one on every settled day.
 * - Today's figure (the keys' `usage_daily`) is no model: not in a key's models, not a model in /spend or the CSV.
 * - Dollar-billed models never raise `unpriced_model`.
 * - A range reaching before what the connection could import carries `history_unavailable`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, pointConnectorsAtStack, registerUser, setPlan, syncHere, stack, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, type StandInOrg } from './standins.ts';
import { parseCsv } from './csv.ts';

const today = () => new Date().toISOString().slice(0, 10);
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const micros = (usd: number) => BigInt(Math.round(usd * 1e6));
const usdMicros = (text: string) => {
  const negative = text.startsWith('-');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const v = BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
  return negative ? -v : v;
};

let org: StandInOrg;
let restore: () => void;
let user: RegisteredUser;
let connectionId: string;
let importedFrom: string;

beforeAll(async () => {
  org = await newStandInOrg('openrouter', { now: `${today()}T12:00:00Z`, late: null });
  restore = await pointConnectorsAtStack(new Map(), { OPENROUTER_URL: `${stack().openrouter.url}/api/v1` });
  user = await registerUser();
  await setPlan(user.accountId, 'SCALE');
  const res = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openrouter', adminKey: org.adminKey } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  connectionId = res.body.id;
  importedFrom = res.body.importedFrom;
  expect((await syncHere(user.accountId, connectionId)).status).toBe('done');
}, 180_000);

afterAll(async () => {
  await org?.remove();
  restore?.();
});

describe('OpenRouter settles to OpenRouter’s figure', () => {
  it('every settled day: the reconciliation shows the billed figure, and the day’s spend is the account’s activity to the micro-dollar', async () => {
    const yesterday = addDays(today(), -1);
    const recon = await api(`/connections/${connectionId}/reconciliation?from=${importedFrom}&to=${yesterday}`, { token: user.token });
    expect(recon.status, JSON.stringify(recon.body)).toBe(200);
    // The account's activity (every key, one deleted before the connection was made too), per day, from the stand-in's API.
    const activity = await org.get('/api/v1/activity');
    const billed = new Map<string, bigint>();
    for (const r of activity.body.data as any[]) billed.set(r.date, (billed.get(r.date) ?? 0n) + micros(r.usage));
    const settled = (recon.body.days as any[]).filter((d) => d.settled);
    expect(settled.length).toBeGreaterThanOrEqual(29);
    // The days when the deleted key still spent: its usage is in the bill, not in any listed key's activity.
    const deletedKeyDay = addDays(today(), -25);
    expect(settled.map((d) => d.date)).toContain(deletedKeyDay);
    for (const d of settled) {
      expect(d.computedUsd, d.date).toBe(d.billedUsd);
      expect(micros(d.billedUsd), d.date).toBe(billed.get(d.date) ?? 0n);
    }
    const day = await api(`/spend?from=${deletedKeyDay}&to=${deletedKeyDay}&provider=openrouter`, { token: user.token });
    expect(micros(day.body.total.costUsd)).toBe(billed.get(deletedKeyDay));
    expect(micros(recon.body.total.computedUsd)).toBe(micros(recon.body.total.billedUsd));
  });

  it('a listed key’s settled day is the sum of its activity rows’ usage, exactly', async () => {
    const state = await org.state();
    const prod = (state.keys as any[]).find((k) => k.name === 'Production');
    const date = addDays(today(), -25);
    const rows = (await org.get(`/api/v1/activity?api_key_hash=${prod.id}&date=${date}`)).body.data as any[];
    const want = rows.reduce((s, r) => s + micros(r.usage), 0n);
    expect(want).toBeGreaterThan(0n);
    const key = await api(`/keys/${keyHash('openrouter', prod.id)}?from=${date}&to=${date}`, { token: user.token });
    expect(key.body.breakdown.daily[0]).toMatchObject({ date, settled: true });
    expect(micros(key.body.breakdown.daily[0].costUsd)).toBe(want);
  });

  it('today’s usage_daily is no model: not among a key’s models, a model-less group in /spend, an empty model in the CSV', async () => {
    const state = await org.state();
    const prod = (state.keys as any[]).find((k) => k.name === 'Production');
    const listed = (await org.get(`/api/v1/keys/${prod.id}`)).body.data;
    expect(listed.usage_daily).toBeGreaterThan(0);
    const key = await api(`/keys/${keyHash('openrouter', prod.id)}?from=${today()}&to=${today()}`, { token: user.token });
    expect(key.status).toBe(200);
    expect(micros(key.body.breakdown.daily[0].costUsd)).toBe(micros(listed.usage_daily));
    expect(key.body.breakdown.byModel).toEqual([]);
    expect(micros(key.body.breakdown.notByModelUsd)).toBe(micros(listed.usage_daily));

    const models = await api(`/spend?from=${today()}&to=${today()}&provider=openrouter&groupBy=model`, { token: user.token });
    expect(models.status).toBe(200);
    expect(models.body.groups).toEqual([expect.objectContaining({ provider: 'openrouter', model: null })]);
    expect(micros(models.body.groups[0].costUsd)).toBe(micros(models.body.total.costUsd));

    const csv = await api<string>(`/spend/export?from=${today()}&to=${today()}`, { token: user.token });
    const [cols, ...lines] = parseCsv(csv.body);
    const rows = lines.filter((l) => l[cols!.indexOf('provider')] === 'openrouter');
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r[cols!.indexOf('model')]).toBe('');
    expect(rows.reduce((s, r) => s + usdMicros(r[cols!.indexOf('cost_usd')]!), 0n)).toBe(micros(models.body.total.costUsd));
  });

  it('models OpenRouter bills in dollars raise no unpriced_model alert, and nothing counts as unpriced', async () => {
    const alerts = await api('/alerts?type=unpriced_model&limit=100', { token: user.token });
    expect(alerts.status).toBe(200);
    expect(alerts.body.items).toEqual([]);
    const spend = await api(`/spend?from=${importedFrom}&to=${today()}`, { token: user.token });
    expect((spend.body.coverage.notes as any[]).filter((n) => n.code === 'unpriced')).toEqual([]);
  });
});

describe('history a provider no longer holds', () => {
  it('a range reaching before the connection’s first importable day carries history_unavailable and is not complete', async () => {
    const from = addDays(importedFrom, -10);
    const res = await api(`/spend?from=${from}&to=${today()}`, { token: user.token });
    expect(res.status).toBe(200);
    const note = (res.body.coverage.notes as any[]).find((n) => n.code === 'history_unavailable');
    expect(note).toMatchObject({ provider: 'openrouter', from, to: addDays(importedFrom, -1), message: expect.stringContaining('OpenRouter') });
    expect(res.body.coverage.complete).toBe(false);
    // A range inside what could be imported says nothing of it.
    const inside = await api(`/spend?from=${importedFrom}&to=${today()}`, { token: user.token });
    expect((inside.body.coverage.notes as any[]).some((n) => n.code === 'history_unavailable')).toBe(false);
    // A range wholly before it: the whole range.
    const before = await api(`/spend?from=${addDays(importedFrom, -5)}&to=${addDays(importedFrom, -2)}&groupBy=provider`, { token: user.token });
    expect((before.body.coverage.notes as any[]).find((n) => n.code === 'history_unavailable')).toMatchObject({ from: addDays(importedFrom, -5), to: addDays(importedFrom, -2) });
    // The previous range of a comparison says which of its days are unknown (the Overview then claims no "nothing spent").
    const compared = await api(`/spend?from=${importedFrom}&to=${addDays(importedFrom, 4)}&compare=previous`, { token: user.token });
    expect(compared.body.previous).toMatchObject({ from: addDays(importedFrom, -5), to: addDays(importedFrom, -1) });
    expect(compared.body.previous.notes).toEqual([expect.objectContaining({ code: 'history_unavailable', provider: 'openrouter', from: addDays(importedFrom, -5), to: addDays(importedFrom, -1) })]);
    expect(compared.body.coverage.notes.some((n: any) => n.code === 'history_unavailable')).toBe(false);
  });
});
