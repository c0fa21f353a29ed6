/**
 * OpenRouter connections against the local OpenRouter stand-in and the real local stack: the management-key check,
 * the key inventory (disabled keys too), per-key per-day dollars as OpenRouter reports them, today's figure from the
 * keys' `usage_daily`, a re-sync that writes nothing, a 429 waited out, and the key switch (its lever). The
 * stand-in's clock is frozen at noon UTC today, so its figures only change when a test changes them.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRouterClient } from '#shared/connections/openrouter.ts';
import { openRouterLever } from '#shared/enforcement/levers.ts';
import { api, pointConnectorsAtStack, registerUser, setPlan, stack, syncHere, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, type StandInOrg } from './standins.ts';
import { parseCsv } from './csv.ts';

const today = () => new Date().toISOString().slice(0, 10);
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const micros = (usd: number) => BigInt(Math.round(usd * 1e6));

const sent = new Map<string, number>();
const WRITES = ['TransactWriteItemsCommand', 'UpdateItemCommand', 'PutItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand'];

const sync = syncHere;

/** Burnrate's export rows of OpenRouter keys, summed per (key hash, day): dollars, requests, tokens. */
async function exportedDays(token: string, from: string, to: string) {
  const res = await api<string>(`/spend/export?from=${from}&to=${to}`, { token });
  expect(res.status, String(res.body)).toBe(200);
  const [cols, ...lines] = parseCsv(res.body);
  const at = (name: string) => cols!.indexOf(name);
  const out = new Map<string, { costMicros: bigint; requests: number; inputTokens: number; outputTokens: number }>();
  for (const f of lines) {
    if (f[at('provider')] !== 'openrouter') continue;
    const id = `${f[at('key_hash')]}|${f[at('date')]}`;
    const row = out.get(id) ?? { costMicros: 0n, requests: 0, inputTokens: 0, outputTokens: 0 };
    const [whole, frac = ''] = f[at('cost_usd')]!.split('.');
    row.costMicros += BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
    row.requests += Number(f[at('requests')]);
    row.inputTokens += Number(f[at('input_tokens')]);
    row.outputTokens += Number(f[at('output_tokens')]);
    out.set(id, row);
  }
  for (const [id, row] of out) if (row.costMicros === 0n && row.requests === 0 && row.inputTokens === 0) out.delete(id);
  return out;
}

let org: StandInOrg;
let restore: () => void;
let user: RegisteredUser;
let connectionId: string;

beforeAll(async () => {
  org = await newStandInOrg('openrouter', { now: `${today()}T12:00:00Z` });
  restore = await pointConnectorsAtStack(sent, { OPENROUTER_URL: `${stack().openrouter.url}/api/v1` });
  user = await registerUser();
  await setPlan(user.accountId, 'SCALE');
});

afterAll(async () => {
  await org?.remove();
  restore?.();
});

describe('POST /connections {provider: "openrouter"}', () => {
  it('refuses an inference key in words naming management keys, and a key not shaped like an OpenRouter key', async () => {
    const state = await org.state();
    const inference = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openrouter', adminKey: state.inferenceKeys[0] } });
    expect(inference.status).toBe(400);
    expect(inference.body.type).toBe('/problems/connection-refused');
    expect(inference.body.detail).toMatch(/OpenRouter answered 403: Only management keys/);
    expect(inference.body.detail).toMatch(/management key/);
    const shape = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openrouter', adminKey: 'sk-proj-abcdefghijklmnopqrstuvwxyz' } });
    expect(shape.status).toBe(400);
    expect(shape.body.errors[0]).toMatchObject({ path: 'adminKey', message: expect.stringContaining('sk-or-v1-') });
    expect((await api('/connections', { token: user.token })).body.items).toEqual([]);
  });

  it('connects a management key; the import starts at most 30 days back', async () => {
    const res = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openrouter', adminKey: org.adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const n = new Date();
    const firstOfPrevious = new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
    const oldest = addDays(today(), -30);
    expect(res.body).toMatchObject({ provider: 'openrouter', name: 'OpenRouter organization', keyHint: org.adminKey.slice(-4), importedFrom: oldest > firstOfPrevious ? oldest : firstOfPrevious });
    connectionId = res.body.id;
  });
});

describe('the OpenRouter sync', () => {
  it('lists every key with its name, label and status, disabled ones included, and a deleted key with history', { timeout: 120_000 }, async () => {
    const first = await sync(user.accountId, connectionId);
    expect(first.status, JSON.stringify((await api(`/connections/${connectionId}`, { token: user.token })).body.statusDetail)).toBe('done');
    const state = await org.state();
    const keys = await api(`/keys?provider=openrouter&limit=100`, { token: user.token });
    const byHash = new Map((keys.body.items as any[]).map((k) => [k.hash, k]));
    const listed = (state.keys as any[]).filter((k) => k.status !== 'deleted');
    expect(listed.some((k) => k.status === 'inactive')).toBe(true);
    expect(listed.some((k) => typeof k.limit === 'number')).toBe(true);
    for (const k of listed) {
      expect(byHash.get(keyHash('openrouter', k.id)), k.name).toMatchObject({
        source: 'connection',
        provider: 'openrouter',
        name: k.name,
        hint: k.redacted,
        providerKeyId: k.id,
        project: null,
        providerStatus: k.status === 'active' ? 'active' : 'inactive',
        providerLimitUsd: k.limit ?? null,
      });
    }
    // A key deleted before the connection was made is in no listing: its spend is only in the account's total.
    const never = (state.keys as any[]).find((k) => k.status === 'deleted');
    expect(byHash.has(keyHash('openrouter', never.id))).toBe(false);

    // A key deleted after it was imported keeps its history (its activity is still read), as deleted.
    const batch = listed.find((k) => k.name === 'Batch jobs');
    const hash = keyHash('openrouter', batch.id);
    const yesterday = addDays(today(), -1);
    const before = (await api(`/keys/${hash}?from=${addDays(today(), -3)}&to=${yesterday}`, { token: user.token })).body;
    await org.control(`/keys/${batch.id}`, undefined, 'DELETE');
    expect((await sync(user.accountId, connectionId)).status).toBe('done');
    const after = (await api(`/keys/${hash}?from=${addDays(today(), -3)}&to=${yesterday}`, { token: user.token })).body;
    expect(after).toMatchObject({ providerStatus: 'deleted', name: 'Batch jobs' });
    expect(after.breakdown.daily).toEqual(before.breakdown.daily);
    expect(after.breakdown.daily.some((d: any) => d.costUsd > 0)).toBe(true);
  });

  it('per key and day: the dollars, requests and tokens of the activity exactly; today: the keys’ usage_daily', async () => {
    const from = (await api(`/connections/${connectionId}`, { token: user.token })).body.importedFrom as string;
    const got = await exportedDays(user.token, from, today());
    // What OpenRouter reports, read from the stand-in's own API: the account's activity per key, and usage_daily.
    const want = new Map<string, { costMicros: bigint; requests: number; inputTokens: number; outputTokens: number }>();
    const state = await org.state();
    for (const k of state.keys as any[]) {
      if (k.status === 'deleted') continue;
      const res = await org.get(`/api/v1/activity?api_key_hash=${k.id}`);
      expect(res.status).toBe(200);
      for (const r of res.body.data as any[]) {
        if (r.date < from) continue;
        const id = `${keyHash('openrouter', k.id)}|${r.date}`;
        const row = want.get(id) ?? { costMicros: 0n, requests: 0, inputTokens: 0, outputTokens: 0 };
        row.costMicros += micros(r.usage);
        row.requests += r.requests;
        row.inputTokens += r.prompt_tokens;
        row.outputTokens += r.completion_tokens;
        want.set(id, row);
      }
    }
    const listing = await org.get('/api/v1/keys?include_disabled=true');
    for (const k of listing.body.data as any[]) {
      if (k.usage_daily > 0) want.set(`${keyHash('openrouter', k.hash)}|${today()}`, { costMicros: micros(k.usage_daily), requests: 0, inputTokens: 0, outputTokens: 0 });
    }
    expect(want.size).toBeGreaterThan(50);
    // The deleted key's history is not in the keys' activity: compare the listed keys only.
    const listedHashes = new Set((state.keys as any[]).filter((k) => k.status !== 'deleted').map((k) => keyHash('openrouter', k.id)));
    const mine = new Map([...got].filter(([id]) => listedHashes.has(id.split('|')[0]!)));
    expect(Object.fromEntries(mine)).toEqual(Object.fromEntries(want));
    // The reconciliation: the account's total per day (every key, the deleted one too) against the keys' activity.
    const recon = await api(`/connections/${connectionId}/reconciliation?from=${from}&to=${addDays(today(), -1)}`, { token: user.token });
    expect(recon.status).toBe(200);
    const day = (recon.body.days as any[]).find((d) => d.date === addDays(today(), -3));
    expect(day.billedUsd).not.toBeNull();
    expect(day.computedUsd).toBe(day.billedUsd);
  });

  it('today’s figure follows usage_daily; a re-sync with nothing new writes no spend', async () => {
    const state = await org.state();
    const prod = (state.keys as any[]).find((k) => k.name === 'Production');
    const hash = keyHash('openrouter', prod.id);
    const before = (await api(`/keys/${hash}`, { token: user.token })).body;
    await org.control('/usage', { apiKeyId: prod.id, model: 'openai/gpt-4.1', tier: 'OpenAI', add: { cost: 1_234_567, requests: 3, prompt: 900, completion: 100 } });
    expect((await sync(user.accountId, connectionId)).cellsChanged).toBeGreaterThan(0);
    const after = (await api(`/keys/${hash}`, { token: user.token })).body;
    expect(micros(after.spend.today) - micros(before.spend.today)).toBe(1_234_567n);
    const listed = (await org.get(`/api/v1/keys/${prod.id}`)).body.data;
    expect(micros(after.spend.today)).toBe(micros(listed.usage_daily));
    const daily = (await api(`/keys/${hash}?from=${today()}&to=${today()}`, { token: user.token })).body.breakdown;
    // Today's usage_daily is no model (OpenRouter reports models once the day is complete).
    expect(daily.byModel).toEqual([]);
    expect(micros(daily.notByModelUsd)).toBe(micros(listed.usage_daily));

    const writesBefore = new Map(sent);
    const again = await sync(user.accountId, connectionId);
    expect(again).toMatchObject({ status: 'done', cellsChanged: 0, transactions: 0 });
    expect((sent.get('TransactWriteItemsCommand') ?? 0) - (writesBefore.get('TransactWriteItemsCommand') ?? 0)).toBe(0);
  });

  it('waits out a 429 for the Retry-After OpenRouter sends', async () => {
    await org.control('/faults', { status: 429, count: 2, retryAfter: 1, pathPrefix: '/api/v1/keys' });
    const waits: number[] = [];
    const result = await sync(user.accountId, connectionId, { http: { sleep: async (ms) => void waits.push(ms) } });
    expect(result.status).toBe('done');
    expect(waits).toEqual([1000, 1000]);
    expect((await api(`/connections/${connectionId}`, { token: user.token })).body.status).toBe('active');
  });

  it('the key switch disables a key at OpenRouter (its usage stops) and enables it again', async () => {
    const state = await org.state();
    const staging = (state.keys as any[]).find((k) => k.name === 'Staging');
    const lever = openRouterLever(stack().openrouter.url, org.adminKey);
    const usageAt = async () => (await org.get(`/api/v1/keys/${staging.id}`)).body.data;
    await lever.stopKey!(staging.id);
    const stopped = await usageAt();
    expect(stopped.disabled).toBe(true);
    await org.control('/clock', { now: `${today()}T14:00:00Z` });
    expect((await usageAt()).usage_daily).toBe(stopped.usage_daily);
    expect((await sync(user.accountId, connectionId)).status).toBe('done');
    expect((await api(`/keys/${keyHash('openrouter', staging.id)}`, { token: user.token })).body.providerStatus).toBe('inactive');

    await lever.startKey!(staging.id);
    expect((await usageAt()).disabled).toBe(false);
    await org.control('/clock', { now: `${today()}T16:00:00Z` });
    expect((await usageAt()).usage_daily).toBeGreaterThan(stopped.usage_daily);
    expect((await sync(user.accountId, connectionId)).status).toBe('done');
    expect((await api(`/keys/${keyHash('openrouter', staging.id)}`, { token: user.token })).body.providerStatus).toBe('active');
  });
});

describe('the OpenRouter lever', () => {
  it('a KEY stop budget disables its OpenRouter key within one sync of crossing; the release enables it again', { timeout: 120_000 }, async () => {
    const state = await org.state();
    const prod = (state.keys as any[]).find((k) => k.name === 'Production');
    const hash = keyHash('openrouter', prod.id);
    const spend = (await api(`/keys/${hash}`, { token: user.token })).body.spend.monthToDate as number;
    expect(spend).toBeGreaterThan(2);
    expect((await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { enforcement: 'on' } })).status).toBe(200);
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { name: 'router cap', monthlyLimit: Math.floor(spend) - 1, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect((await sync(user.accountId, connectionId)).status).toBe('done');
    expect((await org.get(`/api/v1/keys/${prod.id}`)).body.data.disabled).toBe(true);
    const acts = async () => (await api(`/enforcement-actions?budgetId=${id}`, { token: user.token })).body.items as any[];
    // The key switch, and the key's own limit (a native cap: OpenRouter refuses the key past it by itself).
    expect((await acts()).map((a) => a.kind).sort()).toEqual(['key_disabled', 'key_limit_set']);
    expect((await acts()).find((a) => a.kind === 'key_disabled')).toMatchObject({ provider: 'openrouter', keyHash: hash, reason: 'limit_reached', result: 'ok' });

    const released = await api(`/budgets/${id}/release`, { method: 'POST', token: user.token });
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    await expect.poll(async () => (await org.get(`/api/v1/keys/${prod.id}`)).body.data.disabled, { timeout: 30_000 }).toBe(false);
    // The act is recorded after the lever's call: the stand-in can show the key enabled a moment before the record lands.
    await expect.poll(async () => (await acts()).find((a) => a.kind === 'key_enabled'), { timeout: 30_000 }).toMatchObject({ kind: 'key_enabled', provider: 'openrouter', reason: 'released', result: 'ok' });
  });
});

describe('three providers in one ledger: projects as a dimension', () => {
  let owner: RegisteredUser;
  const orgs: StandInOrg[] = [];
  let from: string;

  beforeAll(async () => {
    owner = await registerUser();
    await setPlan(owner.accountId, 'SCALE');
    const noon = `${today()}T12:00:00Z`;
    for (const provider of ['openai', 'anthropic', 'openrouter'] as const) {
      const o = await newStandInOrg(provider, { now: noon, late: null });
      orgs.push(o);
      const res = await api('/connections', { method: 'POST', token: owner.token, body: { provider, adminKey: o.adminKey } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect((await sync(owner.accountId, res.body.id)).status).toBe('done');
    }
    from = addDays(today(), -20);
  }, 240_000);

  afterAll(async () => {
    for (const o of orgs) await o.remove();
  });

  it('groupBy=project: one group per (provider, project), most cost first, summing to the total; projectId filters /spend and /keys', async () => {
    const all = await api(`/spend?from=${from}&to=${today()}&groupBy=provider`, { token: owner.token });
    const byProject = await api(`/spend?from=${from}&to=${today()}&groupBy=project`, { token: owner.token });
    expect(byProject.status, JSON.stringify(byProject.body)).toBe(200);
    const groups = byProject.body.groups as any[];
    expect(micros(byProject.body.total.costUsd)).toBe(micros(all.body.total.costUsd));
    expect(groups.reduce((s, g) => s + micros(g.costUsd), 0n)).toBe(micros(all.body.total.costUsd));
    for (let i = 1; i < groups.length; i++) expect(groups[i - 1].costUsd).toBeGreaterThanOrEqual(groups[i].costUsd);
    const openai = await orgs[0]!.state();
    const active = (openai.projects as any[]).filter((p) => groups.some((g) => g.project?.id === p.id));
    expect(active.length).toBeGreaterThanOrEqual(2);
    for (const p of active) expect(groups.find((g) => g.project?.id === p.id)).toMatchObject({ provider: 'openai', project: { id: p.id, name: p.name } });
    expect(groups.find((g) => g.provider === 'openrouter')).toMatchObject({ project: null });
    expect(groups.some((g) => g.provider === 'anthropic' && g.project?.name === 'Default workspace')).toBe(true);

    const top = groups.find((g) => g.project !== null)!;
    const one = await api(`/spend?from=${from}&to=${today()}&projectId=${encodeURIComponent(top.project.id)}&groupBy=key`, { token: owner.token });
    expect(one.status).toBe(200);
    expect(micros(one.body.total.costUsd)).toBe(micros(top.costUsd));
    const days = await api(`/spend?from=${from}&to=${today()}&projectId=${encodeURIComponent(top.project.id)}`, { token: owner.token });
    expect(micros(days.body.total.costUsd)).toBe(micros(top.costUsd));
    const keys = await api(`/keys?projectId=${encodeURIComponent(top.project.id)}&limit=100`, { token: owner.token });
    expect(keys.body.items.length).toBeGreaterThan(0);
    expect(keys.body.total).toBe(keys.body.items.length);
    for (const k of keys.body.items as any[]) expect(k.project.id).toBe(top.project.id);
    expect(new Set((one.body.groups as any[]).map((g) => g.hash)).size).toBeLessThanOrEqual(keys.body.items.length);
    for (const g of one.body.groups as any[]) expect((keys.body.items as any[]).some((k) => k.hash === g.hash)).toBe(true);
  });

  it('a FOCUS export of the month reads as FOCUS 1.2 and its BilledCost sums to GET /spend to the micro-dollar', { timeout: 60_000 }, async () => {
    const first = `${today().slice(0, 8)}01`;
    const created = await api('/spend/exports', { method: 'POST', token: owner.token, body: { from: first, to: today(), format: 'focus' } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(created.body.format).toBe('focus');
    let ready: any;
    for (let i = 0; i < 600 && ready?.status !== 'ready'; i++) {
      ready = (await api(`/spend/exports/${created.body.id}`, { token: owner.token })).body;
      expect(ready.status).not.toBe('failed');
      if (ready.status !== 'ready') await new Promise((r) => setTimeout(r, 50));
    }
    const download = await fetch(ready.url);
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="burnrate-focus-${first}-to-${today()}.csv.gz"`);
    const rows = parseCsv(gunzipSync(Buffer.from(await download.arrayBuffer())).toString('utf8'));
    const [header, ...data] = rows;
    const required = ['BilledCost', 'BillingCurrency', 'BillingPeriodStart', 'BillingPeriodEnd', 'ChargeCategory', 'ChargeDescription', 'ChargePeriodStart', 'ChargePeriodEnd',
      'ConsumedQuantity', 'ConsumedUnit', 'EffectiveCost', 'ListCost', 'ProviderName', 'PublisherName', 'ServiceName', 'ServiceCategory', 'ResourceId', 'ResourceName',
      'SubAccountId', 'SubAccountName', 'Tags'];
    for (const column of required) expect(header, column).toContain(column);
    const records = data.map((r) => Object.fromEntries(header!.map((c, i) => [c, r[i]!])));
    expect(records.length).toBeGreaterThan(100);
    const decimal = /^-?\d+(\.\d+)?$/;
    const utc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
    const providers = new Set<string>();
    let billed = 0n;
    for (const r of records) {
      for (const c of ['BilledCost', 'EffectiveCost', 'ListCost', 'ConsumedQuantity']) expect(r[c], c).toMatch(decimal);
      for (const c of ['BillingPeriodStart', 'BillingPeriodEnd', 'ChargePeriodStart', 'ChargePeriodEnd']) expect(r[c], c).toMatch(utc);
      expect(Date.parse(r.ChargePeriodEnd!) - Date.parse(r.ChargePeriodStart!)).toBe(86_400_000);
      // A correction (history of a month closed before its connection imported it) is billed in the month it is booked in.
      if (r.ChargeClass === 'Correction') expect(r.BillingPeriodStart).toBe(`${today().slice(0, 8)}01T00:00:00Z`);
      else expect(r.BillingPeriodStart).toBe(`${r.ChargePeriodStart!.slice(0, 8)}01T00:00:00Z`);
      expect(r).toMatchObject({ BillingCurrency: 'USD', ChargeCategory: 'Usage', ServiceCategory: 'AI and Machine Learning', ServiceSubcategory: 'Generative AI', x_Source: 'connection' });
      expect(r.ConsumedUnit).not.toBe('');
      // A key's row, or usage without a key (no resource).
      expect(r.ResourceId).toMatch(/^([0-9a-f]{64})?$/);
      // Tags: only the account's tags (none here), never Burnrate's flags (x_Settled says settled).
      expect(JSON.parse(r.Tags!)).toEqual({});
      expect(r.x_Settled).toMatch(/^(true|false)$/);
      providers.add(r.ProviderName!);
      const [whole, frac = ''] = r.BilledCost!.split('.');
      billed += BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
    }
    expect([...providers].sort()).toEqual(['Anthropic', 'OpenAI', 'OpenRouter']);
    // Projects as sub-accounts: OpenAI projects and Anthropic workspaces named, OpenRouter keys without one.
    expect(records.some((r) => r.ProviderName === 'OpenAI' && r.SubAccountId!.startsWith('proj_') && r.SubAccountName !== '')).toBe(true);
    expect(records.filter((r) => r.ProviderName === 'OpenRouter').every((r) => r.SubAccountId === '' && r.SubAccountName === '')).toBe(true);
    const spend = await api(`/spend?from=${first}&to=${today()}`, { token: owner.token });
    expect(billed).toBe(micros(spend.body.total.costUsd));
  });
});

describe('rotating an OpenRouter management key', () => {
  it('a management key of another OpenRouter account: 400 saying so, nothing changed; a new key of the same account is taken', async () => {
    const before = await api(`/connections/${connectionId}`, { token: user.token });
    // Another account (another seed: its own keys, so no key hash in common).
    const other = await fetch(`${org.url}/_burnrate/orgs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seed: 'contoso' }) }).then((r) => r.json() as Promise<{ id: string; adminKey: string }>);
    try {
      const res = await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { adminKey: other.adminKey } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.errors).toEqual([{ path: 'adminKey', message: expect.stringContaining('different OpenRouter organization') }]);
      expect(JSON.stringify(res.body)).not.toContain(other.adminKey);
      expect((await api(`/connections/${connectionId}`, { token: user.token })).body).toEqual(before.body);
    } finally {
      await fetch(`${org.url}/_burnrate/orgs/${other.id}`, { method: 'DELETE' });
    }
    // A new management key of the same account (the stand-in issues it; the old one stops working).
    const { adminKey } = await org.control<{ adminKey: string }>('/admin-key', { rotate: true });
    const same = await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { adminKey } });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body.keyHint).toBe(adminKey.slice(-4));
  });
});
