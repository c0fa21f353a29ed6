/**
 * GET /spend against the running stack: every grouping, exact to the micro-dollar against an independent sum of
 * the same events (computed here from the events themselves, not from any aggregate), zero-filled days, ranges
 * across a month boundary (groupBy=key reads whole months and day edges) and up to 366 days.
 */
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, pointAtStack, registerUser, type RegisteredUser } from './harness.ts';
import { exportSpend } from '#shared/spend/export.ts';
import { parseCsv } from './csv.ts';

const DAY = 86_400_000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** Dollars from integer µ$ (exact through a decimal string, as the API prints them). */
const usd = (micros: bigint) => Number(`${micros / 1_000_000n}.${(micros % 1_000_000n).toString().padStart(6, '0')}`);

interface Ev {
  requestId: string;
  keyHash: string;
  provider: string;
  model: string;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  costUsd?: number;
  timestamp: string;
}

/** µ$ of an event, independently: its costUsd, or gpt-4o-mini's list price ($0.15 / $0.075 cached / $0.60 per 1M), half-up. */
function costOf(e: Ev): bigint {
  if (e.costUsd !== undefined) return BigInt(Math.round(e.costUsd * 1_000_000));
  const millionths = BigInt(e.inputTokens - e.cachedInputTokens) * 150_000n + BigInt(e.cachedInputTokens) * 75_000n + BigInt(e.outputTokens) * 600_000n;
  return (millionths + 500_000n) / 1_000_000n;
}

type Sum = { cost: bigint; requests: number; input: number; cached: number; output: number };
const zero = (): Sum => ({ cost: 0n, requests: 0, input: 0, cached: 0, output: 0 });
function sumBy(events: Ev[], id: (e: Ev) => string): Map<string, Sum> {
  const out = new Map<string, Sum>();
  for (const e of events) {
    const s = out.get(id(e)) ?? zero();
    s.cost += costOf(e);
    s.requests += 1;
    s.input += e.inputTokens;
    s.cached += e.cachedInputTokens;
    s.output += e.outputTokens;
    out.set(id(e), s);
  }
  return out;
}
const view = (s: Sum) => ({ costUsd: usd(s.cost), requests: s.requests, inputTokens: s.input, cachedInputTokens: s.cached, outputTokens: s.output });

let user: RegisteredUser;
let events: Ev[];
const keyHashes = Array.from({ length: 5 }, (_, i) => sha256(`spend-key-${i}-${randomUUID()}`));
const now = Date.now();
const today = isoDay(now);
// 30 days back: across a month boundary on most days of the year; the days between stay zero.
const activeDays = [0, 1, 2, 5, 9, 16, 23, 30].map((d) => now - d * DAY);

async function get(path: string) {
  const res = await api(path, { token: user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

beforeAll(async () => {
  user = await registerUser();
  const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key as string;
  events = [];
  let n = 0;
  for (const at of activeDays) {
    for (const [k, keyHash] of keyHashes.entries()) {
      for (const model of ['gpt-4o-mini', 'claude-x', 'mistral-y'].slice(0, 1 + (k % 3))) {
        n += 1;
        const priced = model === 'gpt-4o-mini';
        events.push({
          requestId: randomUUID(),
          keyHash,
          provider: model === 'claude-x' ? 'anthropic' : model === 'mistral-y' ? 'mistral' : 'openai',
          model,
          inputTokens: 1000 + n * 37,
          cachedInputTokens: n * 7,
          outputTokens: 500 + n * 11,
          // odd micro-dollar amounts, and one big one: sums must stay exact
          ...(priced ? {} : { costUsd: k === 4 && at === activeDays[0] ? 123_456_789.123457 : Number(`0.${String(n * 7919).padStart(6, '0')}`) }),
          timestamp: new Date(Math.min(at, now - 60_000)).toISOString(),
        });
      }
    }
  }
  for (let i = 0; i < events.length; i += 40) {
    const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: events.slice(i, i + 40) } });
    expect(res.status).toBe(200);
    expect(res.body.accepted, JSON.stringify(res.body)).toBe(events.slice(i, i + 40).length);
  }
});

const inRange = (from: string, to: string) => events.filter((e) => e.timestamp.slice(0, 10) >= from && e.timestamp.slice(0, 10) <= to);

describe('GET /spend', () => {
  const ranges = () => [
    { from: isoDay(now - 30 * DAY), to: today },
    { from: isoDay(now - 20 * DAY), to: isoDay(now - 2 * DAY) },
    { from: isoDay(now - 365 * DAY), to: today },
    { from: `${today.slice(0, 7)}-01`, to: today },
  ];

  it('groupBy=day: every day of the range, zeros included, exact', async () => {
    for (const { from, to } of ranges()) {
      const body = await get(`/spend?from=${from}&to=${to}&groupBy=day`);
      const expected = sumBy(inRange(from, to), (e) => e.timestamp.slice(0, 10));
      const days = (Date.parse(to) - Date.parse(from)) / DAY + 1;
      expect(body.groups).toHaveLength(days);
      expect(body.groups[0].date).toBe(from);
      expect(body.groups.at(-1).date).toBe(to);
      // Events are an estimate from tokens: no connection's bill settles their days.
      for (const g of body.groups) expect(g).toEqual({ date: g.date, settled: false, ...view(expected.get(g.date) ?? zero()) });
      expect(body.total).toEqual(view(sumBy(inRange(from, to), () => 'all').get('all') ?? zero()));
    }
  });

  it('groupBy=model and provider: most cost first, exact', async () => {
    for (const { from, to } of ranges()) {
      const byModel = sumBy(inRange(from, to), (e) => `${e.provider}|${e.model}`);
      const m = await get(`/spend?from=${from}&to=${to}&groupBy=model`);
      expect(m.groups).toEqual(
        [...byModel].sort((a, b) => (b[1].cost > a[1].cost ? 1 : -1)).map(([id, s]) => ({ provider: id.split('|')[0], model: id.split('|')[1], ...view(s) })),
      );
      const byProvider = sumBy(inRange(from, to), (e) => e.provider);
      const p = await get(`/spend?from=${from}&to=${to}&groupBy=provider`);
      expect(p.groups).toEqual([...byProvider].sort((a, b) => (b[1].cost > a[1].cost ? 1 : -1)).map(([provider, s]) => ({ provider, ...view(s) })));
      expect(m.total).toEqual(p.total);
    }
  });

  it('groupBy=key: the keys of the range, most cost first, with label and hint; whole months and day edges agree', async () => {
    await api(`/keys/${keyHashes[1]}`, { method: 'PATCH', token: user.token, body: { label: 'batch jobs' } });
    for (const { from, to } of ranges()) {
      const byKey = sumBy(inRange(from, to), (e) => e.keyHash);
      const k = await get(`/spend?from=${from}&to=${to}&groupBy=key`);
      expect(k.groups).toEqual(
        [...byKey]
          .sort((a, b) => (b[1].cost > a[1].cost ? 1 : -1))
          .map(([hash, s]) => ({ hash, label: hash === keyHashes[1] ? 'batch jobs' : null, name: null, hint: null, provider: expect.any(String), ...view(s) })),
      );
      expect(k.total).toEqual(view(sumBy(inRange(from, to), () => 'all').get('all') ?? zero()));
      // The key's provider: the one of its first event (keys here use one to three providers).
      for (const g of k.groups) expect(events.filter((e) => e.keyHash === g.hash).map((e) => e.provider)).toContain(g.provider);
    }
  });

  it('defaults to the current month by day, with a forecast; a past range has none', async () => {
    const body = await get('/spend');
    expect(body).toMatchObject({ from: `${today.slice(0, 7)}-01`, to: today, groupBy: 'day' });
    expect(body.forecast).toEqual({ monthEnd: expect.any(Number), method: 'trailing-7-day-average' });
    expect(body.forecast.monthEnd).toBeGreaterThanOrEqual(body.total.costUsd);
    const lastMonthEnd = isoDay(Date.parse(`${today.slice(0, 7)}-01`) - DAY);
    expect((await get(`/spend?from=${lastMonthEnd}&to=${lastMonthEnd}`)).forecast).toBeNull();
  });

  it('refuses bad ranges and groupings with a 400 naming the field', async () => {
    for (const query of ['groupBy=week', 'from=2026-02-30', `from=2020-01-01&to=2021-12-31`, 'to=2000-01-01&from=2000-01-02', 'extra=1']) {
      const res = await api(`/spend?${query}`, { token: user.token });
      expect(res.status, query).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
  });
});

describe('forecasts', () => {
  const daysLeft = (() => {
    const d = new Date(now);
    return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate() - d.getUTCDate();
  })();

  it.skipIf(daysLeft === 0)(
    'keys, budgets and /spend carry the same forecast; budget_forecast fires exactly once under 20 concurrent ingests',
    async () => {
      const owner = await registerUser();
      const ingestKey = (await api('/ingest-keys', { method: 'POST', token: owner.token, body: {} })).body.key as string;
      const hash = sha256(`forecast-${randomUUID()}`);
      const ev = (at: number, costUsd: number) => ({
        requestId: randomUUID(),
        keyHash: hash,
        provider: 'openai',
        model: 'gpt-4o',
        inputTokens: 1,
        outputTokens: 1,
        costUsd,
        timestamp: new Date(at).toISOString(),
      });
      // $10 on each of the 7 complete days before today, and on the 8th (which must not count)
      const past = Array.from({ length: 8 }, (_, i) => ev(Date.parse(`${isoDay(now - (i + 1) * DAY)}T12:00:00.000Z`), 10));
      expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: past } })).body.accepted).toBe(8);
      const monthStart = `${today.slice(0, 7)}-01`;
      const mtd = past.filter((e) => e.timestamp.slice(0, 10) >= monthStart).length * 10;
      const forecast = mtd + 10 * daysLeft;

      const read = async (path: string) => (await api(path, { token: owner.token })).body;
      expect((await read(`/keys/${hash}`)).spend.forecastMonthEnd).toBe(forecast);
      expect((await read('/spend')).forecast).toEqual({ monthEnd: forecast, method: 'trailing-7-day-average' });

      // A budget of exactly the forecast plus $0.15: not reached yet; 20 concurrent $0.01 ingests take the forecast past it.
      const limit = forecast + 0.15;
      const created = await api('/budgets', {
        method: 'POST',
        token: owner.token,
        body: { monthlyLimit: limit, alertThreshold: 100, scope: 'ACCOUNT', alertOnForecast: true },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ alertOnForecast: true, forecast: { monthEnd: forecast, percentOfLimit: Math.round((forecast / limit) * 10_000) / 100 } });
      const results = await Promise.all(
        Array.from({ length: 20 }, () => api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [ev(now - 1000, 0.01)] } })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      const alerts = (await read('/alerts')).items as { type: string; observedSpend: number; threshold: number; budgetId: string }[];
      const fired = alerts.filter((a) => a.type === 'budget_forecast');
      expect(fired).toHaveLength(1);
      expect(fired[0]).toMatchObject({ budgetId: created.body.id, threshold: limit });
      expect(fired[0]!.observedSpend).toBeGreaterThanOrEqual(limit);
      expect(alerts.filter((a) => a.type === 'budget_exceeded')).toEqual([]);
      const budget = (await read('/budgets')).items[0];
      expect(budget.forecast.monthEnd).toBe(Math.round((forecast + 0.2) * 100) / 100);
      expect(budget.spend.monthToDate).toBe(Math.round((mtd + 0.2) * 100) / 100);
    },
  );
});

describe('GET /spend/export', () => {
  it('answers text/csv: the header, one row per key × day × model, days ascending, exact, formula-like labels neutralised', async () => {
    await api(`/keys/${keyHashes[0]}`, { method: 'PATCH', token: user.token, body: { label: '=HYPERLINK("http://evil","click"), me' } });
    const from = isoDay(now - 30 * DAY);
    const res = await api(`/spend/export?from=${from}&to=${today}`, { token: user.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="burnrate-spend-${from}-to-${today}.csv"`);
    const text = res.body as string;
    expect(text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual(['date', 'key_hash', 'key_label', 'key_name', 'project_id', 'project_name', 'settled', 'correction', 'tags', 'provider', 'model', 'requests', 'input_tokens', 'cached_input_tokens', 'output_tokens', 'cost_usd']);
    const expected = sumBy(inRange(from, today), (e) => [e.timestamp.slice(0, 10), e.keyHash, e.provider, e.model].join('|'));
    expect(rows).toHaveLength(expected.size);
    expect(rows.map((r) => r[0])).toEqual(rows.map((r) => r[0]).sort());
    for (const r of rows) {
      const s = expected.get([r[0], r[1], r[9], r[10]].join('|'))!;
      expect(s, r.join(',')).toBeDefined();
      const micros = s.cost;
      // Keys sent in events: no provider name, no project; estimates (not settled), no correction, no tags.
      expect(r.slice(3, 9)).toEqual(['', '', '', 'false', 'false', '{}']);
      expect(r.slice(11)).toEqual([String(s.requests), String(s.input), String(s.cached), String(s.output), `${micros / 1_000_000n}.${(micros % 1_000_000n).toString().padStart(6, '0')}`]);
      const label = r[1] === keyHashes[0] ? `'=HYPERLINK("http://evil","click"), me` : r[1] === keyHashes[1] ? 'batch jobs' : '';
      expect(r[2]).toBe(label);
    }
  });

  it("a spreadsheet that splits on ';' runs no formula: x;=cmd|' /c calc'!a0 is quoted and its = neutralised", async () => {
    const payload = "x;=cmd|' /c calc'!a0";
    await api(`/keys/${keyHashes[1]}`, { method: 'PATCH', token: user.token, body: { label: payload } });
    try {
      const res = await api(`/spend/export?from=${isoDay(now - 30 * DAY)}&to=${today}`, { token: user.token });
      expect(res.status).toBe(200);
      const lines = (res.body as string).split('\r\n').filter((line) => line.split(',')[1] === keyHashes[1]);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line.split(',')[2]).toBe(`"x;'=cmd|' /c calc'!a0"`);
        // Split as such a spreadsheet would (on ';', quotes ignored): no cell starts a formula.
        for (const cell of line.split(';')) expect(cell.replace(/^"/, '')).not.toMatch(/^[=+\-@]/);
      }
      // An RFC 4180 reader still reads the label as typed, behind its one apostrophe.
      const label = parseCsv(res.body as string).find((r) => r[1] === keyHashes[1])![2];
      expect(label).toBe("x;'=cmd|' /c calc'!a0");
    } finally {
      await api(`/keys/${keyHashes[1]}`, { method: 'PATCH', token: user.token, body: { label: 'batch jobs' } });
    }
  });

  it('past 92 days or 25,000 rows: 400 /problems/export-too-large saying how to narrow it', async () => {
    const res = await api(`/spend/export?from=${isoDay(now - 92 * DAY)}&to=${today}`, { token: user.token });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: expect.stringContaining('/problems/export-too-large'), detail: expect.stringMatching(/92.*POST \/spend\/exports/) });
    expect((await api(`/spend/export?from=${isoDay(now - 91 * DAY)}&to=${today}`, { token: user.token })).status).toBe(200);
    // The row limit, reached with a lower limit against the same stored rows (25,001 real rows would only slow the suite).
    const undo = pointAtStack();
    try {
      const from = isoDay(now - 30 * DAY);
      const rows = sumBy(inRange(from, today), (e) => [e.timestamp.slice(0, 10), e.keyHash, e.provider, e.model].join('|')).size;
      await expect(exportSpend(user.accountId, { from, to: today }, new Date(now), rows - 1)).rejects.toMatchObject({
        status: 400,
        slug: 'export-too-large',
        detail: expect.stringMatching(/fewer days.*POST \/spend\/exports/),
      });
      expect((await exportSpend(user.accountId, { from, to: today }, new Date(now), rows)).csv.split('\r\n')).toHaveLength(rows + 2);
      // One day alone past the limit: fewer days can't help; the detail names the asynchronous export only.
      const todays = sumBy(inRange(today, today), (e) => [e.keyHash, e.provider, e.model].join('|')).size;
      expect(todays).toBeGreaterThan(1);
      const oneDay = await exportSpend(user.accountId, { from: today, to: today }, new Date(now), todays - 1).catch((error: unknown) => error);
      expect(oneDay).toMatchObject({ status: 400, slug: 'export-too-large', detail: expect.stringContaining('POST /spend/exports') });
      expect((oneDay as { detail: string }).detail).not.toMatch(/fewer days/);
    } finally {
      undo();
    }
  });
});
