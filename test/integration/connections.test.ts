/**
 * Provider connections against the local stand-ins of the OpenAI and Anthropic admin APIs and the real local stack
 * (docs/features/connections.md). The API is called over HTTP; syncs run in this process (the worker's own function,
 * pointed at the stack), so each can be awaited and its DynamoDB writes counted by a middleware on this process's
 * client. The stand-ins' clocks are frozen, so their usage only changes when a test changes it.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { homedir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '#shared/db/client.ts';
import { syncConnection } from '#shared/sync/all.ts';
import { dispatchDue } from '#shared/connections/dispatch.ts';
import { unitEndpointOf } from '#shared/usage/units.ts';
import { api, clearOfUtcMidnight, DATED_FILE_MS, pointConnectorsAtStack, registerUser, syncHere, setPlan, stack, type ApiOptions, type ApiResponse, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, pricedTruth, type PricedCell, type StandInOrg } from './standins.ts';
import { parseCsv } from './csv.ts';

type Provider = 'openai' | 'anthropic';
const today = () => new Date().toISOString().slice(0, 10);
const firstOfPreviousMonth = () => {
  const n = new Date();
  return new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
};

/** Every response body seen (the admin key must never be in one). */
const bodies: string[] = [];
async function call<T = any>(path: string, options: ApiOptions = {}): Promise<ApiResponse<T>> {
  const res = await api<T>(path, options);
  bodies.push(typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? ''));
  return res;
}

const standIn = (provider: Provider) => (provider === 'openai' ? stack().openaiAdmin : stack().anthropicAdmin);
async function control(provider: Provider, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${standIn(provider).url}/_burnrate${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`stand-in ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
const adminKey = async (provider: Provider): Promise<string> => (await control(provider, 'GET', '/state')).adminKey;

/** DynamoDB commands this process sent, by name. */
const sent = new Map<string, number>();
const WRITES = ['TransactWriteItemsCommand', 'UpdateItemCommand', 'PutItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand'];
const writeCount = () => WRITES.reduce((n, c) => n + (sent.get(c) ?? 0), 0);

/** Log lines this process wrote while syncing. */
const logLines: string[] = [];

/** Runs one sync here (waiting while the stack's own worker holds the lease). */
const sync = syncHere;

type Cell = PricedCell;

/** The stand-in's truth (of its main organization, or of `org`) over [from, to]: its cells. */
const truthCells = async (provider: Provider, from: string, to: string, org?: StandInOrg): Promise<any> =>
  org ? org.control(`/truth?from=${from}&to=${to}`) : control(provider, 'GET', `/truth?from=${from}&to=${to}`);

/** The stand-in's truth per (key hash, day, model) over [from, to], with the cost the price table gives. */
async function truth(provider: Provider, from: string, to: string, org?: StandInOrg): Promise<Map<string, Cell>> {
  return pricedTruth(provider, await truthCells(provider, from, to, org));
}

/** The export's rows per (key hash, day, model) of one provider. */
async function exported(token: string, provider: Provider, from: string, to: string): Promise<Map<string, Cell>> {
  const res = await call<string>(`/spend/export?from=${from}&to=${to}`, { token });
  expect(res.status, String(res.body)).toBe(200);
  const [header, ...lines] = parseCsv(res.body);
  expect(header!.join(',')).toBe('date,key_hash,key_label,key_name,project_id,project_name,settled,correction,tags,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd');
  const out = new Map<string, Cell>();
  const col = (f: string[], name: string) => f[header!.indexOf(name)]!;
  for (const f of lines) {
    if (col(f, 'provider') !== provider) continue;
    const [date, hash, row, requests, input, cached, output, cost] = ['date', 'key_hash', 'model', 'requests', 'input_tokens', 'cached_input_tokens', 'output_tokens', 'cost_usd'].map((c) => col(f, c));
    const [whole, frac = ''] = cost!.split('.');
    const micros = BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
    // Anthropic Priority Tier usage is a row of its own (`<model> (priority)`): the model's usage with the rest.
    const model = row!.replace(/ \(priority\)$/, '');
    const id = `${hash}|${date}|${model}`;
    const cell = out.get(id) ?? { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costMicros: 0n };
    out.set(id, {
      requests: cell.requests + Number(requests),
      inputTokens: cell.inputTokens + Number(input),
      cachedInputTokens: cell.cachedInputTokens + Number(cached),
      outputTokens: cell.outputTokens + Number(output),
      costMicros: cell.costMicros + micros,
    });
  }
  for (const [id, c] of out) if (c.requests === 0 && c.inputTokens === 0 && c.outputTokens === 0 && c.costMicros === 0n) out.delete(id);
  return out;
}

/**
 * Every (key, day, model) of the stand-in's usage imported exactly: requests and tokens always; the cost the table
 * gives on days not settled (today), and on settled days the provider's bill (expectSettled).
 */
async function expectExact(token: string, provider: Provider, from = firstOfPreviousMonth(), to = today(), org?: StandInOrg) {
  const [want, got] = await Promise.all([truth(provider, from, to, org), exported(token, provider, from, to)]);
  // Rows of a billed line no model or unit names carry money only: not usage. Rows of units (images, tool calls,
  // storage) are usage even without requests or tokens (the CSV has no quantity: they are known by their row's name).
  const isUnitRow = (id: string) => unitEndpointOf(id.split('|')[2]!.split(':')[0]!) !== undefined;
  const usage = new Map([...got].filter(([id, c]) => c.requests !== 0 || c.inputTokens !== 0 || c.outputTokens !== 0 || isUnitRow(id)));
  const missing = [...want.keys()].filter((k) => !usage.has(k));
  const extra = [...usage.keys()].filter((k) => !want.has(k));
  expect({ missing: missing.slice(0, 5), extra: extra.slice(0, 5) }).toEqual({ missing: [], extra: [] });
  expect(usage.size).toBe(want.size);
  for (const [id, cell] of want) {
    const { costMicros, ...counts } = cell;
    const { costMicros: gotCost, ...gotCounts } = usage.get(id)!;
    expect(gotCounts, id).toEqual(counts);
    if (id.split('|')[1] === today()) expect(gotCost, `${id}: today is an estimate`).toBe(costMicros);
  }
  await expectSettled(token, provider, from, to, org);
  return want;
}

/** Exact decimal text (dollars or cents) → units of 10^-14 $. */
const picos = (text: string, centsUnit: boolean) => {
  const negative = text.startsWith('-');
  const [w, f = ''] = text.replace('-', '').split('.');
  const v = BigInt(w!) * 10n ** (centsUnit ? 12n : 14n) + BigInt(f.padEnd(centsUnit ? 12 : 14, '0').slice(0, centsUnit ? 12 : 14));
  return negative ? -v : v;
};
const picosToMicros = (p: bigint) => (p + 50_000_000n) / 100_000_000n;

/** Every result of a stand-in cost endpoint over [from, to] (all pages), with its day (the main organization's, or `org`'s). */
async function billRows(provider: Provider, from: string, to: string, org?: StandInOrg): Promise<{ date: string; row: any }[]> {
  const key = org ? org.adminKey : await adminKey(provider);
  const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const out: { date: string; row: any }[] = [];
  let page: string | null = null;
  do {
    const url =
      provider === 'openai'
        ? `/v1/organization/costs?start_time=${Date.parse(`${from}T00:00:00Z`) / 1000}&end_time=${Date.parse(`${end}T00:00:00Z`) / 1000}&bucket_width=1d&group_by=api_key_id&group_by=line_item&limit=180`
        : `/v1/organizations/cost_report?starting_at=${from}T00:00:00Z&ending_at=${end}T00:00:00Z&group_by[]=workspace_id&group_by[]=description&limit=31`;
    // A page token is base64: its `+` must be sent encoded (unencoded it reads as a space, and the token as another's).
    const res = await fetch(`${org ? org.url : standIn(provider).url}${url}${page ? `&page=${encodeURIComponent(page)}` : ''}`, {
      headers: provider === 'openai' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    });
    const body = (await res.json()) as any;
    expect(res.status, `${url}: ${JSON.stringify(body)}`).toBe(200);
    for (const b of body.data) {
      const date = provider === 'openai' ? new Date(b.start_time * 1000).toISOString().slice(0, 10) : b.starting_at.slice(0, 10);
      for (const row of b.results) out.push({ date, row });
    }
    page = body.has_more ? body.next_page : null;
  } while (page);
  return out;
}

/** Within a hundredth of a cent (the bill's rows are rounded to the micro-dollar once per key and line). */
const TO_THE_CENT = 100n;

/**
 * Every settled (past) day equals the provider's bill: OpenAI per key; Anthropic per workspace (the keys whose usage
 * is in it, token lines, Priority Tier's estimate apart) and in total (bill + Priority Tier's estimate).
 */
async function expectSettled(token: string, provider: Provider, from: string, to: string, org?: StandInOrg) {
  const last = to < today() ? to : new Date(Date.parse(`${today()}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  if (last < from) return;
  const [rows, got, cells] = await Promise.all([billRows(provider, from, last, org), exported(token, provider, from, last), truthCells(provider, from, last, org)]);
  const ours = new Map<string, bigint>();
  for (const [id, c] of got) {
    const [hash, date, model] = id.split('|');
    ours.set(`${hash}|${date}`, (ours.get(`${hash}|${date}`) ?? 0n) + c.costMicros);
    if (provider === 'anthropic' && model!.startsWith('claude-')) ours.set(`tokens|${hash}|${date}`, (ours.get(`tokens|${hash}|${date}`) ?? 0n) + c.costMicros);
  }
  const close = (a: bigint, b: bigint, what: string) => expect(a - b <= TO_THE_CENT && b - a <= TO_THE_CENT, `${what}: ${a} µ$ shown, ${b} µ$ billed`).toBe(true);
  if (provider === 'openai') {
    const bill = new Map<string, bigint>();
    for (const { date, row } of rows) {
      const id = `${keyHash('openai', row.api_key_id)}|${date}`;
      bill.set(id, (bill.get(id) ?? 0n) + picos(String(row.amount.value), false));
    }
    expect(bill.size).toBeGreaterThan(10);
    for (const id of new Set([...bill.keys(), ...ours.keys()])) close(ours.get(id) ?? 0n, picosToMicros(bill.get(id) ?? 0n), `OpenAI key|day ${id}`);
    return;
  }
  // Anthropic: Priority Tier's estimate per workspace and day (never in the cost report).
  const priority = new Map<string, bigint>();
  const keyWorkspace = new Map<string, string | null>();
  for (const c of cells.cells as any[]) {
    keyWorkspace.set(keyHash('anthropic', c.apiKeyId), c.projectId);
    if (c.tier !== 'priority') continue;
    const one = pricedTruth('anthropic', { cells: [c] });
    for (const cell of one.values()) priority.set(`${c.projectId}|${c.date}`, (priority.get(`${c.projectId}|${c.date}`) ?? 0n) + cell.costMicros);
  }
  const billByDay = new Map<string, bigint>();
  const tokensByWorkspace = new Map<string, bigint>();
  for (const { date, row } of rows) {
    const p = picos(row.amount, true);
    billByDay.set(date, (billByDay.get(date) ?? 0n) + p);
    // A key's token and web-search bills both land on its model's rows (its web searches are part of its usage).
    if (row.cost_type === 'tokens' || row.cost_type === 'web_search') tokensByWorkspace.set(`${row.workspace_id}|${date}`, (tokensByWorkspace.get(`${row.workspace_id}|${date}`) ?? 0n) + p);
  }
  for (const [date, billed] of billByDay) {
    let shown = 0n;
    for (const [id, v] of ours) if (!id.startsWith('tokens|') && id.endsWith(`|${date}`)) shown += v;
    let prio = 0n;
    for (const [id, v] of priority) if (id.endsWith(`|${date}`)) prio += v;
    close(shown, picosToMicros(billed) + prio, `Anthropic ${date} in total`);
  }
  // Per workspace (other than the default one, where the Console's keyless usage shares the bill).
  let checked = 0;
  for (const [id, billed] of tokensByWorkspace) {
    const [workspace, date] = id.split('|');
    if (workspace === 'null') continue;
    let shown = 0n;
    for (const [hash, ws] of keyWorkspace) if (ws === workspace && hash !== keyHash('anthropic', null)) shown += ours.get(`tokens|${hash}|${date}`) ?? 0n;
    close(shown - (priority.get(`${workspace}|${date}`) ?? 0n), picosToMicros(billed), `Anthropic workspace ${workspace} on ${date}`);
    checked += 1;
  }
  expect(checked).toBeGreaterThan(10);
}

let restore: () => void;
let frozenAt: string;

beforeAll(async () => {
  await clearOfUtcMidnight(DATED_FILE_MS);
  frozenAt = new Date().toISOString();
  restore = await pointConnectorsAtStack(sent);
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logLines.push(String(chunk));
    return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  for (const p of ['openai', 'anthropic'] as const) {
    await control(p, 'POST', '/reset', {});
    await control(p, 'POST', '/clock', { now: frozenAt });
  }
}, DATED_FILE_MS + 120_000);

/** Stand-in organizations of single tests, removed at the end. */
const onExit: Array<() => Promise<unknown>> = [];

afterAll(async () => {
  await Promise.all(onExit.map((f) => f().catch(() => undefined)));
  for (const p of ['openai', 'anthropic'] as const) {
    await control(p, 'POST', '/reset', {}).catch(() => undefined);
    await control(p, 'POST', '/clock', { now: null }).catch(() => undefined);
  }
  restore?.();
});

async function connect(user: RegisteredUser, provider: Provider): Promise<string> {
  const res = await call('/connections', { method: 'POST', token: user.token, body: { provider, adminKey: await adminKey(provider) } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

describe('POST /connections: the one provider check', () => {
  it('refuses inference keys by name, a key the provider refuses with its words, and a second connection of a provider', async () => {
    const user = await registerUser();
    const inference = await call('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: 'sk-proj-abcdefghijklmnopqrstuvwxyz' } });
    expect(inference.status).toBe(400);
    expect(inference.body.errors[0]).toMatchObject({ path: 'adminKey', message: expect.stringContaining('inference') });
    const ant = await call('/connections', { method: 'POST', token: user.token, body: { provider: 'anthropic', adminKey: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz' } });
    expect(ant.body.errors[0]).toMatchObject({ path: 'adminKey', message: expect.stringContaining('inference') });
    const wrong = await call('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: 'sk-admin-notthekeythestandinknows0000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.type).toBe('/problems/connection-refused');
    expect(wrong.body.detail).toMatch(/401/);
    expect((await call('/connections', { token: user.token })).body.items).toEqual([]);
    const id = await connect(user, 'openai');
    const again = await call('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: await adminKey('openai') } });
    expect(again.status).toBe(409);
    const list = await call('/connections', { token: user.token });
    expect(list.body).toMatchObject({ items: [{ id, provider: 'openai', status: 'active', importedFrom: firstOfPreviousMonth() }], nextCursor: null });
    expect(list.body.items[0].keyHint).toBe((await adminKey('openai')).slice(-4));
  });

  it('answers 502 provider-unavailable when the provider fails, and stores nothing', async () => {
    const user = await registerUser();
    await control('anthropic', 'POST', '/faults', { status: 503, count: 1, pathPrefix: '/v1/organizations/api_keys' });
    const res = await call('/connections', { method: 'POST', token: user.token, body: { provider: 'anthropic', adminKey: await adminKey('anthropic') } });
    expect(res.status).toBe(502);
    expect(res.body.type).toBe('/problems/provider-unavailable');
    expect((await call('/connections', { token: user.token })).body.items).toEqual([]);
  });
});

describe('the sync', () => {
  let user: RegisteredUser;
  let openai: string;
  let anthropic: string;

  beforeAll(async () => {
    user = await registerUser();
    // SCALE: the seeded organizations track more than GROWTH's 1,000,000 requests in two months.
    await setPlan(user.accountId, 'SCALE');
    // A rule and a budget that the imported spend will trip.
    expect((await call('/alert-rules', { method: 'POST', token: user.token, body: { type: 'new_key', name: 'new keys', config: {}, channels: ['email'], isActive: true } })).status).toBe(201);
    expect((await call('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 1, alertThreshold: 50, scope: 'ACCOUNT' } })).status).toBe(201);
    openai = await connect(user, 'openai');
    anthropic = await connect(user, 'anthropic');
  });

  it('backfills every (key, day, model) exactly: the stand-ins’ counts priced by the table, in the export and GET /spend', { timeout: 180_000 }, async () => {
    expect((await sync(user.accountId, openai)).status).toBe('done');
    expect((await sync(user.accountId, anthropic)).status).toBe('done');
    const o = await expectExact(user.token, 'openai');
    const a = await expectExact(user.token, 'anthropic');
    const shown = [...(await exported(user.token, 'openai', firstOfPreviousMonth(), today())).values(), ...(await exported(user.token, 'anthropic', firstOfPreviousMonth(), today())).values()];
    const total = shown.reduce((s, c) => s + c.costMicros, 0n);
    const spend = await call(`/spend?from=${firstOfPreviousMonth()}&to=${today()}&groupBy=provider`, { token: user.token });
    const micros = (usd: number) => BigInt(Math.round(usd * 1e6));
    expect(spend.body.groups.reduce((s: bigint, g: any) => s + micros(g.costUsd), 0n)).toBe(total);
    const keys = await call('/keys?limit=100', { token: user.token });
    const byHash = new Map((keys.body.items as any[]).map((k) => [k.hash, k]));
    const state = await control('openai', 'GET', '/state');
    for (const k of state.keys as any[]) {
      if (k.status === 'deleted') continue;
      expect(byHash.get(keyHash('openai', k.id)), k.name).toMatchObject({ source: 'connection', name: k.name, providerKeyId: k.id, hint: k.redacted });
    }
    // Last seen: the latest UTC day the provider reports usage of each key (archived and deleted keys too), never the
    // sync's time.
    const latest = new Map<string, string>();
    for (const id of [...o.keys(), ...a.keys()]) {
      const [hash, date] = id.split('|') as [string, string];
      if ((latest.get(hash) ?? '') < date) latest.set(hash, date);
    }
    const retired = [
      ...(state.keys as any[]).map((k) => ({ ...k, provider: 'openai' as const })),
      ...((await control('anthropic', 'GET', '/state')).keys as any[]).map((k) => ({ ...k, provider: 'anthropic' as const })),
    ].filter((k) => k.status === 'deleted' || k.status === 'archived');
    expect(retired.some((k) => latest.has(keyHash(k.provider, k.id)))).toBe(true);
    for (const [hash, date] of latest) expect(byHash.get(hash)?.lastSeenAt, hash).toBe(`${date}T00:00:00.000Z`);
    // Usage without an API key: its own key, named so.
    expect(byHash.get(keyHash('openai', null))).toMatchObject({ name: 'No API key (Console, playground)', providerKeyId: null });
    expect(byHash.get(keyHash('anthropic', null))).toMatchObject({ name: 'No API key (Console, playground)' });
    // Anthropic's report has no request count: its keys count 0 requests.
    for (const k of keys.body.items as any[]) if (k.provider === 'anthropic') expect(k.requests.total).toBe(0);
    // Anthropic keys carry their workspace's name (an archived workspace's too), the default workspace named so.
    const ant = await control('anthropic', 'GET', '/state');
    const workspaces = new Map((ant.projects as any[]).map((w) => [w.id as string, w.name as string]));
    expect([...workspaces.keys()].some((id) => (ant.projects as any[]).find((w) => w.id === id).archivedAt !== null)).toBe(true);
    const listed = (ant.keys as any[]).filter((k) => k.status !== 'deleted');
    expect(listed.some((k) => k.projectId === null)).toBe(true);
    for (const k of listed) {
      const want = k.projectId === null ? { id: expect.any(String), name: 'Default workspace' } : { id: k.projectId, name: workspaces.get(k.projectId) };
      expect(byHash.get(keyHash('anthropic', k.id))?.project, k.name).toEqual(want);
    }
    // GET /spend?groupBy=key names each key group by the provider's name too (connection keys have no label), with
    // and without a provider filter.
    for (const filter of ['', '&provider=anthropic']) {
      const top = await call(`/spend?from=${firstOfPreviousMonth()}&to=${today()}&groupBy=key${filter}`, { token: user.token });
      expect(top.status).toBe(200);
      expect(top.body.groups.length).toBeGreaterThan(5);
      for (const g of top.body.groups as any[]) expect({ hash: g.hash, name: g.name }).toEqual({ hash: g.hash, name: byHash.get(g.hash)?.name ?? null });
      expect((top.body.groups as any[]).filter((g) => typeof g.name === 'string' && g.name !== '').length).toBeGreaterThan(5);
    }
  });

  it('keeps the history of a key the provider no longer lists, as deleted', async () => {
    const state = await control('openai', 'GET', '/state');
    const gone = (state.keys as any[]).find((k) => k.status === 'deleted');
    expect(gone).toBeDefined();
    const key = await call(`/keys/${keyHash('openai', gone.id)}?from=${firstOfPreviousMonth()}`, { token: user.token });
    expect(key.status).toBe(200);
    expect(key.body).toMatchObject({ providerStatus: 'deleted', source: 'connection' });
    expect(key.body.spend.total).toBeGreaterThan(0);
  });

  it('a re-sync that finds nothing new writes no aggregate at all', async () => {
    const before = new Map(sent);
    expect((await sync(user.accountId, openai)).status).toBe('done');
    expect((await sync(user.accountId, anthropic)).status).toBe('done');
    const delta = (name: string) => (sent.get(name) ?? 0) - (before.get(name) ?? 0);
    // No aggregate, snapshot or key write: only the lease (put, delete) and the connection's sync time (update), per
    // sync.
    expect(Object.fromEntries(WRITES.map((w) => [w, delta(w)]))).toEqual({
      TransactWriteItemsCommand: 0,
      UpdateItemCommand: 2,
      PutItemCommand: 2,
      DeleteItemCommand: 2,
      BatchWriteItemCommand: 0,
    });
  });

  it('adds growth and subtracts a downward revision, exactly', async () => {
    const state = await control('openai', 'GET', '/state');
    const key = (state.keys as any[]).find((k) => k.status === 'active');
    const series = (state.series as any[]).find((s) => s.keyId === key.id && s.kind === 'completions');
    await control('openai', 'POST', '/usage', { apiKeyId: key.id, model: series.model, tier: series.tier, add: { uncached: 123_456, output: 7_890, requests: 17 } });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await control('openai', 'POST', '/revise', { apiKeyId: key.id, model: series.model, tier: series.tier, date: yesterday, set: { uncached: 1000, cached: 0, cacheWrite: 0, output: 10, requests: 2 } });
    const dayBefore = (await call(`/spend?from=${yesterday}&to=${yesterday}&groupBy=day`, { token: user.token })).body.groups[0];
    const alertsBefore = (await call('/alerts?limit=100', { token: user.token })).body.items.map((a: any) => a.id);
    expect(alertsBefore.length).toBeGreaterThan(0);
    const before = sent.get('TransactWriteItemsCommand') ?? 0;
    const result = await sync(user.accountId, openai);
    expect(result.status).toBe('done');
    // Two cells changed (one transaction); yesterday's bill moved with its usage: its corrections (one transaction)
    // and its reconciliation day (one).
    // Two cells changed (one transaction); yesterday's bill moved with its usage: its reconciliation day is written
    // again (one transaction), and its corrections too where the bill moved otherwise than the estimate.
    expect(result.cellsChanged).toBe(2);
    expect((sent.get('TransactWriteItemsCommand') ?? 0) - before).toBe(result.transactions + 1);
    await expectExact(user.token, 'openai');
    // The bill revised down moved the settled day down; no alert was withdrawn.
    const dayAfter = (await call(`/spend?from=${yesterday}&to=${yesterday}&groupBy=day`, { token: user.token })).body.groups[0];
    expect(dayBefore.settled && dayAfter.settled).toBe(true);
    expect(dayAfter.costUsd).toBeLessThan(dayBefore.costUsd);
    const alertsAfter = (await call('/alerts?limit=100', { token: user.token })).body.items.map((a: any) => a.id);
    expect(alertsAfter).toEqual(expect.arrayContaining(alertsBefore));
  });

  it('pages through many pages, honours 429 Retry-After and retries 5xx', async () => {
    const waits: number[] = [];
    await control('openai', 'POST', '/faults', { status: 429, count: 2, retryAfter: 1, pathPrefix: '/v1/organization/usage/completions' });
    await control('openai', 'POST', '/faults', { status: 500, count: 2, pathPrefix: '/v1/organization/projects' });
    await control('openai', 'DELETE', '/requests');
    const result = await sync(user.accountId, openai, { sliceDays: 2, http: { backoffMs: 20, sleep: async (ms) => void waits.push(ms) } });
    expect(result.status).toBe('done');
    expect(waits.filter((w) => w === 1000)).toHaveLength(2);
    expect(waits.filter((w) => w < 1000)).toHaveLength(2);
    const requests = await control('openai', 'GET', '/requests');
    expect(requests.total).toBeGreaterThan(10);
    await expectExact(user.token, 'openai');
  });

  it('two syncs at once never count twice', async () => {
    await control('anthropic', 'POST', '/usage', { apiKeyId: null, model: 'claude-sonnet-4-5-20250929', add: { uncached: 5000, output: 100 } });
    const results = await Promise.all([
      syncConnection(user.accountId, anthropic, { budgetMs: 600_000 }),
      syncConnection(user.accountId, anthropic, { budgetMs: 600_000 }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(expect.arrayContaining(['done']));
    await expectExact(user.token, 'anthropic');
  });

  it('reconciles: every settled day shown equals its bill exactly, by line; Priority Tier apart; today not billed yet', async () => {
    const from = firstOfPreviousMonth();
    for (const [provider, id] of [['openai', openai], ['anthropic', anthropic]] as const) {
      const res = await call(`/connections/${id}/reconciliation?from=${from}&to=${today()}`, { token: user.token });
      expect(res.status).toBe(200);
      const micros = (usd: number | null) => BigInt(Math.round((usd ?? 0) * 1e6));
      const days = res.body.days as any[];
      const todays = days.at(-1);
      expect(todays).toMatchObject({ date: today(), settled: false, billedUsd: null, lines: [] });
      expect(todays.computedUsd).toBe(todays.estimatedUsd);
      const settled = days.filter((d) => d.settled);
      expect(settled.length).toBe(days.length - 1);
      for (const d of settled) {
        const priority = (d.lines as any[]).filter((l) => l.reason === 'priority_tier');
        expect(micros(d.computedUsd), `${provider} ${d.date}`).toBe(micros(d.billedUsd) + priority.reduce((s, l) => s + micros(l.estimatedUsd), 0n));
        // The lines add up to the day: billed and estimated.
        expect((d.lines as any[]).reduce((s, l) => s + micros(l.billedUsd), 0n)).toBe(micros(d.billedUsd));
        expect((d.lines as any[]).reduce((s, l) => s + micros(l.estimatedUsd), 0n)).toBe(micros(d.estimatedUsd));
      }
      if (provider === 'anthropic') {
        // Priority Tier (the research key's Opus) stays an estimate on its own line; code execution no key explains.
        expect(settled[0].lines).toContainEqual({ line: 'claude-opus-4-5-20251101 (priority)', estimatedUsd: expect.any(Number), billedUsd: null, reason: 'priority_tier' });
        expect((settled[0].lines as any[]).find((l) => l.line === 'Code Execution Usage')).toMatchObject({ estimatedUsd: 0, reason: 'not_estimated' });
        // Long context: the prod key's Sonnet 4.5 calls of more than 200K input (the 200k-1M window, every day) are
        // estimated at the long-context rates on a line of their own, which estimates what Anthropic bills for them,
        // as the model's standard line does (to a hundredth of a cent: each cell rounded to the micro-dollar).
        for (const d of settled) {
          for (const name of ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5-20250929, long context']) {
            const line = (d.lines as any[]).find((l) => l.line === name);
            expect(line?.reason ?? null, `${d.date} ${name}`).toBe(null);
            const gap = micros(line.estimatedUsd) - micros(line.billedUsd);
            expect(gap >= -100n && gap <= 100n, `${d.date}: ${name} estimated ${line.estimatedUsd}, billed ${line.billedUsd}`).toBe(true);
          }
        }
      } else {
        // Storage is usage in units now (estimated from its byte-days), billed on the unattributed key's row of it.
        const storage = (settled[0].lines as any[]).find((l) => l.line === 'vector_stores');
        expect(storage).toMatchObject({ reason: null });
        expect(storage.estimatedUsd).toBeGreaterThan(0);
        expect(storage.billedUsd).toBeGreaterThan(0);
      }
      // The key breakdown and GET /spend flag settled days.
      const spend = await call(`/spend?from=${from}&to=${today()}&groupBy=day`, { token: user.token });
      expect((spend.body.groups as any[]).map((g) => g.settled)).toEqual(days.map((d) => d.settled));
    }
    const key = await call(`/keys/${keyHash('anthropic', null)}?from=${firstOfPreviousMonth()}`, { token: user.token });
    expect(key.body.breakdown.daily.at(-1).settled).toBe(false);
    expect(key.body.breakdown.daily[0].settled).toBe(true);
  });

  it('imported spend fires the budget and the new_key rule', async () => {
    const alerts = await call('/alerts?limit=100', { token: user.token });
    const types = new Set((alerts.body.items as any[]).map((a) => a.type));
    expect(types.has('new_key')).toBe(true);
    expect(types.has('budget_threshold') || types.has('budget_exceeded')).toBe(true);
  });

  it('refuses POST /ingest events of a connected provider (provider_connected), takes the others', async () => {
    const created = await call('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'proxy' } });
    const events = [
      { requestId: 'r-openai', keyHash: 'a'.repeat(64), provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 1 },
      { requestId: 'r-mistral', keyHash: 'b'.repeat(64), provider: 'mistral', model: 'mistral-large', inputTokens: 10, outputTokens: 1 },
    ];
    const res = await call('/ingest', { method: 'POST', headers: { 'x-api-key': created.body.key }, body: { events } });
    expect(res.body).toMatchObject({ accepted: 1, rejected: [{ index: 0, code: 'provider_connected' }] });
  });

  it('a revoked admin key: status error and ONE connection_error alert a day; a new key makes it active again', async () => {
    await control('openai', 'POST', '/admin-key', { revoked: true });
    expect((await sync(user.accountId, openai)).status).toBe('refused');
    expect((await sync(user.accountId, openai)).status).toBe('refused');
    const conn = await call(`/connections/${openai}`, { token: user.token });
    expect(conn.body).toMatchObject({ status: 'error', statusDetail: expect.stringContaining('refused') });
    const alerts = await call('/alerts?limit=100', { token: user.token });
    const errors = (alerts.body.items as any[]).filter((a) => a.type === 'connection_error');
    expect(errors).toHaveLength(1);
    expect(errors[0].connectionId).toBe(openai);
    // Rotation: the provider issues a new key; the old one is refused, the new one checked and stored.
    const rotated = await control('openai', 'POST', '/admin-key', { rotate: true });
    const patched = await call(`/connections/${openai}`, { method: 'PATCH', token: user.token, body: { adminKey: rotated.adminKey } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'active', keyHint: rotated.adminKey.slice(-4) });
    expect((await sync(user.accountId, openai)).status).toBe('done');
    expect((await call(`/connections/${openai}`, { token: user.token })).body.status).toBe('active');
  });

  it('pause: not synced (nor dispatched); resume: synced again', async () => {
    expect((await call(`/connections/${anthropic}`, { method: 'PATCH', token: user.token, body: { status: 'paused' } })).body.status).toBe('paused');
    expect((await sync(user.accountId, anthropic)).status).toBe('skipped');
    const manual = await call(`/connections/${anthropic}/sync`, { method: 'POST', token: user.token });
    expect(manual.status).toBe(409);
    expect((await call(`/connections/${anthropic}`, { method: 'PATCH', token: user.token, body: { status: 'active' } })).body.status).toBe('active');
    expect((await sync(user.accountId, anthropic)).status).toBe('done');
  });

  it('sync now: 202, then 429 with Retry-After within the minute', async () => {
    const first = await call(`/connections/${anthropic}/sync`, { method: 'POST', token: user.token });
    expect(first.status).toBe(202);
    expect(first.body.queuedAt).toMatch(/Z$/);
    const second = await call(`/connections/${anthropic}/sync`, { method: 'POST', token: user.token });
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('delete: the connection goes, its keys and spend stay, the provider’s events are taken again', async () => {
    const before = await call(`/spend?from=${firstOfPreviousMonth()}&to=${today()}`, { token: user.token });
    expect((await call(`/connections/${openai}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    expect((await call(`/connections/${openai}`, { token: user.token })).status).toBe(404);
    const after = await call(`/spend?from=${firstOfPreviousMonth()}&to=${today()}`, { token: user.token });
    expect(after.body.total).toEqual(before.body.total);
    const keys = await call('/keys?limit=100', { token: user.token });
    expect((keys.body.items as any[]).some((k) => k.provider === 'openai' && k.source === 'connection')).toBe(true);
    // Connected again (the same organization): nothing is counted twice.
    const again = await connect(user, 'openai');
    expect((await sync(user.accountId, again)).status).toBe('done');
    await expectExact(user.token, 'openai');
  });

  it('the dispatcher queues due connections from the sparse index', async () => {
    expect(await dispatchDue(new Date(Date.now() + 3_600_000))).toBeGreaterThanOrEqual(2);
  });
});

describe('a running sync obeys pause and delete', () => {
  /**
   * An organization of the test's own with 2 days of usage, connected: the stack's own first sync (this file's syncs
   * wait for it) imports 2 days, not 2 months; the sync acted on reads day by day all the same.
   */
  async function connectShort(user: RegisteredUser, provider: Provider): Promise<string> {
    const org = await newStandInOrg(provider, { now: frozenAt, late: null, historyDays: 2 });
    onExit.push(() => org.remove());
    const res = await call('/connections', { method: 'POST', token: user.token, body: { provider, adminKey: org.adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  }

  /** Runs a sync whose provider requests are counted; at the `at`-th one, `act` runs first (a PATCH or DELETE). */
  async function syncActingAt(user: RegisteredUser, id: string, at: number, act: () => Promise<ApiResponse>) {
    let requests = 0;
    let actedAt = -1;
    let acted: ApiResponse | undefined;
    const counting: typeof fetch = async (input, init) => {
      requests += 1;
      if (requests === at && actedAt < 0) {
        acted = await act();
        actedAt = requests;
      }
      return fetch(input, init);
    };
    // One day per slice: the sync has many requests (and slices) left when the act comes.
    const result = await sync(user.accountId, id, { sliceDays: 1, http: { backoffMs: 20, fetch: counting } });
    return { result, after: requests - actedAt, acted: acted!, actedAt };
  }

  it('a pause mid-sync stops it within one provider request; the pause stays and updatedAt never goes back', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'SCALE');
    const id = await connectShort(user, 'anthropic');
    const { result, after, acted, actedAt } = await syncActingAt(user, id, 4, () => call(`/connections/${id}`, { method: 'PATCH', token: user.token, body: { status: 'paused' } }));
    expect(acted.status).toBe(200);
    expect(actedAt).toBe(4);
    expect(result.status).toBe('stopped');
    // The request that carried the pause, and at most one sent at the same moment by a concurrent read.
    expect(after).toBeLessThanOrEqual(1);
    const now = await call(`/connections/${id}`, { token: user.token });
    expect(now.body.status).toBe('paused');
    expect(now.body.updatedAt >= acted.body.updatedAt).toBe(true);
    expect((await sync(user.accountId, id)).status).toBe('skipped');
  });

  it('a DELETE mid-sync stops it: no provider request with the deleted key after the one under way', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'SCALE');
    const id = await connectShort(user, 'openai');
    const { result, after, acted } = await syncActingAt(user, id, 8, () => call(`/connections/${id}`, { method: 'DELETE', token: user.token }));
    expect(acted.status).toBe(204);
    expect(result.status).toBe('stopped');
    expect(after).toBeLessThanOrEqual(1);
    expect((await call(`/connections/${id}`, { token: user.token })).status).toBe(404);
  });
});

describe('rotation stays with the organization', () => {
  it('a valid admin key of another organization: 400 saying so, nothing changed', async () => {
    const user = await registerUser();
    for (const provider of ['openai', 'anthropic'] as const) {
      const id = await connect(user, provider);
      const before = await call(`/connections/${id}`, { token: user.token });
      // A second organization of the provider, with its own projects / workspaces and organization id.
      const other = await control(provider, 'POST', '/orgs', { seed: 'contoso' });
      try {
        const res = await call(`/connections/${id}`, { method: 'PATCH', token: user.token, body: { adminKey: other.adminKey } });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.errors).toEqual([{ path: 'adminKey', message: expect.stringContaining('different') }]);
        expect(JSON.stringify(res.body)).not.toContain(other.adminKey);
        expect((await call(`/connections/${id}`, { token: user.token })).body).toEqual(before.body);
        // A key of the same organization is taken.
        const same = await call(`/connections/${id}`, { method: 'PATCH', token: user.token, body: { adminKey: await adminKey(provider) } });
        expect(same.status, JSON.stringify(same.body)).toBe(200);
      } finally {
        await fetch(`${standIn(provider).url}/_burnrate/orgs/${other.id}`, { method: 'DELETE' });
      }
    }
  });
});

describe('local deletion of a connection', () => {
  it('the data folder, the database folder and the key that opens the sealed admin keys are their owner\'s only', async () => {
    const dataDir = dirname(stack().outboxDir);
    // A sealed admin key may outlive its DELETE in DynamoDB Local's file (free pages): no other user may read either.
    for (const dir of [dataDir, join(dataDir, 'dynamodb')]) expect((await stat(dir)).mode & 0o777, dir).toBe(0o700);
    // The key that opens them lives outside the data folder (a copy of the folder alone opens nothing), in a folder
    // of its owner's only, and never the developer's own (the tests' stack has a key folder of its own).
    const keyFile = stack().connectionsKeyFile;
    expect(relative(dataDir, keyFile).startsWith('..'), keyFile).toBe(true);
    expect(keyFile.startsWith(join(homedir(), '.config'))).toBe(false);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(keyFile))).mode & 0o777).toBe(0o700);
    expect(await readdir(dataDir)).not.toContain('connections-key');
    expect((await readFile(keyFile, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('DELETE overwrites the sealed admin key before the item goes', async () => {
    const user = await registerUser();
    const id = await connect(user, 'anthropic');
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { tableName } = await import('#shared/db/client.ts');
    const { keys } = await import('#shared/db/keys.ts');
    const updates: string[] = [];
    const watch = (next: (args: any) => Promise<any>, context: { commandName?: string }) => async (args: any) => {
      const text = JSON.stringify(args.input ?? {});
      if (context.commandName === 'UpdateItemCommand' && text.includes(keys.connection(user.accountId, id).sk) && text.includes(':blank')) updates.push(text);
      return next(args);
    };
    const item = (await db().send(new GetCommand({ TableName: tableName(), Key: keys.connection(user.accountId, id), ConsistentRead: true }))).Item!;
    db().middlewareStack.add(watch as never, { step: 'initialize', name: 'watchConnectionDelete' });
    try {
      const { deleteConnection } = await import('#shared/connections/service.ts');
      await deleteConnection(user.accountId, id);
    } finally {
      db().middlewareStack.remove('watchConnectionDelete');
    }
    const sealed = item.secret as Record<string, string>;
    // One overwrite, every sealed field blank at its own length, none of the sealed bytes in it.
    expect(updates).toHaveLength(1);
    for (const field of ['wrappedKey', 'iv', 'tag', 'ciphertext']) {
      expect(updates[0]).toContain(`"${'A'.repeat(sealed[field]!.length)}"`);
      expect(updates[0]).not.toContain(sealed[field]);
    }
    expect((await call(`/connections/${id}`, { token: user.token })).status).toBe(404);
  });
});

describe('one canonical provider name', () => {
  it('every spelling of a connected provider is provider_connected; other providers stay their own; a price goes under the canonical id', async () => {
    const user = await registerUser();
    // The connection's own import (the stack's worker) must not take the plan's room from the events below.
    await setPlan(user.accountId, 'SCALE');
    await connect(user, 'openai');
    const created = await call('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'proxy' } });
    // A trailing .ai, .co, .io or .dev is dropped too: a provider's own domain is the provider.
    const spellings = ['openai', 'OpenAI', 'openai.', 'openai-', 'open-ai', 'open_ai', 'openai.com', 'OPENAI.COM', ' Open AI ', 'ｏｐｅｎａｉ', 'openai.ai', 'OpenAI.co', 'openai.io', 'openai.dev'];
    const others = ['azure-openai', 'openai-compatible', 'mistral', 'openai.net'];
    const events = [...spellings, ...others].map((provider, i) => ({ requestId: `r-${i}`, keyHash: String(i % 10).repeat(64), provider, model: 'gpt-4o', inputTokens: 10, outputTokens: 1 }));
    const res = await call('/ingest', { method: 'POST', headers: { 'x-api-key': created.body.key }, body: { events } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.accepted, JSON.stringify(res.body)).toBe(others.length);
    expect((res.body.rejected as { index: number; code: string }[]).map((r) => [spellings[r.index], r.code])).toEqual(spellings.map((p) => [p, 'provider_connected']));
    const keys = await call('/keys?limit=100', { token: user.token });
    const sent = (keys.body.items as { provider: string; source: string }[]).filter((k) => k.source === 'ingest');
    expect(sent.map((k) => k.provider).sort()).toEqual(['azure-openai', 'mistral', 'openai-compatible', 'openai.net']);

    const put = await call('/prices/openai./gpt-4o', { method: 'PUT', token: user.token, body: { input: 1, output: 2 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.provider).toBe('openai');
    const prices = await call('/prices', { token: user.token });
    const own = (prices.body.items as { provider: string; model: string; source: string }[]).filter((p) => p.source === 'account');
    expect(own.map((p) => `${p.provider}/${p.model}`)).toEqual(['openai/gpt-4o']);
  });
});

describe('plan limits', () => {
  it('FREE: keys past the limit wait (statusDetail, one plan_limit alert); after an upgrade the rest is imported', { timeout: 120_000 }, async () => {
    const user = await registerUser();
    // An organization of the test's own with the seed's keys, its usage on the last 4 days (3 settled): the key limit
    // and the upgrade need no older usage, and its imports are a few days each.
    const org = await newStandInOrg('openai', { now: frozenAt, late: null, historyDays: 4 });
    onExit.push(() => org.remove());
    const created = await call('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: org.adminKey } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect((await sync(user.accountId, id)).limitsReached).toContain('keys');
    const conn = await call(`/connections/${id}`, { token: user.token });
    expect(conn.body.statusDetail).toMatch(/key limit \(5 keys\)/);
    const billing = await call('/billing/status', { token: user.token });
    expect(billing.body.usage.keys).toBe(5);
    expect((await call('/keys?limit=100&tracked=true', { token: user.token })).body.items).toHaveLength(5);
    await sync(user.accountId, id);
    const alerts = await call('/alerts?limit=100', { token: user.token });
    expect((alerts.body.items as any[]).filter((a) => a.type === 'plan_limit')).toHaveLength(1);
    await setPlan(user.accountId, 'SCALE');
    const result = await sync(user.accountId, id);
    expect(result.limitsReached).toEqual([]);
    await expectExact(user.token, 'openai', undefined, undefined, org);
    expect((await call(`/connections/${id}`, { token: user.token })).body.statusDetail).toBeNull();
  });

  it('FREE with more usage than its limits: this month first, history free of the request limit, notes that say what is missing; an upgrade fills it in', { timeout: 120_000 }, async () => {
    const user = await registerUser();
    const id = await connect(user, 'openai');
    const month = `${today().slice(0, 7)}-01`;
    const spendOf = async (from: string, to = today()) => (await call(`/spend?from=${from}&to=${to}&groupBy=day`, { token: user.token })).body;
    // A first sync that runs out of time after its first slice has imported the newest days, not the oldest.
    const first = await sync(user.accountId, id, { budgetMs: 0 });
    expect(first.status).toBe('partial');
    const partial = await spendOf(month);
    expect(partial.total.costUsd).toBeGreaterThan(0);
    expect((partial.groups as any[]).at(-1).costUsd).toBeGreaterThan(0);
    expect(partial.coverage.complete).toBe(false);
    const pendingNote = (partial.coverage.notes as any[]).find((n) => n.code === 'sync_pending');
    const whole = await spendOf(firstOfPreviousMonth());
    expect((whole.coverage.notes as any[]).find((n) => n.code === 'sync_pending')).toMatchObject({ provider: 'openai', from: firstOfPreviousMonth() });
    // The first slice is this month's newest days: the days pending lie before it.
    if (pendingNote) expect(pendingNote.to < addDaysIso(today(), -6)).toBe(true);

    await sync(user.accountId, id);
    const mtd = await spendOf(month);
    expect(mtd.total.costUsd).toBeGreaterThan(0);
    expect(mtd.coverage.complete).toBe(false);
    const codes = (mtd.coverage.notes as any[]).map((n) => n.code);
    expect(codes).toEqual(expect.arrayContaining(['plan_key_limit', 'plan_request_limit', 'estimated']));
    // The held-back requests are some of the range's, not all of it (the newest went in first).
    expect((mtd.coverage.notes as any[]).find((n) => n.code === 'plan_request_limit').message).toMatch(/^Some OpenAI requests and tokens (of|between) /);
    expect(codes).not.toContain('sync_pending');
    const untracked = await call('/keys?limit=100&tracked=false', { token: user.token });
    const keyNote = (mtd.coverage.notes as any[]).find((n) => n.code === 'plan_key_limit');
    expect(keyNote.count).toBe(untracked.body.total);
    expect(keyNote.message).toMatch(/not tracked on the Free plan.*Upgrade/);
    expect(untracked.body.total).toBeGreaterThan(3);
    for (const k of untracked.body.items as any[]) expect(k).toMatchObject({ tracked: false, source: 'connection', spend: { total: 0 } });
    // Named as the provider names them (a key deleted before it was listed has no name left).
    for (const k of untracked.body.items as any[]) expect(typeof k.name === 'string' || k.providerStatus === 'deleted', JSON.stringify(k)).toBe(true);
    // History before the period is free: the tracked keys' last month is imported whole, though this period's requests
    // are used up.
    const billing = await call('/billing/status', { token: user.token });
    expect(billing.body.usage.trackedRequests).toBeLessThanOrEqual(10_000);
    const lastMonth = await spendOf(firstOfPreviousMonth(), addDaysIso(month, -1));
    expect(lastMonth.total.requests).toBeGreaterThan(10_000);
    const alerts = await call('/alerts?limit=100&type=plan_limit', { token: user.token });
    expect(alerts.body.items).toHaveLength(1);

    // The upgrade: the next sync imports the rest, history included, and the notes go.
    await setPlan(user.accountId, 'SCALE');
    expect((await sync(user.accountId, id)).limitsReached).toEqual([]);
    await expectExact(user.token, 'openai');
    const after = await spendOf(month);
    expect(after.coverage.complete).toBe(true);
    expect((after.coverage.notes as any[]).map((n) => n.code)).toEqual(['estimated']);
    expect((await call('/keys?limit=100&tracked=false', { token: user.token })).body.total).toBe(0);
    // The plan_limit alert no longer applies: acknowledged by Burnrate.
    const closed = await call('/alerts?limit=100&type=plan_limit', { token: user.token });
    expect(closed.body.items).toEqual([expect.objectContaining({ status: 'acknowledged', acknowledgedBy: 'burnrate' })]);
  });
});

describe('tiers: each at its own price', () => {
  it('estimates OpenAI priority, flex and batch usage at their tier prices: each key\'s day equals what the stand-in bills for it', { timeout: 120_000 }, async () => {
    // A fresh copy of the seeded organization (priority gpt-5.1 on web-prod, flex gpt-5-mini on support-bot), its
    // clock frozen; its usage on the two days looked at only (yesterday and today).
    const org = await newStandInOrg('openai', { now: frozenAt, late: null, historyDays: 2 });
    try {
      const user = await registerUser();
      await setPlan(user.accountId, 'SCALE');
      const res = await call('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: org.adminKey } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect((await sync(user.accountId, res.body.id)).status).toBe('done');
      const state = await org.state();
      // Batch rows say service_tier "default" with batch: true: priced at the batch price once, never halved twice.
      const tiered = (state.series as any[]).filter((s) => s.tier === 'priority' || s.tier === 'flex' || s.tier === 'batch');
      expect(new Set(tiered.map((s) => s.tier))).toEqual(new Set(['priority', 'flex', 'batch']));
      const yesterday = new Date(Date.parse(frozenAt) - 86_400_000).toISOString().slice(0, 10);
      const start = Date.parse(`${yesterday}T00:00:00Z`) / 1000;
      for (const keyId of new Set(tiered.map((s) => s.keyId as string))) {
        // What the provider bills the key that day (its priority and flex lines at their own prices).
        const billed = await org.get(`/v1/organization/costs?start_time=${start}&end_time=${start + 86_400}&group_by=api_key_id&group_by=line_item&api_key_ids=${keyId}`);
        expect(billed.status).toBe(200);
        const lines = billed.body.data.flatMap((b: any) => b.results) as any[];
        expect(lines.some((l) => /\((flex|batch)\)$|^priority \| /.test(l.line_item))).toBe(true);
        const billedUsd = lines.reduce((sum, l) => sum + l.amount.value, 0);
        const key = await call(`/keys/${keyHash('openai', keyId)}?from=${yesterday}&to=${yesterday}`, { token: user.token });
        expect(key.status).toBe(200);
        const day = (key.body.breakdown.daily as any[]).find((d) => d.date === yesterday);
        // Equal to the micro-dollar, but for the rounding of each line (the stand-in bills nano-dollars, Burnrate µ$
        // per cell).
        expect(Math.abs(day.costUsd - billedUsd), `${keyId}: ${day.costUsd} vs ${billedUsd}`).toBeLessThan(0.00001);
      }
      // Usage beyond tokens: the key breakdown's rows of units, each with its unit and quantity as the stand-in
      // counted it.
      const truthDay = await org.control(`/truth?from=${yesterday}&to=${yesterday}`);
      const unitsOf = (kind: string, keyId: string | null, metric: string) =>
        (truthDay.cells as any[]).filter((c) => c.kind === kind && c.apiKeyId === keyId).reduce((n, c) => n + c[metric], 0);
      const webProd = (state.keys as any[]).find((k) => k.name === 'web-prod').id;
      const prodDay = await call(`/keys/${keyHash('openai', webProd)}?from=${yesterday}&to=${yesterday}`, { token: user.token });
      const rows = new Map((prodDay.body.breakdown.byModel as any[]).map((r) => [r.model, r]));
      expect(rows.get('images:dall-e-3')).toMatchObject({ unit: 'image', quantity: unitsOf('images', webProd, 'images'), requests: unitsOf('images', webProd, 'requests') });
      expect(rows.get('web_search_calls:gpt-5.1-2025-11-13')).toMatchObject({ unit: 'call', quantity: unitsOf('web_search_calls', webProd, 'calls'), requests: 0 });
      expect(rows.get('images:dall-e-3').costUsd).toBeGreaterThan(0);
      expect(rows.get('gpt-5.1-2025-11-13')).not.toHaveProperty('unit');
      // Storage and code interpreter sessions carry no key: on the organization's key for usage without one.
      const noKey = await call(`/keys/${keyHash('openai', null)}?from=${yesterday}&to=${yesterday}`, { token: user.token });
      expect((noKey.body.breakdown.byModel as any[]).find((r) => r.model === 'vector_stores')).toMatchObject({ unit: 'byte_day', quantity: unitsOf('vector_stores', null, 'bytes') });

      // A model the table can't price, of tokens or of units (images): one unpriced_model alert each (admins), however
      // often it is synced.
      const someKey = (state.keys as any[]).find((k) => k.status === 'active');
      for (let round = 0; round < 2; round++) {
        await org.control('/usage', { apiKeyId: someKey.id, model: 'gpt-7-preview', date: yesterday, add: { uncached: 1000, output: 10, requests: 3 } });
        await org.control('/usage', { apiKeyId: someKey.id, kind: 'images', model: 'gpt-image-9', date: yesterday, add: { images: 2, requests: 1 } });
        expect((await sync(user.accountId, res.body.id)).status).toBe('done');
      }
      const alerts = await call('/alerts?type=unpriced_model&limit=100', { token: user.token });
      expect(new Set((alerts.body.items as any[]).map((a) => a.title))).toEqual(new Set(['No price for OpenAI model gpt-7-preview', 'No price for OpenAI images of model gpt-image-9']));
      expect(alerts.body.items).toHaveLength(2);
      const k = await call(`/keys/${keyHash('openai', someKey.id)}`, { token: user.token });
      expect(k.body.unpricedRequests).toBeGreaterThanOrEqual(6);
    } finally {
      await org.remove();
    }
  });
});

const addDaysIso = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

describe('the admin key stays secret', () => {
  it('appears in no response body, no log line of a sync, no e-mail', async () => {
    const secrets = [await adminKey('openai'), await adminKey('anthropic')];
    const outbox = stack().outboxDir;
    const mails = await Promise.all((await readdir(outbox)).map((f) => readFile(join(outbox, f), 'utf8')));
    for (const secret of secrets) {
      for (const text of [...bodies, ...logLines, ...mails]) expect(text.includes(secret)).toBe(false);
    }
    expect(bodies.length).toBeGreaterThan(30);
  });
});
