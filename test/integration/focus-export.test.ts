/**
 * The month's exports as a finance team books them (docs/features/spend-and-exports.md), on a stack with all three
 * connections (the stand-ins' seeded organizations: tiers, Priority Tier, web search, long context, usage without a
 * key), an account's own price, and keys that report through `/ingest` (a reporter's key):
 * - the FOCUS export passes every MUST rule of the FinOps Foundation's FOCUS 1.2 rules (model-1.2.json of
 *   focus_validator, kept under test/fixtures/focus/) that applies to the criteria Burnrate declares: 0 failures;
 * - the CSV `settled` column and FOCUS `x_Settled` equal GET /spend?groupBy=day, row by row; Priority Tier on rows of
 *   its own, never settled;
 * - one FOCUS row per day × key × price line: unit price × quantity = cost, BilledCost summing to GET /spend, the
 *   provider organization as the billing account, display names, no resource for usage without a key, exact values;
 * - a settled Anthropic line is allocated to keys by that line's own estimate (tokens by tokens, web search by
 *   searches).
 */
import { createHash, randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, pointConnectorsAtStack, registerUser, setPlan, stack, syncHere, type RegisteredUser } from './harness.ts';
import { newStandInOrg, type StandInOrg } from './standins.ts';
import { parseCsv } from './csv.ts';
import { BURNRATE_CRITERIA, datasetOf, evaluate } from '../support/focus-rules.ts';

const today = () => new Date().toISOString().slice(0, 10);
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** Exact µ$ of a decimal dollar text. */
const microsOf = (text: string) => {
  const negative = text.startsWith('-');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const v = BigInt(whole!) * 1_000_000n + BigInt(frac.slice(0, 6).padEnd(6, '0'));
  return negative ? -v : v;
};
const usdMicros = (usd: number) => BigInt(Math.round(usd * 1e6));
/** A decimal text exactly, as `digits` at 10^-60 (every FOCUS decimal has fewer places). */
const exact = (text: string): bigint => {
  expect(text).toMatch(/^-?\d+\.\d+$/);
  const [whole, frac] = text.replace('-', '').split('.');
  const v = BigInt(whole!) * 10n ** 60n + BigInt(frac!.padEnd(60, '0'));
  return text.startsWith('-') ? -v : v;
};
/** a × b exactly, at 10^-60. */
const times = (a: string, b: string): bigint => (exact(a) * exact(b)) / 10n ** 60n;

const sent = new Map<string, number>();
let restore: () => void;

beforeAll(async () => {
  restore = await pointConnectorsAtStack(sent, { OPENROUTER_URL: `${stack().openrouter.url}/api/v1` });
});
afterAll(() => restore?.());

async function focusExport(token: string, from: string, to: string): Promise<string> {
  const created = await api('/spend/exports', { method: 'POST', token, body: { from, to, format: 'focus' } });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  let ready: any;
  for (let i = 0; i < 1200 && ready?.status !== 'ready'; i++) {
    ready = (await api(`/spend/exports/${created.body.id}`, { token })).body;
    expect(ready.status).not.toBe('failed');
    if (ready.status !== 'ready') await new Promise((r) => setTimeout(r, 50));
  }
  const download = await fetch(ready.url);
  return gunzipSync(Buffer.from(await download.arrayBuffer())).toString('utf8');
}

const records = (csv: string) => {
  const [header, ...rows] = parseCsv(csv);
  return { header: header!, rows: rows.map((r) => Object.fromEntries(header!.map((c, i) => [c, r[i]!]))) };
};

describe('the exports of an account with three connections, own prices and reporter keys', () => {
  let owner: RegisteredUser;
  const orgs: StandInOrg[] = [];
  const connections = new Map<string, { id: string; name: string }>();
  let from: string;
  let focus: string;
  let csv: string;
  const label = `'@ops;'=SUM(A1)`;
  const reporterKey = sha256(randomUUID());

  beforeAll(async () => {
    owner = await registerUser();
    await setPlan(owner.accountId, 'SCALE');
    // An own price (contracted ≠ list) for a model the Anthropic organization uses.
    const own = await api('/prices/anthropic/claude-haiku-4-5', { method: 'PUT', token: owner.token, body: { input: 0.8, output: 4 } });
    expect(own.status, JSON.stringify(own.body)).toBeLessThan(300);
    const noon = `${today()}T12:00:00Z`;
    for (const provider of ['openai', 'anthropic', 'openrouter'] as const) {
      const o = await newStandInOrg(provider, { now: noon, late: null });
      orgs.push(o);
      const res = await api('/connections', { method: 'POST', token: owner.token, body: { provider, adminKey: o.adminKey } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      connections.set(provider, { id: res.body.id, name: res.body.name });
      expect((await syncHere(owner.accountId, res.body.id)).status).toBe('done');
    }
    // Keys that report through /ingest (providers without a connection): priced, with tools and cache writes, and a
    // model the table lacks with its own cost.
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: owner.token, body: {} })).body.key;
    const other = sha256(randomUUID());
    const events = [
      { requestId: randomUUID(), keyHash: reporterKey, provider: 'google', model: 'gemini-9-ultra', inputTokens: 1200, outputTokens: 300, costUsd: 0.0123 },
      { requestId: randomUUID(), keyHash: reporterKey, provider: 'xai', model: 'grok-9', inputTokens: 500, outputTokens: 50, costUsd: 0.002 },
      { requestId: randomUUID(), keyHash: other, provider: 'mistral', model: 'mistral-large-9', inputTokens: 10, outputTokens: 10 },
    ];
    const ingested = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events } });
    expect(ingested.body.rejected, JSON.stringify(ingested.body)).toEqual([]);
    expect((await api(`/keys/${reporterKey}`, { method: 'PATCH', token: owner.token, body: { label } })).status).toBe(200);
    // The account's tags on a key: the only thing FOCUS `Tags` and the CSV's `tags` hold.
    const tagged = await api(`/keys/${reporterKey}`, { method: 'PATCH', token: owner.token, body: { tags: { team: '=ops', env: 'prod' } } });
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(200);
    from = `${today().slice(0, 8)}01` < addDays(today(), -12) ? `${today().slice(0, 8)}01` : addDays(today(), -12);
    focus = await focusExport(owner.token, from, today());
    const sync = await api<string>(`/spend/export?from=${from}&to=${today()}`, { token: owner.token });
    expect(sync.status, String(sync.body)).toBe(200);
    csv = sync.body;
  }, 300_000);

  afterAll(async () => {
    for (const o of orgs) await o.remove();
  });

  it("passes every MUST rule of the Foundation's FOCUS 1.2 rules for the criteria Burnrate declares", () => {
    const result = evaluate(datasetOf(parseCsv(focus)), BURNRATE_CRITERIA);
    expect(result.evaluated.length).toBeGreaterThan(150);
    expect(result.failures.map((f) => `${f.rule} (${f.violations}): ${f.mustSatisfy} ${f.detail}`)).toEqual([]);
  });

  it('the CSV header is the contract\'s; settled flags (CSV and FOCUS) equal GET /spend?groupBy=day row by row; Priority Tier is never settled', async () => {
    const { header, rows } = records(csv);
    expect(header.join(',')).toBe('date,key_hash,key_label,key_name,project_id,project_name,settled,correction,tags,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd');
    const settledDays = new Map<string, Map<string, boolean>>();
    for (const provider of ['openai', 'anthropic', 'openrouter']) {
      const days = await api(`/spend?from=${from}&to=${today()}&groupBy=day&provider=${provider}`, { token: owner.token });
      expect(days.status).toBe(200);
      settledDays.set(provider, new Map((days.body.groups as any[]).map((g) => [g.date, g.settled])));
      const recon = await api(`/connections/${connections.get(provider)!.id}/reconciliation?from=${from}&to=${today()}`, { token: owner.token });
      if (recon.status === 200) for (const d of recon.body.days as any[]) expect(d.settled, `${provider} ${d.date}`).toBe(settledDays.get(provider)!.get(d.date));
    }
    expect([...settledDays.get('anthropic')!.values()].some(Boolean)).toBe(true);
    let settled = 0;
    for (const r of rows) {
      const connected = settledDays.get(r.provider!);
      const expected = connected ? connected.get(r.date!) === true && !r.model!.endsWith('(priority)') : false;
      expect(r.settled, `${r.provider} ${r.date} ${r.model}`).toBe(String(expected));
      // A closed month's later revisions are corrections (rows of their own, booked on the day found).
      expect(['true', 'false']).toContain(r.correction);
      expect(JSON.parse(r.tags!)).toEqual(r.key_hash === reporterKey ? { team: '=ops', env: 'prod' } : {});
      if (expected) settled += 1;
    }
    expect(settled).toBeGreaterThan(50);
    // Priority Tier usage: rows of their own, never settled.
    const priority = rows.filter((r) => r.model!.endsWith('(priority)'));
    expect(priority.length).toBeGreaterThan(0);
    expect(priority.every((r) => r.settled === 'false')).toBe(true);
    const f = records(focus).rows;
    for (const r of f) {
      const provider = ({ OpenAI: 'openai', Anthropic: 'anthropic', OpenRouter: 'openrouter' } as Record<string, string>)[r.ProviderName!];
      const priorityTier = provider === 'anthropic' && r.SkuPriceId!.includes('/priority');
      const expected = provider ? settledDays.get(provider)!.get(r.ChargePeriodStart!.slice(0, 10)) === true && !priorityTier : false;
      expect(r.x_Settled, `${r.SkuPriceId} ${r.ChargePeriodStart}`).toBe(String(expected));
      expect(JSON.parse(r.Tags!)).toEqual(r.ResourceId === reporterKey ? { team: '=ops', env: 'prod' } : {});
    }
  });

  it('FOCUS: a row per price line whose unit price × quantity is its list and contracted cost, BilledCost summing to GET /spend, the provider organization as the billing account', async () => {
    const { rows } = records(focus);
    const spend = await api(`/spend?from=${from}&to=${today()}`, { token: owner.token });
    expect(rows.reduce((s, r) => s + microsOf(r.BilledCost!), 0n)).toBe(usdMicros(spend.body.total.costUsd));
    const csvRows = records(csv).rows;
    expect(csvRows.reduce((s, r) => s + microsOf(r.cost_usd!), 0n)).toBe(usdMicros(spend.body.total.costUsd));
    for (const r of rows) {
      expect(r.SkuPriceId!.startsWith(`${r.SkuId}/`), r.SkuPriceId).toBe(true);
      expect(r.EffectiveCost).toBe(r.BilledCost);
      expect(JSON.parse(r.SkuPriceDetails!)).toEqual(expect.any(Object));
      if (microsOf(r.BilledCost!) !== 0n) expect(Number(r.ConsumedQuantity), `${r.SkuPriceId} has cost`).not.toBe(0);
      expect(times(r.ListUnitPrice!, r.PricingQuantity!), r.SkuPriceId).toBe(exact(r.ListCost!));
      expect(times(r.ContractedUnitPrice!, r.PricingQuantity!), r.SkuPriceId).toBe(exact(r.ContractedCost!));
      expect(r.ServiceSubcategory).toBe('Generative AI');
      expect(['table', 'own', 'billed']).toContain(r.x_PriceSource);
    }
    // Lines: input, cached input, cache writes, output, tiers, web search, images.
    const lines = new Set(rows.map((r) => r.SkuPriceId!.split('/').slice(2).join('/')));
    for (const l of ['input', 'cached_input', 'cache_write_5m', 'cache_write_1h', 'output', 'output/batch', 'output/priority', 'web_search', 'input/long_context']) expect(lines, l).toContain(l);
    expect(rows.some((r) => r.SkuPriceId!.startsWith('openai/') && r.ConsumedUnit === 'Images')).toBe(true);
    // The own price: contracted ≠ list, and said so.
    const haiku = rows.find((r) => r.SkuPriceId === 'anthropic/claude-haiku-4-5-20251001/input' && r.x_PriceSource === 'own')!;
    expect(haiku).toBeDefined();
    expect(haiku.ContractedUnitPrice).toBe('0.8');
    expect(haiku.ListUnitPrice).toBe('1.0');
    // Billing accounts: Anthropic's organization id as its API names it; the OpenAI and OpenRouter connections; the Burnrate account.
    const me = await orgs[1]!.get('/v1/organizations/me');
    expect(me.status).toBe(200);
    const byProvider = (name: string) => rows.filter((r) => r.ProviderName === name);
    expect(new Set(byProvider('Anthropic').map((r) => r.BillingAccountId))).toEqual(new Set([me.body.id]));
    expect(new Set(byProvider('Anthropic').map((r) => r.BillingAccountName))).toEqual(new Set([connections.get('anthropic')!.name]));
    expect(new Set(byProvider('OpenAI').map((r) => r.BillingAccountId))).toEqual(new Set([connections.get('openai')!.id]));
    expect(new Set(byProvider('OpenRouter').map((r) => r.BillingAccountId))).toEqual(new Set([connections.get('openrouter')!.id]));
    expect(new Set(rows.filter((r) => r.x_Source === 'ingest').map((r) => r.BillingAccountId))).toEqual(new Set([owner.accountId]));
    for (const r of rows) expect(r.InvoiceIssuerName).toBe(r.ProviderName);
    // Display names from one table; an unknown provider as sent.
    expect(new Set(rows.map((r) => r.ProviderName))).toEqual(new Set(['OpenAI', 'Anthropic', 'OpenRouter', 'Google', 'xAI', 'Mistral']));
    expect(new Set(byProvider('Google').map((r) => r.ServiceName))).toEqual(new Set(['Google API']));
    // Usage without a key: no resource.
    const keyless = rows.filter((r) => r.ResourceId === '');
    expect(keyless.length).toBeGreaterThan(0);
    for (const r of keyless) expect([r.ResourceName, r.ResourceType, r.x_KeyLabel]).toEqual(['', '', '']);
    expect(rows.filter((r) => r.ResourceId !== '').every((r) => /^[0-9a-f]{64}$/.test(r.ResourceId!) && r.ResourceType === 'API Key')).toBe(true);
    // Exact values in FOCUS; neutralised the same way in every CSV column.
    const reporter = rows.filter((r) => r.ResourceId === reporterKey);
    expect(reporter.length).toBeGreaterThan(0);
    for (const r of reporter) expect([r.ResourceName, r.x_KeyLabel]).toEqual([label, label]);
    const csvReporter = parseCsv(csv).filter((r) => r[1] === reporterKey);
    expect(csvReporter.length).toBeGreaterThan(0);
    // The CSV: quoted (it holds a `;`), already starting with `'`; the same text in every line of the key.
    const reporterLines = csv.split('\r\n').filter((l) => l.includes(reporterKey));
    expect(reporterLines.length).toBeGreaterThan(0);
    for (const l of reporterLines) expect(l).toContain(`,"'@ops;'=SUM(A1)",`);
    for (const r of csvReporter) expect(r[2]).toBe(label);
    // A model the table lacks, with its own cost: priced as billed.
    const google = byProvider('Google');
    expect(google.every((r) => r.x_PriceSource === 'billed' && r.ListUnitPrice === r.ContractedUnitPrice)).toBe(true);
  });
});

describe('allocating a settled Anthropic day to the keys of a workspace', () => {
  let org: StandInOrg;
  let owner: RegisteredUser;

  beforeAll(async () => {
    owner = await registerUser();
    await setPlan(owner.accountId, 'SCALE');
    // Two days of seeded usage: the day allocated is yesterday's, in a workspace of the test's own.
    org = await newStandInOrg('anthropic', { now: `${today()}T12:00:00Z`, late: null, historyDays: 2 });
  });
  afterAll(async () => org?.remove());

  it('tokens go by the keys\' token estimates (1 : 3), the web searches to the key that made them', { timeout: 120_000 }, async () => {
    const yesterday = addDays(today(), -1);
    const workspace = await org.control('/projects', { name: 'Allocation' });
    const a = await org.control('/keys', { name: 'searcher', projectId: workspace.id });
    const b = await org.control('/keys', { name: 'plain', projectId: workspace.id });
    const model = 'claude-sonnet-4-5-20250929';
    // Tokens exactly 1 : 3 ($0.45 : $1.35), and 30 web searches ($0.30) by the first key only.
    await org.control('/usage', { apiKeyId: a.id, model, date: yesterday, add: { uncached: 100_000, output: 10_000, webSearch: 30 } });
    await org.control('/usage', { apiKeyId: b.id, model, date: yesterday, add: { uncached: 300_000, output: 30_000 } });
    const res = await api('/connections', { method: 'POST', token: owner.token, body: { provider: 'anthropic', adminKey: org.adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await syncHere(owner.accountId, res.body.id)).status).toBe('done');
    const day = async (keyId: string) => {
      const hash = sha256(`anthropic:${keyId}`);
      const key = await api(`/keys/${hash}?from=${yesterday}&to=${yesterday}`, { token: owner.token });
      expect(key.status, JSON.stringify(key.body)).toBe(200);
      const d = (key.body.breakdown.daily as any[]).find((x) => x.date === yesterday);
      expect(d.settled).toBe(true);
      return usdMicros(d.costUsd);
    };
    expect(await day(a.id)).toBe(750_000n);
    expect(await day(b.id)).toBe(1_350_000n);
  });
});
