/**
 * Reading at any scale (docs/features/spend-and-exports.md, issue 18), against the running stack:
 * - GET /keys: search (label, hint, hash prefix), filters, every sort in both orders, paging across pages with no key
 *   shown twice or missed, `total`, cursors bound to their sort;
 * - GET /spend: provider / model / keyHash filters and compare=previous, against sums computed here from the events;
 * - GET /alerts: type / keyHash filters, exact `counts`; POST /alerts/acknowledge in bulk under 20-way concurrency.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { api, dynamo, pointAtStack, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';
import { fireAlert } from '#shared/db/alerts.ts';
import { keys } from '#shared/db/keys.ts';
import { newId } from '#shared/ids.ts';
import type { Alert, AlertType } from '#shared/alerting/model.ts';

const DAY = 86_400_000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const micros = (usd: number) => BigInt(Math.round(usd * 1_000_000));
/** Dollars from integer µ$ (exact through a decimal string, as the API prints them). */
const usd = (m: bigint) => Number(`${m / 1_000_000n}.${(m % 1_000_000n).toString().padStart(6, '0')}`);

let restoreEnv: (() => void) | undefined;
beforeAll(() => {
  // fireAlert (the one producer of alerts) is called from this process to make alerts by the hundred.
  restoreEnv = pointAtStack();
});
afterAll(() => restoreEnv?.());

async function get(path: string, token: string) {
  const res = await api(path, { token });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

async function tenant(): Promise<{ user: RegisteredUser; ingestKey: string }> {
  const user = await registerUser();
  await setPlan(user.accountId, 'SCALE');
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: {} });
  return { user, ingestKey: res.body.key as string };
}

async function ingest(ingestKey: string, events: unknown[]) {
  for (let i = 0; i < events.length; i += 1000) {
    const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: events.slice(i, i + 1000) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.rejected).toEqual([]);
  }
}

// ---- keys ------------------------------------------------------------------------------------------------------

describe('GET /keys: search, filters, sort and paging across the whole account', () => {
  const KEYS = 64;
  let token: string;
  const hashes = Array.from({ length: KEYS }, (_, i) => sha256(`scale-key-${i}-${randomUUID()}`));
  const now = Date.now();

  beforeAll(async () => {
    const t = await tenant();
    token = t.user.token;
    const events = hashes.flatMap((keyHash, i) => {
      // Spend differs by key and by day (today, 3 days ago, 20 days ago), with ties on purpose (i % 5 === 0 spend
      // alike).
      const base = i % 5 === 0 ? 1 : 1 + ((i * 37) % 23);
      const at = (daysAgo: number, minutes = 0) => new Date(now - daysAgo * DAY - minutes * 60_000).toISOString();
      const ev = (costUsd: number, timestamp: string) => ({
        requestId: randomUUID(),
        keyHash,
        keyHint: `sk-...${String(i).padStart(4, '0')}`,
        provider: i % 3 === 0 ? 'anthropic' : 'openai',
        model: i % 3 === 0 ? 'claude-sonnet-4' : 'gpt-4o',
        inputTokens: 10,
        outputTokens: 10,
        costUsd,
        timestamp,
      });
      return [
        ...(i % 4 !== 1 ? [ev(Number((base * 0.01).toFixed(2)), at(0, i))] : []),
        ...(i % 2 === 0 ? [ev(Number((base * 0.1).toFixed(1)), at(3))] : []),
        ev(((i * 13) % 17) + 0.5, at(20)),
      ];
    });
    await ingest(t.ingestKey, events);
    // Labels on every third key (mixed case, so the name sort and the search are checked case-insensitively).
    await Promise.all(
      hashes.map((hash, i) =>
        i % 3 === 1 ? api(`/keys/${hash}`, { method: 'PATCH', token, body: { label: `${i % 2 ? 'Team' : 'team'} Alpha ${i}` } }) : undefined,
      ),
    );
  }, 120_000);

  /** Every page of a listing, following nextCursor. */
  async function all(query: string, limit = 9) {
    const items: Record<string, any>[] = [];
    let cursor: string | null = null;
    let totals = new Set<number>();
    do {
      const page: any = await get(`/keys?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
      expect(page.items.length).toBeLessThanOrEqual(limit);
      items.push(...page.items);
      totals.add(page.total);
      cursor = page.nextCursor;
    } while (cursor);
    expect(totals.size).toBe(1);
    return { items, total: [...totals][0]! };
  }

  const sortValue: Record<string, (k: any) => number | string> = {
    monthToDate: (k) => k.spend.monthToDate,
    today: (k) => k.spend.today,
    total: (k) => k.spend.total,
    forecastMonthEnd: (k) => k.spend.forecastMonthEnd,
    lastSeenAt: (k) => k.lastSeenAt,
    name: (k) => (k.label ?? k.hint ?? k.hash).toLowerCase(),
  };

  for (const sort of Object.keys(sortValue)) {
    for (const order of ['asc', 'desc'] as const) {
      it(`sort=${sort}&order=${order}: every key once, in that order across pages, ties by hash`, async () => {
        const { items, total } = await all(`sort=${sort}&order=${order}`);
        expect(total).toBe(KEYS);
        expect(items).toHaveLength(KEYS);
        expect(new Set(items.map((k) => k.hash))).toEqual(new Set(hashes));
        const value = sortValue[sort]!;
        for (let i = 1; i < items.length; i++) {
          const [a, b] = [value(items[i - 1]), value(items[i])];
          const inOrder = order === 'asc' ? a < b : a > b;
          expect(inOrder || (a === b && items[i - 1]!.hash < items[i]!.hash), `${sort} ${order} at ${i}: ${a} then ${b}`).toBe(true);
        }
      });
    }
  }

  it('defaults: most month-to-date spend first; name sorts ascending unless told', async () => {
    const first = await get('/keys?limit=100', token);
    const explicit = await get('/keys?limit=100&sort=monthToDate&order=desc', token);
    expect(first.items.map((k: any) => k.hash)).toEqual(explicit.items.map((k: any) => k.hash));
    expect(first.total).toBe(KEYS);
    expect(first.items.every((k: any) => k.source === 'ingest')).toBe(true);
    const byName = await get('/keys?limit=100&sort=name', token);
    const asc = await get('/keys?limit=100&sort=name&order=asc', token);
    expect(byName.items.map((k: any) => k.hash)).toEqual(asc.items.map((k: any) => k.hash));
  });

  it('q finds a part of a label in any case, a part of a hint, the start of a hash; total counts every match', async () => {
    const alpha = await all('q=ALPHA');
    const labelled = hashes.filter((_, i) => i % 3 === 1);
    expect(new Set(alpha.items.map((k) => k.hash))).toEqual(new Set(labelled));
    expect(alpha.total).toBe(labelled.length);

    const one = await get(`/keys?q=${encodeURIComponent('alpha 37')}`, token);
    expect(one.items.map((k: any) => k.hash)).toEqual([hashes[37]]);
    expect(one.total).toBe(1);

    const hinted = await get('/keys?q=0042', token);
    expect(hinted.items.map((k: any) => k.hash)).toEqual([hashes[42]]);

    const prefix = await get(`/keys?q=${hashes[11]!.slice(0, 10).toUpperCase()}`, token);
    expect(prefix.items.map((k: any) => k.hash)).toContain(hashes[11]);
    expect(prefix.items.every((k: any) => k.hash.startsWith(hashes[11]!.slice(0, 10)))).toBe(true);

    // The middle of a hash is not a match (only its start is).
    const middle = await get(`/keys?q=${hashes[11]!.slice(20, 40)}`, token);
    expect(middle.items.map((k: any) => k.hash)).not.toContain(hashes[11]);

    const none = await get('/keys?q=no-such-key-anywhere', token);
    expect(none).toEqual({ items: [], nextCursor: null, total: 0 });
  });

  it('provider and source filter, with q and paging together', async () => {
    const anthropic = await all('provider=Anthropic&sort=total', 5);
    const expected = hashes.filter((_, i) => i % 3 === 0);
    expect(new Set(anthropic.items.map((k) => k.hash))).toEqual(new Set(expected));
    expect(anthropic.total).toBe(expected.length);
    expect(anthropic.items.every((k) => k.provider === 'anthropic')).toBe(true);

    const both = await all('provider=openai&q=alpha', 3);
    const labelledOpenai = hashes.filter((_, i) => i % 3 === 1);
    expect(new Set(both.items.map((k) => k.hash))).toEqual(new Set(labelledOpenai));

    expect((await get('/keys?source=ingest', token)).total).toBe(KEYS);
    expect(await get('/keys?source=connection', token)).toEqual({ items: [], nextCursor: null, total: 0 });
  });

  it('a cursor belongs to its sort and order: another sort’s, or a tampered one, is a 400', async () => {
    const page = await get('/keys?sort=today&limit=5', token);
    expect(page.nextCursor).toEqual(expect.any(String));
    for (const other of ['sort=total', 'sort=today&order=asc', 'sort=name']) {
      const res = await api(`/keys?${other}&limit=5&cursor=${encodeURIComponent(page.nextCursor)}`, { token });
      expect(res.status, other).toBe(400);
    }
    // A signature changed in its first character (its last base64url characters carry bits the decoder may ignore:
    // replacing them with 'AA' left the signature unchanged about one time in 256).
    const [data, mac] = (page.nextCursor as string).split('.') as [string, string];
    const tampered = `${data}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect((await api(`/keys?sort=today&limit=5&cursor=${encodeURIComponent(tampered)}`, { token })).status).toBe(400);
  });

  it('refuses what it cannot read: q empty or over 100 characters, an unknown sort, order or source', async () => {
    for (const query of ['q=', `q=${'a'.repeat(101)}`, 'sort=cost', 'order=up', 'source=proxy']) {
      const res = await api(`/keys?${query}`, { token });
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].path, query).toMatch(/^query\./);
    }
  });
});

// ---- spend -----------------------------------------------------------------------------------------------------

describe('GET /spend: provider, model and keyHash filters; compare=previous', () => {
  let token: string;
  interface Ev {
    keyHash: string;
    provider: string;
    model: string;
    costUsd: number;
    inputTokens: number;
    date: string;
  }
  const events: Ev[] = [];
  const keyHashes = Array.from({ length: 4 }, (_, i) => sha256(`spend-filter-${i}-${randomUUID()}`));
  const now = Date.now();
  const today = isoDay(now);
  const MODELS = [
    ['openai', 'gpt-4o'],
    ['openai', 'gpt-4o-mini'],
    ['anthropic', 'claude-sonnet-4'],
  ] as const;

  beforeAll(async () => {
    const t = await tenant();
    token = t.user.token;
    const sent = [];
    for (let d = 0; d <= 34; d += 1) {
      for (const [k, keyHash] of keyHashes.entries()) {
        if ((d + k) % 3 === 2) continue;
        const [provider, model] = MODELS[(d + k) % MODELS.length]!;
        const costUsd = Number((0.013 * (k + 1) + 0.0007 * d).toFixed(6));
        const at = new Date(now - d * DAY - 60_000).toISOString();
        events.push({ keyHash, provider, model, costUsd, inputTokens: 100 + d, date: at.slice(0, 10) });
        sent.push({ requestId: randomUUID(), keyHash, provider, model, inputTokens: 100 + d, outputTokens: 5, costUsd, timestamp: at });
      }
    }
    await ingest(t.ingestKey, sent);
  }, 60_000);

  const sum = (pick: (e: Ev) => boolean, from: string, to: string) => {
    const chosen = events.filter((e) => pick(e) && e.date >= from && e.date <= to);
    return { cost: usd(chosen.reduce((s, e) => s + micros(e.costUsd), 0n)), requests: chosen.length, inputTokens: chosen.reduce((s, e) => s + e.inputTokens, 0) };
  };
  const from = isoDay(now - 20 * DAY);

  it('provider: every grouping sums that provider only', async () => {
    const pick = (e: Ev) => e.provider === 'openai';
    const want = sum(pick, from, today);
    for (const groupBy of ['day', 'model', 'provider', 'key']) {
      const body = await get(`/spend?from=${from}&to=${today}&groupBy=${groupBy}&provider=OpenAI`, token);
      expect(body.total, groupBy).toMatchObject({ costUsd: want.cost, requests: want.requests, inputTokens: want.inputTokens });
      const groupsCost = body.groups.reduce((s: bigint, g: any) => s + micros(g.costUsd), 0n);
      expect(usd(groupsCost), groupBy).toBe(want.cost);
    }
    const byProvider = await get(`/spend?from=${from}&to=${today}&groupBy=provider&provider=openai`, token);
    expect(byProvider.groups.map((g: any) => g.provider)).toEqual(['openai']);
    const byKey = await get(`/spend?from=${from}&to=${today}&groupBy=key&provider=openai`, token);
    for (const g of byKey.groups) expect(g.costUsd).toBe(sum((e) => pick(e) && e.keyHash === g.hash, from, today).cost);
  });

  it('model (with provider): every grouping sums that model only; model alone is a 400', async () => {
    const pick = (e: Ev) => e.provider === 'openai' && e.model === 'gpt-4o-mini';
    const want = sum(pick, from, today);
    for (const groupBy of ['day', 'model', 'provider', 'key']) {
      const body = await get(`/spend?from=${from}&to=${today}&groupBy=${groupBy}&provider=openai&model=gpt-4o-mini`, token);
      expect(body.total, groupBy).toMatchObject({ costUsd: want.cost, requests: want.requests });
    }
    const byKey = await get(`/spend?from=${from}&to=${today}&groupBy=key&provider=openai&model=gpt-4o-mini`, token);
    for (const g of byKey.groups) expect(g.costUsd).toBe(sum((e) => pick(e) && e.keyHash === g.hash, from, today).cost);
    const res = await api(`/spend?model=gpt-4o-mini`, { token });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe('query.model');
  });

  it('keyHash: the key’s own spend, by day, model, provider and as its one key group; with provider too', async () => {
    const hash = keyHashes[2]!;
    const want = sum((e) => e.keyHash === hash, from, today);
    for (const groupBy of ['day', 'model', 'provider', 'key']) {
      const body = await get(`/spend?from=${from}&to=${today}&groupBy=${groupBy}&keyHash=${hash}`, token);
      expect(body.total, groupBy).toMatchObject({ costUsd: want.cost, requests: want.requests });
    }
    const asKey = await get(`/spend?from=${from}&to=${today}&groupBy=key&keyHash=${hash}`, token);
    expect(asKey.groups.map((g: any) => g.hash)).toEqual([hash]);
    const days = await get(`/spend?from=${from}&to=${today}&groupBy=day&keyHash=${hash}`, token);
    for (const g of days.groups) expect(g.costUsd, g.date).toBe(sum((e) => e.keyHash === hash && e.date === g.date, g.date, g.date).cost);
    const narrowed = await get(`/spend?from=${from}&to=${today}&keyHash=${hash}&provider=anthropic`, token);
    expect(narrowed.total.costUsd).toBe(sum((e) => e.keyHash === hash && e.provider === 'anthropic', from, today).cost);
    // The forecast of a filtered view is its own: this key's month to date at least.
    expect(narrowed.forecast.monthEnd).toBeGreaterThanOrEqual(sum((e) => e.keyHash === hash && e.provider === 'anthropic', `${today.slice(0, 7)}-01`, today).cost);
  });

  it('compare=previous: the same length just before, filtered alike', async () => {
    const f = isoDay(now - 9 * DAY);
    const body = await get(`/spend?from=${f}&to=${today}&compare=previous&provider=anthropic`, token);
    const prevFrom = isoDay(now - 19 * DAY);
    const prevTo = isoDay(now - 10 * DAY);
    expect(body.previous.from).toBe(prevFrom);
    expect(body.previous.to).toBe(prevTo);
    const want = sum((e) => e.provider === 'anthropic', prevFrom, prevTo);
    expect(body.previous.total).toMatchObject({ costUsd: want.cost, requests: want.requests, inputTokens: want.inputTokens });
    expect(body.total.costUsd).toBe(sum((e) => e.provider === 'anthropic', f, today).cost);

    const whole = await get(`/spend?from=${f}&to=${today}&compare=previous&groupBy=key`, token);
    expect(whole.previous.total.costUsd).toBe(sum(() => true, prevFrom, prevTo).cost);
    // Without compare: no `previous`.
    expect((await get(`/spend?from=${f}&to=${today}`, token)).previous).toBeUndefined();
  });

  it('compare=previous of a month to date: the same days of the previous month', async () => {
    const first = `${today.slice(0, 7)}-01`;
    const body = await get(`/spend?from=${first}&to=${today}&compare=previous`, token);
    const prevMonthFirst = isoDay(Date.UTC(Number(today.slice(0, 4)), Number(today.slice(5, 7)) - 2, 1));
    const prevLength = new Date(Date.UTC(Number(today.slice(0, 4)), Number(today.slice(5, 7)) - 1, 0)).getUTCDate();
    const lastDay = Math.min(Number(today.slice(8, 10)), prevLength);
    const prevTo = `${prevMonthFirst.slice(0, 8)}${String(lastDay).padStart(2, '0')}`;
    expect(body.previous.from).toBe(prevMonthFirst);
    expect(body.previous.to).toBe(prevTo);
    expect(body.previous.total.costUsd).toBe(sum(() => true, prevMonthFirst, prevTo).cost);
    expect(body.total.costUsd).toBe(sum(() => true, first, today).cost);
  });

  it('refuses an unknown compare and a malformed keyHash', async () => {
    for (const query of ['compare=last', 'keyHash=abc', 'provider=']) {
      expect((await api(`/spend?${query}`, { token })).status, query).toBe(400);
    }
  });
});

// ---- alerts ----------------------------------------------------------------------------------------------------

function alertOf(accountId: string, type: AlertType, keyHashes: string[], index: number): Alert {
  return {
    id: newId('alert'),
    accountId,
    type,
    status: 'triggered',
    ruleId: null,
    budgetId: null,
    keyHash: keyHashes[0] ?? null,
    keyHashes,
    title: `Alert ${index}`,
    message: `Alert ${index} of the bulk test.`,
    period: isoDay(Date.now()),
    thresholdMicros: null,
    observedMicros: null,
    deliveries: [],
    triggeredAt: new Date().toISOString(),
    acknowledgedAt: null,
    acknowledgedBy: null,
  };
}

/** `n` alerts through the one producer (fireAlert), of the types and keys given round-robin. */
async function makeAlerts(accountId: string, n: number, types: AlertType[], keyHashSets: string[][]): Promise<Alert[]> {
  const made = Array.from({ length: n }, (_, i) => alertOf(accountId, types[i % types.length]!, keyHashSets[i % keyHashSets.length]!, i));
  for (let i = 0; i < made.length; i += 25) {
    const created = await Promise.all(made.slice(i, i + 25).map((a) => fireAlert(a, { source: 'scale-test', level: a.type, period: a.id })));
    expect(created.every(Boolean)).toBe(true);
  }
  return made;
}

describe('GET /alerts filters and counts; POST /alerts/acknowledge', () => {
  const [keyA, keyB, keyC] = Array.from({ length: 3 }, (_, i) => sha256(`alert-key-${i}-${randomUUID()}`));

  async function pages(token: string, query: string, limit = 20) {
    const items: Record<string, any>[] = [];
    let cursor: string | null = null;
    let counts;
    do {
      const page: any = await get(`/alerts?limit=${limit}${query ? `&${query}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
      items.push(...page.items);
      counts = page.counts;
      cursor = page.nextCursor;
    } while (cursor);
    return { items, counts };
  }

  it('filters by type and by key (keyHash or among keyHashes), every page, with exact counts', async () => {
    const user = await registerUser();
    const made = await makeAlerts(user.accountId, 60, ['budget_threshold', 'cost_threshold', 'new_key'], [[keyA!], [keyB!, keyA!], [], [keyC!]]);
    const everything = await pages(user.token, '');
    expect(everything.items).toHaveLength(60);
    expect(everything.counts).toEqual({ triggered: 60, acknowledged: 0 });

    const thresholds = await pages(user.token, 'type=budget_threshold', 7);
    expect(new Set(thresholds.items.map((a) => a.id))).toEqual(new Set(made.filter((a) => a.type === 'budget_threshold').map((a) => a.id)));
    expect(thresholds.items).toHaveLength(20);
    // Counts are the account's, whatever the filter.
    expect(thresholds.counts).toEqual({ triggered: 60, acknowledged: 0 });

    const aboutA = await pages(user.token, `keyHash=${keyA}`, 6);
    const expectedA = made.filter((a) => a.keyHashes.includes(keyA!)).map((a) => a.id);
    expect(aboutA.items.map((a) => a.id).sort()).toEqual(expectedA.sort());
    // Newest first across pages.
    expect(aboutA.items.map((a) => a.id)).toEqual([...aboutA.items.map((a) => a.id)].sort().reverse());

    const both = await pages(user.token, `type=new_key&keyHash=${keyC}&status=triggered`, 4);
    expect(both.items.map((a) => a.id).sort()).toEqual(made.filter((a) => a.type === 'new_key' && a.keyHashes.includes(keyC!)).map((a) => a.id).sort());

    for (const query of ['type=bogus', 'keyHash=XYZ']) expect((await api(`/alerts?${query}`, { token: user.token })).status, query).toBe(400);
  });

  it('20 concurrent bulk acknowledges of all 150 alerts: each acknowledged once, counts exact', async () => {
    const user = await registerUser();
    const made = await makeAlerts(user.accountId, 150, ['budget_threshold', 'spend_spike'], [[keyA!], [keyB!]]);
    expect((await get('/alerts?limit=1', user.token)).counts).toEqual({ triggered: 150, acknowledged: 0 });

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => api('/alerts/acknowledge', { method: 'POST', token: user.token, body: { all: true } })),
    );
    for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(answers.reduce((s, res) => s + res.body.acknowledged, 0)).toBe(150);

    const after = await pages(user.token, '', 100);
    expect(after.items).toHaveLength(150);
    expect(after.items.every((a) => a.status === 'acknowledged' && a.acknowledgedBy === user.userId)).toBe(true);
    expect(after.counts).toEqual({ triggered: 0, acknowledged: 150 });
    expect(new Set(after.items.map((a) => a.id))).toEqual(new Set(made.map((a) => a.id)));
    // Again: nothing left to acknowledge.
    expect((await api('/alerts/acknowledge', { method: 'POST', token: user.token, body: { all: true } })).body).toEqual({ acknowledged: 0 });
  });

  it('20 concurrent requests of overlapping ids, filtered "all" and single acknowledges: counts never drift', async () => {
    const user = await registerUser();
    const made = await makeAlerts(user.accountId, 120, ['budget_threshold', 'cost_threshold', 'plan_limit'], [[keyA!], [keyB!], []]);
    const ids = made.map((a) => a.id);
    const requests = Array.from({ length: 20 }, (_, r) => {
      if (r % 5 === 0) return api('/alerts/acknowledge', { method: 'POST', token: user.token, body: { all: true, type: 'cost_threshold' } });
      if (r % 5 === 1) return api('/alerts/acknowledge', { method: 'POST', token: user.token, body: { all: true, keyHash: keyB } });
      if (r % 5 === 2) return api(`/alerts/${ids[r]}/acknowledge`, { method: 'PATCH', token: user.token });
      // Overlapping windows of 60 ids.
      return api('/alerts/acknowledge', { method: 'POST', token: user.token, body: { ids: ids.slice((r * 7) % 60, ((r * 7) % 60) + 60) } });
    });
    const answers = await Promise.all(requests);
    for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(200);

    const after = await pages(user.token, '', 100);
    const acknowledged = after.items.filter((a) => a.status === 'acknowledged').length;
    expect(after.counts).toEqual({ triggered: 120 - acknowledged, acknowledged });
    // Every bulk answer's count, plus the single ones that acknowledged (a triggered one), is the number acknowledged.
    const bulk = answers.filter((_, r) => r % 5 !== 2).reduce((s, res) => s + res.body.acknowledged, 0);
    expect(bulk).toBeLessThanOrEqual(acknowledged);
    expect(acknowledged - bulk).toBeLessThanOrEqual(answers.filter((_, r) => r % 5 === 2).length);
    // The filtered "all" requests left nothing of theirs triggered.
    expect(after.items.filter((a) => a.status === 'triggered' && (a.type === 'cost_threshold' || a.keyHashes.includes(keyB)))).toEqual([]);
  });

  it('ids of another account and unknown ids are not counted; the body is checked', async () => {
    const [owner, other] = await Promise.all([registerUser(), registerUser()]);
    const [mine] = await makeAlerts(owner.accountId, 1, ['plan_limit'], [[]]);
    const [theirs] = await makeAlerts(other.accountId, 1, ['plan_limit'], [[]]);
    const res = await api('/alerts/acknowledge', { method: 'POST', token: owner.token, body: { ids: [mine!.id, theirs!.id, newId('alert'), mine!.id] } });
    expect(res.body).toEqual({ acknowledged: 1 });
    expect((await get('/alerts', other.token)).counts).toEqual({ triggered: 1, acknowledged: 0 });
    expect((await get('/alerts', owner.token)).counts).toEqual({ triggered: 0, acknowledged: 1 });

    const bad = [
      {},
      { ids: [] },
      { ids: Array.from({ length: 101 }, () => newId('alert')) },
      { ids: ['not-an-id'] },
      { all: false },
      { all: true, ids: [mine!.id] },
      { all: true, type: 'bogus' },
    ];
    for (const body of bad) expect((await api('/alerts/acknowledge', { method: 'POST', token: owner.token, body })).status, JSON.stringify(body)).toBe(400);
  });

  it('an account whose alerts predate the counters is counted exactly, then kept', async () => {
    const user = await registerUser();
    await makeAlerts(user.accountId, 12, ['budget_exceeded'], [[keyA!]]);
    await api('/alerts/acknowledge', { method: 'POST', token: user.token, body: { ids: (await get('/alerts?limit=5', user.token)).items.map((a: any) => a.id) } });
    // As before this round: no counter item.
    await dynamo().send(new DeleteCommand({ TableName: stack().tableName, Key: keys.alertCounts(user.accountId) }));
    expect((await get('/alerts', user.token)).counts).toEqual({ triggered: 7, acknowledged: 5 });
    await makeAlerts(user.accountId, 3, ['budget_exceeded'], [[]]);
    expect((await api('/alerts/acknowledge', { method: 'POST', token: user.token, body: { all: true } })).body).toEqual({ acknowledged: 10 });
    expect((await get('/alerts', user.token)).counts).toEqual({ triggered: 0, acknowledged: 15 });
  });
});
