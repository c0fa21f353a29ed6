/**
 * The stand-ins of the OpenAI and Anthropic admin APIs that `npm start` runs, held to what the providers' public
 * references document (https://github.com/openai/openai-openapi, https://platform.claude.com/docs/en/api/admin): paths
 * and headers, the three array spellings, bucket limits, opaque page tokens bound to their query, null dimensions, a
 * partial current bucket that grows, Anthropic's cents as decimal strings, each provider's error shape, 429 +
 * Retry-After — and their control API (usage added and revised, keys, a revoked admin key, faults, the big
 * organization, the truth).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicAdmin } from '#local/anthropic-admin.ts';
import { stack } from './harness.ts';
import { authHeaders, newStandInOrg, standInUrl, type StandInOrg } from './standins.ts';

const DAY = 86_400;
const dayOf = (t: number) => Math.floor(t / DAY) * DAY;
const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
const unix = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

/** Every page of a paged usage/cost read: follows `next_page` with the same query. */
async function allPages(org: StandInOrg, path: string): Promise<{ buckets: any[]; pages: number; tokens: string[] }> {
  const buckets: any[] = [];
  const tokens: string[] = [];
  let next: string | null = null;
  let pages = 0;
  do {
    const res = await org.get(next ? `${path}&page=${encodeURIComponent(next)}` : path);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    buckets.push(...res.body.data);
    pages += 1;
    next = res.body.next_page;
    expect(res.body.has_more).toBe(next !== null);
    if (next) tokens.push(next);
  } while (next && pages < 500);
  return { buckets, pages, tokens };
}

/** Bucket start as unix seconds, for either provider. */
const startOf = (b: any) => (typeof b.start_time === 'number' ? b.start_time : Date.parse(b.starting_at) / 1000);

function sumRows(rows: any[], fields: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const row of rows) for (const f of fields) out[f] = (out[f] ?? 0) + f.split('.').reduce((v, p) => v?.[p], row);
  return out;
}

const OPENAI_FIELDS = ['input_tokens', 'input_cached_tokens', 'input_cache_write_tokens', 'output_tokens', 'num_model_requests'];
const ANTHROPIC_FIELDS = ['uncached_input_tokens', 'cache_read_input_tokens', 'cache_creation.ephemeral_5m_input_tokens', 'cache_creation.ephemeral_1h_input_tokens', 'output_tokens'];

describe('the stack runs both stand-ins', () => {
  it('names them in the stack info with their main organizations\' admin keys, on this machine only', async () => {
    const info = stack();
    expect(info.openaiAdmin.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.anthropicAdmin.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.openaiAdmin.adminKey).toMatch(/^sk-admin-/);
    expect(info.anthropicAdmin.adminKey).toMatch(/^sk-ant-admin01-/);
    // Other test files may rotate or revoke the main organizations' keys (the stack info keeps the first ones), so
    // what is checked here is that the stack's main organizations exist and a key of each stand-in is taken.
    for (const [provider, standIn] of [['openai', info.openaiAdmin], ['anthropic', info.anthropicAdmin]] as const) {
      const orgs = (await (await fetch(`${standIn.url}/_burnrate/orgs`)).json()) as { id: string; adminKey: string }[];
      expect(orgs[0]!.id).toBe('main');
      const org = await newStandInOrg(provider);
      const path = provider === 'openai' ? '/v1/organization/projects?limit=1' : '/v1/organizations/api_keys?limit=1';
      const res = await fetch(`${standIn.url}${path}`, { headers: authHeaders(provider, org.adminKey) });
      expect(res.status).toBe(200);
      await org.remove();
    }
  });
});

describe('a stand-in restarted on its data folder', () => {
  it('keeps its organizations: the admin keys, the changes, the truth', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'burnrate-standin-'));
    try {
      const first = await startAnthropicAdmin({ port: 0, dataDir: dir });
      const made = await (await fetch(`${first.url}/_burnrate/orgs`, { method: 'POST' })).json() as any;
      const key = made.keys[0].id;
      const post = (url: string, path: string, body: unknown) => fetch(`${url}/_burnrate/orgs/${made.id}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await post(first.url, '/usage', { apiKeyId: key, model: 'claude-opus-4-5-20251101', date: made.importFrom, add: { output: 42 } });
      await post(first.url, '/keys/' + key, { status: 'inactive' });
      const truth = await (await fetch(`${first.url}/_burnrate/orgs/${made.id}/truth?to=${made.importFrom}`)).json();
      const mainKey = first.adminKey();
      await first.stop();
      const second = await startAnthropicAdmin({ port: 0, dataDir: dir });
      try {
        expect(second.adminKey()).toBe(mainKey);
        // The same figures (`asOf` is the real clock's second, so not compared).
        const again = (await (await fetch(`${second.url}/_burnrate/orgs/${made.id}/truth?to=${made.importFrom}`)).json()) as any;
        expect({ ...again, asOf: null }).toEqual({ ...(truth as any), asOf: null });
        expect(again.cells.length).toBeGreaterThan(5);
        const listed = await fetch(`${second.url}/v1/organizations/api_keys/${key}`, { headers: authHeaders('anthropic', made.adminKey) });
        expect(((await listed.json()) as any).status).toBe('inactive');
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('OpenAI admin stand-in', () => {
  let org: StandInOrg;
  let now: number;
  beforeAll(async () => {
    org = await newStandInOrg('openai');
    // A frozen clock in the afternoon of today (UTC): the results below are then fixed.
    now = dayOf(Math.floor(Date.now() / 1000)) + 15 * 3600 + 1234;
    await org.control('/clock', { now });
  });
  afterAll(() => org.remove());

  it('refuses a missing, unknown, revoked or inference key in its error shape, and takes a rotated one', async () => {
    const path = '/v1/organization/projects';
    const missing = await org.get(path, { key: null });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: { message: expect.stringContaining('API key'), type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    const unknown = await org.get(path, { key: 'sk-admin-not-a-real-key-0000' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('invalid_api_key');
    expect(JSON.stringify(unknown.body)).not.toContain('not-a-real-key');
    const state = await org.state();
    const inference = await org.get(path, { key: state.inferenceKeys[0] });
    expect(inference.status).toBe(403);
    expect(Object.keys(inference.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);

    await org.control('/admin-key', { revoked: true });
    expect((await org.get(path)).status).toBe(401);
    await org.control('/admin-key', { revoked: false });
    expect((await org.get(path)).status).toBe(200);
    const old = org.adminKey;
    const rotated = await org.control('/admin-key', { rotate: true });
    expect((await org.get(path, { key: old })).status).toBe(401);
    expect((await org.get(path, { key: rotated.adminKey })).status).toBe(200);
    org.adminKey = rotated.adminKey;
  });

  it('takes group_by only as OpenAI documents it (repeated), the filters in all three array spellings', async () => {
    const state = await org.state();
    const keyA = state.keys[0].id;
    const keyB = state.keys[1].id;
    const start = dayOf(now) - 5 * DAY;
    const base = `/v1/organization/usage/completions?start_time=${start}&bucket_width=1d`;
    const repeated = await org.get(`${base}&group_by=api_key_id&group_by=model&api_key_ids=${keyA}&api_key_ids=${keyB}`);
    const brackets = await org.get(`${base}&group_by=api_key_id&group_by=model&api_key_ids[]=${keyA}&api_key_ids[]=${keyB}`);
    const commas = await org.get(`${base}&group_by=api_key_id&group_by=model&api_key_ids=${keyA},${keyB}`);
    expect(repeated.status).toBe(200);
    expect(brackets.body).toEqual(repeated.body);
    expect(commas.body).toEqual(repeated.body);
    // group_by[] and a comma-joined group_by are not OpenAI's spelling: refused, as a misspelling client should be.
    expect((await org.get(`${base}&group_by[]=api_key_id&group_by[]=model`)).status).toBe(400);
    expect((await org.get(`${base}&group_by=api_key_id,model`)).status).toBe(400);
    const rows = repeated.body.data.flatMap((b: any) => b.results);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r: any) => r.api_key_id))).toEqual(new Set([keyA, keyB]));
  });

  it('returns UTC-aligned buckets, the first truncated at the requested minute, the current one ending now', async () => {
    const start = dayOf(now) - 2 * DAY + 3 * 3600 + 125;
    const res = await org.get(`/v1/organization/usage/completions?start_time=${start}&bucket_width=1d`);
    const buckets = res.body.data;
    expect(buckets.map((b: any) => [b.start_time, b.end_time])).toEqual([
      [start - 5, dayOf(now) - DAY],
      [dayOf(now) - DAY, dayOf(now)],
      [dayOf(now), now],
    ]);
    expect(buckets.every((b: any) => b.object === 'bucket')).toBe(true);
    expect(res.body.object).toBe('page');
  });

  it('enforces the bucket limits per width, and 180 on costs, with a 400 in its shape', async () => {
    const start = dayOf(now) - 40 * DAY;
    const usage = `/v1/organization/usage/completions?start_time=${start}`;
    for (const [width, max, dflt] of [['1d', 31, 7], ['1h', 168, 24], ['1m', 1440, 60]] as const) {
      const over = await org.get(`${usage}&bucket_width=${width}&limit=${max + 1}`);
      expect(over.status).toBe(400);
      expect(over.body).toEqual({ error: { message: `Limit must be less than or equal to ${max}.`, type: 'invalid_request_error', param: 'limit', code: 'invalid_request_error' } });
      const atMax = await org.get(`${usage}&bucket_width=${width}&limit=${max}`);
      expect(atMax.body.data).toHaveLength(max);
      const byDefault = await org.get(`${usage}&bucket_width=${width}`);
      expect(byDefault.body.data).toHaveLength(dflt);
      expect(byDefault.body.has_more).toBe(true);
    }
    const costs = await org.get(`/v1/organization/costs?start_time=${start}&limit=181`);
    expect(costs.status).toBe(400);
    expect(costs.body.error.message).toBe('Limit must be less than or equal to 180.');
    expect((await org.get(`/v1/organization/costs?start_time=${start}&bucket_width=1h`)).status).toBe(400);
    expect((await org.get(`/v1/organization/usage/completions?bucket_width=1d`)).status).toBe(400);
    expect((await org.get(`${usage}&group_by=colour`)).status).toBe(400);
  });

  it('pages with opaque tokens bound to the query, every bucket exactly once, whatever the filters\' spelling', async () => {
    const start = unix(org.importFrom);
    const full = await allPages(org, `/v1/organization/usage/completions?start_time=${start}&bucket_width=1d&limit=31&group_by=api_key_id`);
    const days = (dayOf(now) - start) / DAY + 1;
    expect(full.buckets).toHaveLength(days);
    const keys = (await org.state()).keys.map((k: any) => k.id).slice(0, 3);
    for (const spelling of [`group_by=api_key_id&group_by=model`, `group_by=api_key_id&group_by=model&api_key_ids[]=${keys.join('&api_key_ids[]=')}`, `group_by=api_key_id&group_by=model&api_key_ids=${keys.join(',')}`]) {
      const paged = await allPages(org, `/v1/organization/usage/completions?start_time=${start}&bucket_width=1d&limit=4&${spelling}`);
      expect(paged.pages).toBe(Math.ceil(days / 4));
      const starts = paged.buckets.map(startOf);
      expect(new Set(starts).size).toBe(starts.length);
      expect(starts).toEqual(full.buckets.map(startOf));
      for (const token of paged.tokens) {
        expect(token).toMatch(/^page_[A-Za-z0-9+/]+=*$/);
        // Not an offset one could guess: nothing of the bucket's time shows.
        expect(token).not.toContain(String(starts[0]));
      }
    }
    // Totals per day equal the ungrouped read.
    const one = await allPages(org, `/v1/organization/usage/completions?start_time=${start}&bucket_width=1d&limit=31`);
    expect(one.buckets.map((b) => sumRows(b.results, OPENAI_FIELDS))).toEqual(full.buckets.map((b) => sumRows(b.results, OPENAI_FIELDS)));

    const first = await org.get(`/v1/organization/usage/completions?start_time=${start}&bucket_width=1d&limit=2&group_by=model`);
    const token = first.body.next_page;
    const otherQuery = await org.get(`/v1/organization/usage/completions?start_time=${start}&bucket_width=1d&limit=2&group_by=project_id&page=${encodeURIComponent(token)}`);
    expect(otherQuery.status).toBe(400);
    expect(otherQuery.body.error.param).toBe('page');
    const forged = await org.get(`/v1/organization/usage/completions?start_time=${start}&bucket_width=1d&limit=2&group_by=model&page=page_AAAAAGdGxdEiJdKOAAAAAGcqsYA=`);
    expect(forged.status).toBe(400);
  });

  it('fills only the grouped dimensions; playground usage has api_key_id null', async () => {
    const start = dayOf(now) - DAY;
    const byModel = await org.get(`/v1/organization/usage/completions?start_time=${start}&end_time=${dayOf(now)}&group_by=model`);
    const rows = byModel.body.data[0].results;
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) {
      expect(row).toMatchObject({ object: 'organization.usage.completions.result', project_id: null, user_id: null, api_key_id: null, batch: null, service_tier: null });
      expect(typeof row.model).toBe('string');
      expect(row.input_tokens).toBe(row.input_uncached_tokens + row.input_cached_tokens + row.input_cache_write_tokens);
    }
    const byKey = await org.get(`/v1/organization/usage/completions?start_time=${start}&end_time=${dayOf(now)}&group_by=api_key_id&group_by=project_id&group_by=batch`);
    const keyRows = byKey.body.data[0].results;
    const playground = keyRows.filter((r: any) => r.api_key_id === null);
    expect(playground).toHaveLength(1);
    expect(playground[0].project_id).toMatch(/^proj_/);
    expect(keyRows.some((r: any) => r.batch === true)).toBe(true);
    expect(sumRows(keyRows, OPENAI_FIELDS)).toEqual(sumRows(rows, OPENAI_FIELDS));
    const embeddings = await org.get(`/v1/organization/usage/embeddings?start_time=${start}&end_time=${dayOf(now)}&group_by=api_key_id&group_by=model`);
    expect(embeddings.body.data[0].results[0]).toMatchObject({ object: 'organization.usage.embeddings.result', model: 'text-embedding-3-small' });
    expect(embeddings.body.data[0].results[0]).not.toHaveProperty('batch');
    expect((await org.get(`/v1/organization/usage/embeddings?start_time=${start}&batch=true`)).status).toBe(400);
  });

  it('adds up: 1m and 1h buckets of a day equal its 1d bucket, and the usage equals the truth per (day, key, model)', async () => {
    const y = dayOf(now) - DAY;
    const read = async (width: string, limit: number) =>
      sumRows((await allPages(org, `/v1/organization/usage/completions?start_time=${y}&end_time=${y + DAY}&bucket_width=${width}&limit=${limit}`)).buckets.flatMap((b) => b.results), OPENAI_FIELDS);
    const daily = await read('1d', 1);
    expect(await read('1h', 168)).toEqual(daily);
    expect(await read('1m', 1440)).toEqual(daily);

    const truth = await org.control(`/truth?from=${org.importFrom}`);
    const usage = await allPages(org, `/v1/organization/usage/completions?start_time=${unix(org.importFrom)}&bucket_width=1d&limit=31&group_by=api_key_id&group_by=model&group_by=batch`);
    const fromApi = new Map<string, number[]>();
    for (const b of usage.buckets) {
      for (const r of b.results) fromApi.set(`${iso(b.start_time).slice(0, 10)}|${r.api_key_id}|${r.model}|${r.batch}`, [r.input_tokens, r.input_cached_tokens, r.output_tokens, r.num_model_requests]);
    }
    const expected = new Map<string, number[]>();
    for (const c of truth.cells.filter((c: any) => c.kind === 'completions')) {
      const k = `${c.date}|${c.apiKeyId}|${c.model}|${c.tier === 'batch'}`;
      const prev = expected.get(k) ?? [0, 0, 0, 0];
      expected.set(k, [prev[0]! + c.uncached + c.cached + c.cacheWrite, prev[1]! + c.cached, prev[2]! + c.output, prev[3]! + c.requests]);
    }
    expect(fromApi.size).toBeGreaterThan(100);
    expect(fromApi).toEqual(expected);
  });

  it('keeps the current bucket partial and growing with the clock; revisions and additions show exactly', async () => {
    const state = await org.state();
    // A key with one series per model (web-prod's gpt-5.1 runs in two tiers, which rows grouped by model add up).
    const key = state.keys.find((k: any) => (state.series as any[]).filter((s) => s.keyId === k.id).length === 1).id;
    const todayPath = `/v1/organization/usage/completions?start_time=${dayOf(now)}&group_by=api_key_id&group_by=model&api_key_ids=${key}`;
    const before = await org.get(todayPath);
    await org.control('/clock', { now: now + 3600 });
    const later = await org.get(todayPath);
    expect(later.body.data[0].end_time).toBe(now + 3600);
    const out = (r: any) => r.body.data[0].results.reduce((s: number, x: any) => s + x.output_tokens, 0);
    expect(out(later)).toBeGreaterThan(out(before));
    await org.control('/clock', { now });

    // Usage added "now" shows in today's bucket at once, with the clock frozen.
    const modelNow = before.body.data[0].results[0].model;
    await org.control('/usage', { apiKeyId: key, model: modelNow, add: { output: 777 } });
    expect(out(await org.get(todayPath))).toBe(out(before) + 777);

    const model = before.body.data[0].results[0].model;
    const yesterday = new Date((dayOf(now) - DAY) * 1000).toISOString().slice(0, 10);
    const dayPath = `/v1/organization/usage/completions?start_time=${dayOf(now) - DAY}&end_time=${dayOf(now)}&group_by=api_key_id&group_by=model&api_key_ids=${key}&models=${model}`;
    const row = async () => (await org.get(dayPath)).body.data[0].results[0];
    const original = await row();
    await org.control('/usage', { apiKeyId: key, model, date: yesterday, add: { output: 1000, requests: 3 } });
    expect(await row()).toMatchObject({ output_tokens: original.output_tokens + 1000, num_model_requests: original.num_model_requests + 3 });
    await org.control('/revise', { apiKeyId: key, model, date: yesterday, set: { output: 5, uncached: 10, cached: 0, cacheWrite: 0, requests: 1 } });
    expect(await row()).toMatchObject({ output_tokens: 5, input_tokens: 10, num_model_requests: 1 });
  });

  it('lets yesterday grow after it closed (late arrivals) until it settles', async () => {
    const y = dayOf(now) - DAY;
    const path = `/v1/organization/usage/completions?start_time=${y}&end_time=${y + DAY}&limit=1`;
    const at = async (t: number) => {
      await org.control('/clock', { now: t });
      return sumRows((await org.get(path)).body.data[0].results, OPENAI_FIELDS);
    };
    const early = await at(dayOf(now) + 600);
    const later = await at(dayOf(now) + 4 * 3600);
    const settled = await at(dayOf(now) + 7 * 3600);
    expect(later.output_tokens).toBeGreaterThan(early.output_tokens!);
    expect(settled.output_tokens).toBeGreaterThan(later.output_tokens!);
    expect(await at(now)).toEqual(settled);
  });

  it('answers 429 with Retry-After and 5xx when forced, then serves again', async () => {
    await org.control('/faults', { status: 429, count: 2, retryAfter: 7 });
    const path = '/v1/organization/projects';
    for (let i = 0; i < 2; i++) {
      const limited = await org.get(path);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(limited.body.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    }
    expect((await org.get(path)).status).toBe(200);
    await org.control('/faults', { status: 503, count: 1 });
    const down = await org.get(path);
    expect(down.status).toBe(503);
    expect(down.body.error.type).toBe('server_error');
    expect((await org.get(path)).status).toBe(200);
  });

  it('lists projects (archived on request) and their keys by cursor; a deleted key is gone from the list, not from usage', async () => {
    const active = await org.get('/v1/organization/projects?limit=100');
    const all = await org.get('/v1/organization/projects?limit=100&include_archived=true');
    expect(all.body.data.length).toBe(active.body.data.length + 1);
    expect(all.body.data.find((p: any) => p.status === 'archived').archived_at).toEqual(expect.any(Number));
    const paged: string[] = [];
    let after = '';
    for (;;) {
      const page = await org.get(`/v1/organization/projects?limit=1&include_archived=true${after ? `&after=${after}` : ''}`);
      paged.push(...page.body.data.map((p: any) => p.id));
      if (!page.body.has_more) break;
      after = page.body.last_id;
    }
    expect(paged).toEqual(all.body.data.map((p: any) => p.id));

    const listed: any[] = [];
    for (const p of all.body.data) {
      const keys = await org.get(`/v1/organization/projects/${p.id}/api_keys?limit=100&owner_project_access=any`);
      listed.push(...keys.body.data);
    }
    const state = await org.state();
    const deleted = state.keys.find((k: any) => k.status === 'deleted');
    expect(listed.map((k) => k.id).sort()).toEqual(state.keys.filter((k: any) => k.status !== 'deleted').map((k: any) => k.id).sort());
    for (const k of listed) {
      expect(k).toMatchObject({ object: 'organization.project.api_key', id: expect.stringMatching(/^key_/), redacted_value: expect.stringMatching(/^sk-(proj|svcacct)-\w{3}\.\.\.\w{4}$/) });
      expect(['user', 'service_account']).toContain(k.owner.type);
    }
    const inactive = listed.filter((k) => k.owner_project_access === 'inactive');
    expect(inactive.length).toBe(1);
    const usage = await allPages(org, `/v1/organization/usage/completions?start_time=${unix(org.importFrom)}&limit=31&group_by=api_key_id&api_key_ids=${deleted.id}`);
    expect(usage.buckets.flatMap((b) => b.results).length).toBeGreaterThan(0);
    expect((await org.get(`/v1/organization/projects/proj_nope/api_keys`)).status).toBe(404);
    const one = await org.get(`/v1/organization/projects/${all.body.data[0].id}`);
    expect(one.body).toEqual(all.body.data[0]);
  });

  it('bills in dollars per line item, project and key; the line items add up to the total', async () => {
    const start = dayOf(now) - 3 * DAY;
    const byItem = await org.get(`/v1/organization/costs?start_time=${start}&end_time=${dayOf(now)}&group_by=line_item&group_by=project_id&group_by=api_key_id&limit=3`);
    const total = await org.get(`/v1/organization/costs?start_time=${start}&end_time=${dayOf(now)}&limit=3`);
    expect(byItem.body.data).toHaveLength(3);
    for (const [i, bucket] of byItem.body.data.entries()) {
      const rows = bucket.results;
      expect(rows[0]).toMatchObject({ object: 'organization.costs.result', amount: { value: expect.any(Number), currency: 'usd' }, quantity_unit: expect.any(String) });
      expect(rows.some((r: any) => r.api_key_id === null && r.line_item === 'Vector storage')).toBe(true);
      const sum = rows.reduce((s: number, r: any) => s + r.amount.value, 0);
      expect(sum).toBeCloseTo(total.body.data[i].results[0].amount.value, 6);
    }
  });

  it('makes a big organization: 1,000 keys × 5 models × 62 days, paged by rows as well as buckets', async () => {
    const big = await newStandInOrg('openai', { big: { keys: 1000, models: 5, days: 62 } });
    try {
      const state = await big.state();
      expect(state.keys).toHaveLength(1000);
      expect(state.series).toBe(5000);
      const y = dayOf(Math.floor(Date.now() / 1000)) - DAY;
      const pages = await allPages(big, `/v1/organization/usage/completions?start_time=${y - 2 * DAY}&end_time=${y + DAY}&bucket_width=1d&limit=31&group_by=api_key_id&group_by=model`);
      expect(pages.buckets.map(startOf)).toEqual([y - 2 * DAY, y - DAY, y]);
      for (const b of pages.buckets) expect(b.results).toHaveLength(5000);
      expect(pages.pages).toBeGreaterThan(1);
      const truth = await big.control(`/truth?detail=totals&from=${iso(y).slice(0, 10)}&to=${iso(y).slice(0, 10)}`);
      expect(sumRows(pages.buckets[2].results, ['output_tokens']).output_tokens).toBe(truth.total.output);
    } finally {
      await big.remove();
    }
  });

  it('seeds a big organization as of its frozen clock, with the requests a day asked for (bench:connectors)', async () => {
    const big = await newStandInOrg('openai', { big: { keys: 2, models: 1, days: 3, requests: 7 }, now: '2026-08-31T18:00:00Z', late: null });
    try {
      const truth = await big.control(`/truth?detail=totals&from=2026-08-01&to=2026-08-31`);
      // Usage on the three days ending at the frozen clock only, 7 requests a day per key give or take its daily level.
      expect(Object.keys(truth.byDay).sort()).toEqual(['2026-08-29', '2026-08-30', '2026-08-31']);
      for (const day of Object.values(truth.byDay) as { requests: number }[]) {
        expect(day.requests).toBeGreaterThanOrEqual(2 * Math.round(7 * 0.6 * 0.55 * 0.9));
        expect(day.requests).toBeLessThanOrEqual(2 * Math.round(7 * 1.4 * 1.1));
      }
    } finally {
      await big.remove();
    }
  });
});

describe('Anthropic admin stand-in', () => {
  let org: StandInOrg;
  let now: number;
  beforeAll(async () => {
    now = dayOf(Math.floor(Date.now() / 1000)) + 15 * 3600 + 1234;
    org = await newStandInOrg('anthropic', { now });
    expect((await org.state()).clockFrozen).toBe(true);
  });
  afterAll(() => org.remove());

  const usagePath = (query: string) => `/v1/organizations/usage_report/messages?${query}`;

  it('refuses in its error shape: no key, an unknown, revoked or inference key, no anthropic-version', async () => {
    const path = '/v1/organizations/api_keys';
    const shape = { type: 'error', error: { type: expect.any(String), message: expect.any(String) }, request_id: expect.stringMatching(/^req_/) };
    const missing = await org.get(path, { key: null });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(shape);
    const unknown = await org.get(path, { key: 'sk-ant-admin01-nope' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toEqual({ type: 'authentication_error', message: 'invalid x-api-key' });
    const inference = await org.get(path, { key: (await org.state()).inferenceKeys[0] });
    expect(inference.status).toBe(403);
    expect(inference.body.error.type).toBe('permission_error');
    const noVersion = await fetch(`${org.url}${path}`, { headers: { 'x-api-key': org.adminKey } });
    expect(noVersion.status).toBe(400);
    expect(((await noVersion.json()) as any).error.type).toBe('invalid_request_error');
    await org.control('/admin-key', { revoked: true });
    expect((await org.get(path)).status).toBe(401);
    await org.control('/admin-key', { revoked: false });
    expect((await org.get(path)).status).toBe(200);
  });

  it('takes group_by only as Anthropic documents it (group_by[]), the filters in all three array spellings', async () => {
    const start = iso(dayOf(now) - 4 * DAY);
    const a = await org.get(usagePath(`starting_at=${start}&group_by[]=api_key_id&group_by[]=model&service_tiers[]=standard&service_tiers[]=batch`));
    const b = await org.get(usagePath(`starting_at=${start}&group_by[]=api_key_id&group_by[]=model&service_tiers=standard&service_tiers=batch`));
    const c = await org.get(usagePath(`starting_at=${start}&group_by[]=api_key_id&group_by[]=model&service_tiers=standard,batch`));
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(c.body).toEqual(a.body);
    expect((await org.get(usagePath(`starting_at=${start}&group_by=api_key_id&group_by=model`))).status).toBe(400);
    expect((await org.get(usagePath(`starting_at=${start}&group_by=api_key_id,model`))).status).toBe(400);
    expect(a.body.data).toHaveLength(5);
  });

  it('snaps buckets to UTC, keeps the current one partial and growing, respects ending_at', async () => {
    const res = await org.get(usagePath(`starting_at=${iso(dayOf(now) - DAY + 5000)}`));
    expect(res.body.data.map((b: any) => [b.starting_at, b.ending_at])).toEqual([
      [iso(dayOf(now) - DAY), iso(dayOf(now))],
      [iso(dayOf(now)), iso(dayOf(now) + DAY)],
    ]);
    const ended = await org.get(usagePath(`starting_at=${iso(dayOf(now) - 3 * DAY)}&ending_at=${iso(dayOf(now))}`));
    expect(ended.body.data).toHaveLength(3);
    const bad = await org.get(usagePath(`starting_at=${iso(dayOf(now))}&ending_at=${iso(dayOf(now) - DAY)}`));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({ type: 'invalid_request_error', message: 'Invalid date range: ending date must be after starting date' });
    expect((await org.get(usagePath('starting_at=1732406400'))).status).toBe(400);

    const today = usagePath(`starting_at=${iso(dayOf(now))}`);
    const before = sumRows((await org.get(today)).body.data[0].results, ANTHROPIC_FIELDS);
    await org.control('/clock', { now: now + 1800 });
    const after = sumRows((await org.get(today)).body.data[0].results, ANTHROPIC_FIELDS);
    await org.control('/clock', { now });
    expect(after.output_tokens).toBeGreaterThan(before.output_tokens!);
    expect(after.uncached_input_tokens).toBeGreaterThan(before.uncached_input_tokens!);
  });

  it('enforces the bucket limits per width with a 400 in its shape', async () => {
    const start = iso(dayOf(now) - 40 * DAY);
    for (const [width, max, dflt] of [['1d', 31, 7], ['1h', 168, 24], ['1m', 1440, 60]] as const) {
      const over = await org.get(usagePath(`starting_at=${start}&bucket_width=${width}&limit=${max + 1}`));
      expect(over.status).toBe(400);
      expect(over.body.error.type).toBe('invalid_request_error');
      expect((await org.get(usagePath(`starting_at=${start}&bucket_width=${width}&limit=${max}`))).body.data).toHaveLength(max);
      expect((await org.get(usagePath(`starting_at=${start}&bucket_width=${width}`))).body.data).toHaveLength(dflt);
    }
    expect((await org.get(`/v1/organizations/cost_report?starting_at=${start}&bucket_width=1h`)).status).toBe(400);
  });

  it('pages every bucket exactly once with tokens bound to the query; 1h buckets add up to the day', async () => {
    const start = iso(unix(org.importFrom));
    const days = (dayOf(now) - unix(org.importFrom)) / DAY + 1;
    const full = await allPages(org, usagePath(`starting_at=${start}&limit=31&group_by[]=api_key_id`));
    expect(full.buckets).toHaveLength(days);
    const paged = await allPages(org, usagePath(`starting_at=${start}&limit=3&group_by[]=api_key_id`));
    expect(paged.pages).toBe(Math.ceil(days / 3));
    expect(paged.buckets).toEqual(full.buckets);
    const token = paged.tokens[0]!;
    const other = await org.get(usagePath(`starting_at=${start}&limit=3&group_by[]=model&page=${encodeURIComponent(token)}`));
    expect(other.status).toBe(400);

    const y = dayOf(now) - DAY;
    const hourly = await allPages(org, usagePath(`starting_at=${iso(y)}&ending_at=${iso(y + DAY)}&bucket_width=1h&limit=24`));
    expect(hourly.buckets).toHaveLength(24);
    const daily = await org.get(usagePath(`starting_at=${iso(y)}&ending_at=${iso(y + DAY)}`));
    expect(sumRows(hourly.buckets.flatMap((b) => b.results), ANTHROPIC_FIELDS)).toEqual(sumRows(daily.body.data[0].results, ANTHROPIC_FIELDS));
  });

  it('returns null dimensions when not grouped, api_key_id null for Console usage, workspace_id null for the default workspace', async () => {
    const y = dayOf(now) - DAY;
    const ungrouped = await org.get(usagePath(`starting_at=${iso(y)}&ending_at=${iso(y + DAY)}`));
    const [row] = ungrouped.body.data[0].results;
    expect(ungrouped.body.data[0].results).toHaveLength(1);
    expect(row).toMatchObject({ api_key_id: null, workspace_id: null, model: null, service_tier: null, context_window: null, inference_geo: null });
    expect(row.cache_creation).toEqual({ ephemeral_1h_input_tokens: expect.any(Number), ephemeral_5m_input_tokens: expect.any(Number) });
    expect(row.server_tool_use).toEqual({ web_search_requests: expect.any(Number) });
    const grouped = await org.get(usagePath(`starting_at=${iso(y)}&ending_at=${iso(y + DAY)}&group_by[]=api_key_id&group_by[]=workspace_id&group_by[]=model&group_by[]=service_tier`));
    const rows = grouped.body.data[0].results;
    const console = rows.filter((r: any) => r.api_key_id === null);
    expect(console).toHaveLength(1);
    expect(console[0].workspace_id).toBeNull();
    expect(rows.some((r: any) => r.api_key_id !== null && r.workspace_id === null)).toBe(true);
    expect(new Set(rows.map((r: any) => r.service_tier))).toEqual(new Set(['standard', 'batch', 'priority']));
    expect(sumRows(rows, ANTHROPIC_FIELDS)).toEqual(sumRows([row], ANTHROPIC_FIELDS));
  });

  it('reports costs in cents as decimal strings that add up exactly, a day only once it is over', async () => {
    const y = dayOf(now) - DAY;
    const res = await org.get(`/v1/organizations/cost_report?starting_at=${iso(y)}&group_by[]=workspace_id&group_by[]=description`);
    expect(res.body.data.map((b: any) => b.starting_at)).toEqual([iso(y), iso(y + DAY)]);
    expect(res.body.data[1].results).toEqual([]);
    const rows = res.body.data[0].results;
    for (const r of rows) {
      expect(typeof r.amount).toBe('string');
      expect(r.amount).toMatch(/^\d+(\.\d+)?$/);
      expect(r.currency).toBe('USD');
    }
    expect(rows.some((r: any) => r.cost_type === 'code_execution' && r.model === null)).toBe(true);
    expect(rows.some((r: any) => r.token_type === 'cache_creation.ephemeral_1h_input_tokens')).toBe(true);
    // Exact decimal sum (in 1e-7 cents) of the rows equals the ungrouped figure.
    const units = (a: string) => {
      const [w, f = ''] = a.split('.');
      return BigInt(w!) * 10_000_000n + BigInt(f.padEnd(7, '0'));
    };
    const total = await org.get(`/v1/organizations/cost_report?starting_at=${iso(y)}&ending_at=${iso(y + DAY)}`);
    expect(rows.reduce((s: bigint, r: any) => s + units(r.amount), 0n)).toBe(units(total.body.data[0].results[0].amount));
    // Cents: a million uncached Sonnet 4.5 input tokens at $3/MTok are "300" cents; 1,000 output tokens at $15/MTok
    // are 1.5 cents, in batch half of it: "0.75".
    const d = new Date(y * 1000).toISOString().slice(0, 10);
    const workspace = await org.control('/projects', { name: 'Cents check' });
    const key = await org.control('/keys', { name: 'cents-check', projectId: workspace.id });
    await org.control('/usage', { apiKeyId: key.id, model: 'claude-sonnet-4-5-20250929', date: d, add: { uncached: 1_000_000 } });
    await org.control('/usage', { apiKeyId: key.id, model: 'claude-sonnet-4-5-20250929', tier: 'batch', date: d, add: { output: 1000 } });
    const after = await org.get(`/v1/organizations/cost_report?starting_at=${iso(y)}&ending_at=${iso(y + DAY)}&group_by[]=workspace_id&group_by[]=description`);
    const mine = after.body.data[0].results.filter((r: any) => r.workspace_id === workspace.id);
    expect(mine.map((r: any) => [r.description, r.amount, r.service_tier]).sort()).toEqual([
      ['Claude Sonnet 4.5 Usage - Input Tokens', '300', 'standard'],
      ['Claude Sonnet 4.5 Usage - Output Tokens, Batch', '0.75', 'batch'],
    ]);
  });

  it('lists API keys newest first with after_id / before_id, status filters and partial hints; POST updates status', async () => {
    const all = await org.get('/v1/organizations/api_keys?limit=1000');
    const state = await org.state();
    expect(all.body.data.map((k: any) => k.id).sort()).toEqual(state.keys.filter((k: any) => k.status !== 'deleted').map((k: any) => k.id).sort());
    expect(new Set(all.body.data.map((k: any) => k.status))).toEqual(new Set(['active', 'inactive', 'archived', 'expired']));
    for (const k of all.body.data) {
      expect(k).toMatchObject({ type: 'api_key', id: expect.stringMatching(/^apikey_01/), partial_key_hint: expect.stringMatching(/^sk-ant-api03-\w{3}\.\.\.\w{4}$/) });
      // The current APIKey shape: `scope` (the default workspace by its real id), no `workspace_id`.
      expect(k.scope).toEqual({ type: 'workspace', workspace_id: expect.stringMatching(/^wrkspc_01/) });
      expect(k).not.toHaveProperty('workspace_id');
    }
    const forward: string[] = [];
    let after = '';
    for (;;) {
      const page = await org.get(`/v1/organizations/api_keys?limit=3${after ? `&after_id=${after}` : ''}`);
      forward.push(...page.body.data.map((k: any) => k.id));
      expect(page.body.first_id).toBe(page.body.data[0]?.id ?? null);
      if (!page.body.has_more) break;
      after = page.body.last_id;
    }
    expect(forward).toEqual(all.body.data.map((k: any) => k.id));
    const last = forward.at(-1);
    const back = await org.get(`/v1/organizations/api_keys?limit=2&before_id=${last}`);
    expect(back.body.data.map((k: any) => k.id)).toEqual(forward.slice(-3, -1));
    const inactive = await org.get('/v1/organizations/api_keys?status=inactive');
    expect(inactive.body.data.every((k: any) => k.status === 'inactive')).toBe(true);

    const active = all.body.data.find((k: any) => k.status === 'active');
    const r = await fetch(`${org.url}/v1/organizations/api_keys/${active.id}`, {
      method: 'POST',
      headers: { ...authHeaders('anthropic', org.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'inactive' }),
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).status).toBe('inactive');
  });

  it('lists workspaces (archived and default on request) that name every workspace the keys are in', async () => {
    const listed = await org.get('/v1/organizations/workspaces?limit=1000');
    const all = await org.get('/v1/organizations/workspaces?limit=1000&include_archived=true&include_default=true');
    expect(all.body.data.length).toBe(listed.body.data.length + 2);
    // The reference's Workspace: type, id, name, created_at, archived_at, display_color, data_residency.
    for (const w of all.body.data) {
      expect(Object.keys(w).sort()).toEqual(['archived_at', 'created_at', 'data_residency', 'display_color', 'id', 'name', 'type']);
      expect(w).toMatchObject({ type: 'workspace', id: expect.stringMatching(/^wrkspc_01/), name: expect.any(String), display_color: expect.stringMatching(/^#[0-9A-F]{6}$/) });
      expect(Date.parse(w.created_at)).not.toBeNaN();
      expect(w.data_residency).toEqual({ workspace_geo: 'us', allowed_inference_geos: 'unrestricted', default_inference_geo: 'global' });
    }
    expect(all.body.data.filter((w: any) => w.archived_at !== null)).toHaveLength(1);
    expect(listed.body.data.every((w: any) => w.archived_at === null)).toBe(true);
    // Pages by opaque object ids: after_id = last_id forward, before_id = first_id back; limit 1..1000.
    const forward: string[] = [];
    let after = '';
    for (;;) {
      const page = await org.get(`/v1/organizations/workspaces?include_archived=true&include_default=true&limit=1${after ? `&after_id=${after}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(1);
      expect([page.body.first_id, page.body.last_id]).toEqual([page.body.data[0].id, page.body.data[0].id]);
      forward.push(page.body.data[0].id);
      if (!page.body.has_more) break;
      after = page.body.last_id;
    }
    expect(forward).toEqual(all.body.data.map((w: any) => w.id));
    const back = await org.get(`/v1/organizations/workspaces?include_archived=true&include_default=true&limit=2&before_id=${forward.at(-1)}`);
    expect(back.body.data.map((w: any) => w.id)).toEqual(forward.slice(-3, -1));
    expect((await org.get('/v1/organizations/workspaces')).body.data).toEqual(listed.body.data.slice(0, 20));
    for (const bad of ['limit=0', 'limit=1001', 'include_archived=maybe']) {
      const res = await org.get(`/v1/organizations/workspaces?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.type, bad).toBe('invalid_request_error');
    }
    const keys = await org.get('/v1/organizations/api_keys?limit=1000');
    const named = new Set(all.body.data.map((w: any) => w.id));
    for (const k of keys.body.data) expect(named).toContain(k.scope.workspace_id);
    const one = await org.get(`/v1/organizations/workspaces/${listed.body.data[0].id}`);
    expect(one.body).toEqual(listed.body.data[0]);
    expect((await org.get('/v1/organizations/workspaces/wrkspc_nope')).status).toBe(404);
  });

  it('answers 429 with Retry-After and 529 overloaded when forced', async () => {
    await org.control('/faults', { status: 429, count: 1, retryAfter: 3 });
    const limited = await org.get('/v1/organizations/api_keys');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.body.error.type).toBe('rate_limit_error');
    await org.control('/faults', { status: 529, count: 1 });
    const overloaded = await org.get('/v1/organizations/api_keys');
    expect(overloaded.status).toBe(529);
    expect(overloaded.body.error.type).toBe('overloaded_error');
    expect((await org.get('/v1/organizations/api_keys')).status).toBe(200);
    const counted = await org.control('/requests');
    expect(counted.total).toBeGreaterThan(3);
  });
});

describe.each(['openai', 'anthropic', 'openrouter'] as const)('%s stand-in: a test organization with a short history (historyDays)', (provider) => {
  const now = Math.floor(Date.now() / 1000);
  const today = dayOf(now);
  let full: StandInOrg;
  let short: StandInOrg;
  beforeAll(async () => {
    [full, short] = await Promise.all([newStandInOrg(provider, { now, late: null }), newStandInOrg(provider, { now, late: null, historyDays: 2 })]);
  });
  afterAll(async () => {
    await Promise.all([full?.remove(), short?.remove()]);
  });
  /** The provider's own report of one completed UTC day's usage: its rows. */
  const dayRows = async (org: StandInOrg, day: number): Promise<any[]> => {
    const path =
      provider === 'openai'
        ? `/v1/organization/usage/completions?start_time=${day}&end_time=${day + DAY}&bucket_width=1d&group_by=api_key_id&group_by=model`
        : provider === 'anthropic'
          ? `/v1/organizations/usage_report/messages?starting_at=${iso(day)}&ending_at=${iso(day + DAY)}&bucket_width=1d&group_by[]=api_key_id&group_by[]=model`
          : `/api/v1/activity?date=${iso(day).slice(0, 10)}`;
    const res = await org.get(path);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return provider === 'openrouter' ? res.body.data : res.body.data.flatMap((b: any) => b.results);
  };

  it('has the seed’s projects and keys, and the seed’s usage on its last 2 days (today counted) only', async () => {
    const [f, s] = await Promise.all([full.state(), short.state()]);
    expect(s.historyFrom).toBe(iso(today - DAY).slice(0, 10));
    expect(f.historyFrom).toBeNull();
    expect(s.importFrom).toBe(f.importFrom);
    expect(s.projects).toEqual(f.projects);
    expect(s.keys.map(({ secret: _, ...k }: any) => k)).toEqual(f.keys.map(({ secret: _, ...k }: any) => k));

    // The truth: nothing before yesterday; yesterday and today exactly the seed's.
    const [ft, st] = await Promise.all([full.control(`/truth?from=${f.importFrom}`), short.control(`/truth?from=${s.importFrom}`)]);
    const recent = (t: any) => t.cells.filter((c: any) => c.date >= s.historyFrom);
    expect(ft.cells.length).toBeGreaterThan(recent(ft).length);
    expect(st.cells.every((c: any) => c.date >= s.historyFrom)).toBe(true);
    expect(st.cells).toEqual(recent(ft));
    expect(st.cells.length).toBeGreaterThan(0);

    // The provider's API says the same: the day before holds nothing, yesterday the seed's rows.
    expect((await dayRows(full, today - 2 * DAY)).length).toBeGreaterThan(0);
    expect(await dayRows(short, today - 2 * DAY)).toEqual([]);
    const yesterday = await dayRows(short, today - DAY);
    expect(yesterday.length).toBeGreaterThan(0);
    expect(yesterday).toEqual(await dayRows(full, today - DAY));
  });

  it('keeps its short history through a reset; historyDays outside 1..400 is a 400', async () => {
    const reset = await short.control('/reset', {});
    expect(reset.historyFrom).toBe(iso(today - DAY).slice(0, 10));
    await short.control('/clock', { now });
    expect(await dayRows(short, today - 2 * DAY)).toEqual([]);
    for (const historyDays of [0, 401, 1.5, 'two']) {
      const res = await fetch(`${standInUrl(provider)}/_burnrate/orgs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ historyDays }) });
      expect(res.status, String(historyDays)).toBe(400);
      expect(await res.text()).toMatch(/historyDays/);
    }
  });
});
