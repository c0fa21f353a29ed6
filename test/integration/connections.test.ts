/**
 * Provider connections against the local stand-ins of the OpenAI and Anthropic admin APIs and the real local stack
 * (API.md part 4). The API is called over HTTP; syncs run in this process (the worker's own function, pointed at the
 * stack), so each can be awaited and its DynamoDB writes counted by a middleware on this process's client. The
 * stand-ins' clocks are frozen, so their usage only changes when a test changes it.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '#shared/db/client.ts';
import { syncConnection, type SyncOptions, type SyncResult } from '#shared/connections/sync.ts';
import { dispatchDue } from '#shared/connections/dispatch.ts';
import { api, pointAtStack, registerUser, setPlan, stack, type ApiOptions, type ApiResponse, type RegisteredUser } from './harness.ts';
import { keyHash, pricedTruth, type PricedCell } from './standins.ts';

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
async function sync(accountId: string, connectionId: string, options: SyncOptions = {}): Promise<SyncResult> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const result = await syncConnection(accountId, connectionId, { budgetMs: 600_000, http: { backoffMs: 20 }, ...options });
    if (result.status !== 'busy') return result;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the lease was never free');
}

type Cell = PricedCell;

/** The stand-in's truth per (key hash, day, model) over [from, to], with the cost the price table gives. */
async function truth(provider: Provider, from: string, to: string): Promise<Map<string, Cell>> {
  return pricedTruth(provider, await control(provider, 'GET', `/truth?from=${from}&to=${to}`));
}

/** The export's rows per (key hash, day, model) of one provider. */
async function exported(token: string, provider: Provider, from: string, to: string): Promise<Map<string, Cell>> {
  const res = await call<string>(`/spend/export?from=${from}&to=${to}`, { token });
  expect(res.status, String(res.body)).toBe(200);
  const [header, ...lines] = res.body.trim().split('\r\n');
  expect(header).toBe('date,key_hash,key_label,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd');
  const out = new Map<string, Cell>();
  for (const line of lines) {
    const f = line.split(',');
    if (f[3] !== provider) continue;
    const [date, hash, , , model, requests, input, cached, output, cost] = f as string[];
    const [whole, frac = ''] = cost!.split('.');
    const micros = BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
    if (Number(requests) === 0 && Number(input) === 0 && Number(output) === 0 && micros === 0n) continue;
    out.set(`${hash}|${date}|${model}`, { requests: Number(requests), inputTokens: Number(input), cachedInputTokens: Number(cached), outputTokens: Number(output), costMicros: micros });
  }
  return out;
}

async function expectExact(token: string, provider: Provider, from = firstOfPreviousMonth(), to = today()) {
  const [want, got] = await Promise.all([truth(provider, from, to), exported(token, provider, from, to)]);
  const missing = [...want.keys()].filter((k) => !got.has(k));
  const extra = [...got.keys()].filter((k) => !want.has(k));
  expect({ missing: missing.slice(0, 5), extra: extra.slice(0, 5) }).toEqual({ missing: [], extra: [] });
  expect(got.size).toBe(want.size);
  for (const [id, cell] of want) expect(got.get(id), id).toEqual(cell);
  return want;
}

let restore: () => void;
const frozenAt = new Date().toISOString();

beforeAll(async () => {
  const dataDir = dirname(stack().outboxDir);
  restore = pointAtStack({
    CONNECTIONS_LOCAL_KEY: (await readFile(join(dataDir, 'connections-key'), 'utf8')).trim(),
    OPENAI_ADMIN_URL: stack().openaiAdmin.url,
    ANTHROPIC_ADMIN_URL: stack().anthropicAdmin.url,
  });
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const name = (context as { commandName?: string }).commandName ?? 'unknown';
      sent.set(name, (sent.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'countForConnectionsTest' },
  );
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logLines.push(String(chunk));
    return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  for (const p of ['openai', 'anthropic'] as const) {
    await control(p, 'POST', '/reset', {});
    await control(p, 'POST', '/clock', { now: frozenAt });
  }
});

afterAll(async () => {
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
    const total = [...o.values(), ...a.values()].reduce((s, c) => s + c.costMicros, 0n);
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
    // No aggregate, snapshot or key write: only the lease (put, delete) and the connection's sync time (update), per sync.
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
    const before = sent.get('TransactWriteItemsCommand') ?? 0;
    const result = await sync(user.accountId, openai);
    expect(result.status).toBe('done');
    // Two cells changed: one transaction of cells; and one for the days whose billed figure moved with them.
    expect(result).toMatchObject({ cellsChanged: 2, transactions: 1 });
    expect((sent.get('TransactWriteItemsCommand') ?? 0) - before).toBe(2);
    await expectExact(user.token, 'openai');
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

  it('reconciles: per day what Burnrate computed and what Anthropic bills (cents → dollars exactly)', async () => {
    const from = firstOfPreviousMonth();
    const res = await call(`/connections/${anthropic}/reconciliation?from=${from}&to=${today()}`, { token: user.token });
    expect(res.status).toBe(200);
    const want = await truth('anthropic', from, today());
    const computed = [...want.values()].reduce((s, c) => s + c.costMicros, 0n);
    expect(BigInt(Math.round(res.body.total.computedUsd * 1e6))).toBe(computed);
    // Billed: the cost report's cents, summed here as exact decimals.
    const state = await control('anthropic', 'GET', '/state');
    const report = await fetch(`${standIn('anthropic').url}/v1/organizations/cost_report?starting_at=${from}T00:00:00Z&ending_at=${today()}T00:00:00Z&limit=31`, {
      headers: { 'x-api-key': state.adminKey, 'anthropic-version': '2023-06-01' },
    });
    const body = (await report.json()) as any;
    // Cents as exact decimals: cents × 10^12 (every digit the stand-in wrote), then to micro-dollars once.
    const cents = (text: string) => {
      const [w, f = ''] = text.split('.');
      expect(f.length).toBeLessThanOrEqual(12);
      return BigInt(w!) * 10n ** 12n + BigInt(f.padEnd(12, '0'));
    };
    const firstDay = body.data[0];
    const billedDay = res.body.days.find((d: any) => d.date === firstDay.starting_at.slice(0, 10));
    const dayCents = (firstDay.results as any[]).reduce((s, r) => s + cents(r.amount), 0n);
    // $ = cents / 100, so micro-dollars = cents × 10^12 / 10^8, rounded half up once for the day.
    expect(BigInt(Math.round(billedDay.billedUsd * 1e6))).toBe((dayCents + 50_000_000n) / 100_000_000n);
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
    const id = await connect(user, 'anthropic');
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
    const id = await connect(user, 'openai');
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
    expect((await stat(join(dataDir, 'connections-key'))).mode & 0o777).toBe(0o600);
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
    const spellings = ['openai', 'OpenAI', 'openai.', 'openai-', 'open-ai', 'open_ai', 'openai.com', 'OPENAI.COM', ' Open AI ', 'ｏｐｅｎａｉ'];
    const others = ['azure-openai', 'openai-compatible', 'mistral'];
    const events = [...spellings, ...others].map((provider, i) => ({ requestId: `r-${i}`, keyHash: String(i % 10).repeat(64), provider, model: 'gpt-4o', inputTokens: 10, outputTokens: 1 }));
    const res = await call('/ingest', { method: 'POST', headers: { 'x-api-key': created.body.key }, body: { events } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.accepted, JSON.stringify(res.body)).toBe(others.length);
    expect((res.body.rejected as { index: number; code: string }[]).map((r) => [spellings[r.index], r.code])).toEqual(spellings.map((p) => [p, 'provider_connected']));
    const keys = await call('/keys?limit=100', { token: user.token });
    const sent = (keys.body.items as { provider: string; source: string }[]).filter((k) => k.source === 'ingest');
    expect(sent.map((k) => k.provider).sort()).toEqual(['azure-openai', 'mistral', 'openai-compatible']);

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
    const id = await connect(user, 'openai');
    expect((await sync(user.accountId, id)).limitsReached).toContain('keys');
    const conn = await call(`/connections/${id}`, { token: user.token });
    expect(conn.body.statusDetail).toMatch(/key limit \(5 keys\)/);
    const billing = await call('/billing/status', { token: user.token });
    expect(billing.body.usage.keys).toBe(5);
    expect((await call('/keys?limit=100', { token: user.token })).body.items).toHaveLength(5);
    await sync(user.accountId, id);
    const alerts = await call('/alerts?limit=100', { token: user.token });
    expect((alerts.body.items as any[]).filter((a) => a.type === 'plan_limit')).toHaveLength(1);
    await setPlan(user.accountId, 'SCALE');
    const result = await sync(user.accountId, id);
    expect(result.limitsReached).toEqual([]);
    await expectExact(user.token, 'openai');
    expect((await call(`/connections/${id}`, { token: user.token })).body.statusDetail).toBeNull();
  });
});

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
