/**
 * A local stand-in of OpenAI's organization admin API (the part a usage importer reads), written from the official
 * OpenAPI document (github.com/openai/openai-openapi; research notes: ../shared/research/provider-usage-apis.md §1):
 *
 *   GET /v1/organization/usage/completions   start_time (unix s, required), end_time, bucket_width 1m|1h|1d,
 *                                            group_by project_id|user_id|api_key_id|model|batch|service_tier,
 *                                            project_ids, user_ids, api_key_ids, models, batch, limit, page
 *   GET /v1/organization/usage/embeddings    the same without batch/service_tier
 *   GET /v1/organization/costs               1d buckets only, group_by project_id|line_item|api_key_id,
 *                                            project_ids, api_key_ids, limit 1..180 (default 7); amount.value dollars
 *   GET /v1/organization/projects[/{id}]     limit 1..100 (20), after, include_archived
 *   GET /v1/organization/projects/{id}/api_keys[/{key}]   limit, after, owner_project_access active|inactive|any
 *
 * `Authorization: Bearer <admin key>` (`sk-admin-…`, printed by `npm start`); errors as `{error: {message, type,
 * param, code}}`. Buckets: the first one starts at start_time floored to the minute (truncated, not snapped), the
 * others are UTC-aligned, the current one ends "now" and grows; a bucket without usage has `results: []`.
 * Pages: `has_more` + an opaque `next_page` bound to the query. The control API is local/provider-org.ts's.
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import {
  arrayParam,
  BUCKET_LIMITS,
  bucketWidthParam,
  BUCKET_WIDTHS,
  canonicalQuery,
  DAY_S,
  dayStart,
  enumArray,
  firstOfPreviousMonth,
  groupWindow,
  idChars,
  intParam,
  makeOrg,
  MAX_ROWS_PER_PAGE,
  type Metrics,
  type OrgKey,
  type OrgState,
  type OrgStore,
  PageTokens,
  scalarParam,
  type StandIn,
  type StandInOptions,
  type StandInSpec,
  startStandIn,
  type Series,
  type SeriesKind,
  StandInError,
} from '#local/provider-org.ts';

/** The stand-in's list prices, in thousandths of a micro-dollar per token (= USD per 1M tokens × 1000). */
export const OPENAI_STANDIN_PRICES: Record<string, { input: number; cached: number; output: number }> = {
  'gpt-5.1-2025-11-13': { input: 1250, cached: 125, output: 10_000 },
  'gpt-5-mini-2025-08-07': { input: 250, cached: 25, output: 2000 },
  'gpt-4.1-2025-04-14': { input: 2000, cached: 500, output: 8000 },
  'gpt-4o-mini-2024-07-18': { input: 150, cached: 75, output: 600 },
  'o4-mini-2025-04-16': { input: 1100, cached: 275, output: 4400 },
  'text-embedding-3-small': { input: 20, cached: 20, output: 0 },
};
/** Billed per project and day without any key: what no key explains in a reconciliation (nano-dollars). */
const VECTOR_STORE_NANOS_PER_DAY = 100_000_000;

const COMPLETIONS_GROUPS = ['project_id', 'user_id', 'api_key_id', 'model', 'batch', 'service_tier'] as const;
const EMBEDDINGS_GROUPS = ['project_id', 'user_id', 'api_key_id', 'model'] as const;
const COSTS_GROUPS = ['project_id', 'line_item', 'api_key_id'] as const;
const ARRAY_PARAMS = ['group_by', 'project_ids', 'user_ids', 'api_key_ids', 'models'];

export const newOpenAiAdminKey = () => `sk-admin-${randomBytes(24).toString('base64url')}`;

// ---------------------------------------------------------------------------------------------------------------
// The made-up organization

const users = {
  ada: { type: 'user' as const, id: 'user-ada0Lovelace7Q', name: 'Ada Lovelace' },
  grace: { type: 'user' as const, id: 'user-grace0Hopper2K', name: 'Grace Hopper' },
  ci: { type: 'service_account' as const, id: 'svc_acct_ci0pipeline9', name: 'ci-pipeline' },
};

function openAiKey(seed: string, name: string, projectId: string | null, owner: OrgKey['owner'], createdAt: number, status: OrgKey['status'] = 'active'): OrgKey {
  const prefix = owner.type === 'service_account' ? 'sk-svcacct-' : 'sk-proj-';
  return {
    id: `key_${idChars(`${seed}|key|${name}`, 16)}`,
    name,
    projectId,
    redacted: `${prefix}${idChars(`${seed}|hint1|${name}`, 3)}...${idChars(`${seed}|hint2|${name}`, 4)}`,
    createdAt,
    status,
    owner,
  };
}

function series(kind: SeriesKind, key: OrgKey | null, projectId: string | null, model: string, tier: string, base: Metrics, since: number, until: number | null = null): Series {
  return {
    id: `${key?.id ?? '-'}|${model}|${tier}|${kind}`,
    kind,
    keyId: key?.id ?? null,
    projectId: key ? key.projectId : projectId,
    userId: key?.owner.type === 'user' ? key.owner.id : null,
    model,
    tier,
    base,
    since,
    until,
  };
}

const chat = (uncached: number, cached: number, cacheWrite: number, output: number, requests: number): Metrics => ({ uncached, cached, cacheWrite, output, requests });

/**
 * "Northwind Labs": four projects (one archived), eleven keys (one deleted with history, one whose owner lost
 * access, one new), five chat models, embeddings, batch and cache use, and playground usage without a key.
 */
export function seedOpenAiOrg(now: number, adminKey: string, seed = 'northwind'): OrgState {
  const origin = firstOfPreviousMonth(now);
  const before = origin - 40 * DAY_S;
  const day = (n: number) => origin + n * DAY_S;
  const today = dayStart(now);
  const project = (name: string, createdAt: number, archivedAt: number | null = null) => ({ id: `proj_${idChars(`${seed}|proj|${name}`, 24)}`, name, createdAt, archivedAt });
  const pDefault = project('Default project', before - 90 * DAY_S);
  const pWeb = project('Web app', before);
  const pData = project('Data pipeline', before + 3 * DAY_S);
  const pLegacy = project('Legacy prototype', before - 30 * DAY_S, day(12) + 3600);
  const k = {
    webProd: openAiKey(seed, 'web-prod', pWeb.id, users.ada, before + 3600),
    webStaging: openAiKey(seed, 'web-staging', pWeb.id, users.grace, before + 7200),
    batch: openAiKey(seed, 'nightly-batch', pData.id, users.ci, before + 4 * DAY_S),
    indexer: openAiKey(seed, 'search-indexer', pData.id, users.ci, before + 5 * DAY_S),
    support: openAiKey(seed, 'support-bot', pDefault.id, users.grace, before - 20 * DAY_S),
    notebook: openAiKey(seed, 'analytics-notebook', pDefault.id, users.ada, day(15) + 4000),
    legacy: openAiKey(seed, 'old-prototype', pLegacy.id, users.ada, before - 25 * DAY_S),
    leaked: openAiKey(seed, 'leaked-and-rotated', pWeb.id, users.grace, before + 1000, 'deleted'),
    contractor: openAiKey(seed, 'contractor', pDefault.id, users.grace, before + 2000, 'inactive'),
    mobile: openAiKey(seed, 'mobile-beta', pWeb.id, users.ada, Math.max(today - 3 * DAY_S, origin) + 5400),
    idle: openAiKey(seed, 'unused-sandbox', pDefault.id, users.ada, before + 9000),
  };
  const s: Series[] = [
    series('completions', k.webProd, null, 'gpt-5.1-2025-11-13', 'default', chat(1_400_000, 900_000, 60_000, 320_000, 1100), origin),
    series('completions', k.webProd, null, 'gpt-5-mini-2025-08-07', 'default', chat(2_600_000, 1_100_000, 0, 540_000, 3900), origin),
    series('completions', k.webStaging, null, 'gpt-5-mini-2025-08-07', 'default', chat(180_000, 20_000, 0, 40_000, 260), origin),
    series('completions', k.batch, null, 'gpt-4.1-2025-04-14', 'batch', chat(5_200_000, 0, 0, 1_300_000, 2400), origin),
    series('completions', k.batch, null, 'gpt-4o-mini-2024-07-18', 'batch', chat(8_000_000, 0, 0, 900_000, 7100), origin),
    series('embeddings', k.indexer, null, 'text-embedding-3-small', 'default', { input: 12_000_000, requests: 5200 }, origin),
    series('completions', k.indexer, null, 'gpt-4o-mini-2024-07-18', 'default', chat(700_000, 150_000, 0, 90_000, 800), origin),
    series('completions', k.support, null, 'o4-mini-2025-04-16', 'default', chat(950_000, 400_000, 25_000, 610_000, 1500), origin),
    series('completions', k.support, null, 'gpt-5-mini-2025-08-07', 'flex', chat(300_000, 0, 0, 90_000, 500), origin),
    series('completions', k.notebook, null, 'gpt-4.1-2025-04-14', 'default', chat(420_000, 80_000, 0, 110_000, 150), k.notebook.createdAt),
    series('completions', k.legacy, null, 'gpt-4o-mini-2024-07-18', 'default', chat(260_000, 10_000, 0, 70_000, 400), origin, pLegacy.archivedAt),
    series('completions', k.leaked, null, 'gpt-5.1-2025-11-13', 'default', chat(600_000, 0, 0, 200_000, 700), origin, day(9) + 50_000),
    series('completions', k.contractor, null, 'gpt-5-mini-2025-08-07', 'default', chat(220_000, 30_000, 0, 50_000, 300), origin, day(20) + 30_000),
    series('completions', k.mobile, null, 'gpt-5-mini-2025-08-07', 'default', chat(500_000, 200_000, 10_000, 120_000, 900), k.mobile.createdAt),
    // The playground: usage without an API key.
    series('completions', null, pDefault.id, 'gpt-5.1-2025-11-13', 'default', chat(90_000, 0, 0, 45_000, 40), origin),
  ];
  return makeOrg({
    provider: 'openai',
    seed,
    originDay: origin,
    adminKey,
    inferenceKeys: [`sk-proj-${idChars(`${seed}|inference`, 48)}`],
    projects: [pDefault, pWeb, pData, pLegacy],
    keys: Object.values(k),
    series: s,
  });
}

const BIG_MODELS = ['gpt-5.1-2025-11-13', 'gpt-5-mini-2025-08-07', 'gpt-4.1-2025-04-14', 'gpt-4o-mini-2024-07-18', 'o4-mini-2025-04-16'];

/** N keys in projects of 100 × M models, usage every day of the last D days (today included); `requests` a day per series (120). */
export function bigOpenAiOrg(now: number, adminKey: string, size: { keys: number; models: number; days: number; requests?: number }): OrgState {
  const seed = `big-${size.keys}-${size.models}-${size.days}`;
  const since = dayStart(now) - (size.days - 1) * DAY_S;
  const projects = Array.from({ length: Math.ceil(size.keys / 100) }, (_, i) => ({
    id: `proj_${idChars(`${seed}|proj|${i}`, 24)}`,
    name: `Team ${i + 1}`,
    createdAt: since - 30 * DAY_S,
    archivedAt: null,
  }));
  const keys: OrgKey[] = [];
  const s: Series[] = [];
  const models = Array.from({ length: size.models }, (_, i) => BIG_MODELS[i % BIG_MODELS.length]! + (i >= BIG_MODELS.length ? `-v${Math.floor(i / BIG_MODELS.length)}` : ''));
  for (let i = 0; i < size.keys; i++) {
    const key = openAiKey(seed, `key-${String(i + 1).padStart(4, '0')}`, projects[Math.floor(i / 100)]!.id, i % 3 === 0 ? users.ci : users.ada, since - DAY_S);
    keys.push(key);
    for (const model of models) s.push(series('completions', key, null, model, 'default', chat(200_000 + (i % 7) * 10_000, 50_000, 0, 40_000, size.requests ?? 120), since));
  }
  return makeOrg({ provider: 'openai', seed, originDay: since, adminKey, inferenceKeys: [], projects, keys, series: s, big: size });
}

// ---------------------------------------------------------------------------------------------------------------
// The API

function errorBody(e: StandInError) {
  const type = e.kind === 'rate_limit' ? 'requests' : e.kind === 'server' ? 'server_error' : 'invalid_request_error';
  const code =
    e.kind === 'authentication' ? 'invalid_api_key' : e.kind === 'rate_limit' ? 'rate_limit_exceeded' : e.kind === 'invalid_request' ? 'invalid_request_error' : null;
  return { error: { message: e.message, type, param: e.param, code } };
}

const credential = (req: IncomingMessage) => /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? '';

/** `store`: the organization whose admin key `token` is (revoked or not), if any. */
function authenticate(store: OrgStore | undefined, token: string): void {
  if (!token) {
    throw new StandInError(401, 'authentication', "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).");
  }
  // An inference key (sk-proj-…, sk-svcacct-…, sk-…) is a key, just not one that may read the organization.
  if (!store && !token.startsWith('sk-admin-') && token.startsWith('sk-')) {
    throw new StandInError(403, 'permission', 'You have insufficient permissions for this operation. Admin API keys are required for administration endpoints (an organization Owner creates them).');
  }
  if (!store || store.org.adminRevoked) {
    const shown = token.length > 8 ? `${token.slice(0, 3)}*****${token.slice(-4)}` : '*****';
    throw new StandInError(401, 'authentication', `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`);
  }
}

function boolParam(params: URLSearchParams, name: string): boolean | undefined {
  const raw = scalarParam(params, name);
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new StandInError(400, 'invalid_request', `${name} must be true or false.`, name);
}

interface BucketPlan {
  buckets: Array<[number, number]>;
  next: number | null;
}

/** Buckets of one page: from `pos` up to min(end_time, now), at most `limit`, UTC-aligned after the first. */
function planBuckets(pos: number, end: number, width: number, limit: number): BucketPlan {
  const buckets: Array<[number, number]> = [];
  let s = pos;
  while (s < end && buckets.length < limit) {
    const e = Math.min(Math.floor(s / width) * width + width, end);
    buckets.push([s, e]);
    s = e;
  }
  return { buckets, next: s < end ? s : null };
}

interface TimeQuery {
  start: number;
  end: number;
  width: number;
  limit: number;
  pos: number;
  canonical: string;
}

function timeQuery(store: OrgStore, tokens: PageTokens, params: URLSearchParams, widths: Array<'1m' | '1h' | '1d'>, limits: { default: number; max: number } | null): TimeQuery {
  const rawStart = scalarParam(params, 'start_time');
  if (rawStart === undefined || rawStart === '') throw new StandInError(400, 'invalid_request', 'Missing required parameter: start_time.', 'start_time');
  const start = intParam(params, 'start_time', 0, 0, Number.MAX_SAFE_INTEGER);
  const endTime = scalarParam(params, 'end_time') ? intParam(params, 'end_time', 0, 0, Number.MAX_SAFE_INTEGER) : undefined;
  if (endTime !== undefined && endTime <= start) throw new StandInError(400, 'invalid_request', 'end_time must be greater than start_time.', 'end_time');
  const widthName = bucketWidthParam(params, widths);
  const lim = limits ?? BUCKET_LIMITS[widthName];
  const limit = intParam(params, 'limit', lim.default, 1, lim.max);
  const canonical = canonicalQuery(params, ARRAY_PARAMS);
  const page = scalarParam(params, 'page');
  const first = Math.floor(start / 60) * 60;
  const pos = page ? tokens.read(canonical, page) : first;
  return { start: first, end: Math.min(endTime ?? Infinity, store.now()), width: BUCKET_WIDTHS[widthName], limit, pos, canonical };
}

function pageOf(tokens: PageTokens, q: TimeQuery, render: (a: number, b: number) => unknown[]) {
  const plan = planBuckets(q.pos, q.end, q.width, q.limit);
  const data: unknown[] = [];
  let rows = 0;
  let next = plan.next;
  for (const [i, [a, b]] of plan.buckets.entries()) {
    const results = render(a, b);
    data.push({ object: 'bucket', start_time: a, end_time: b, results });
    rows += results.length;
    if (rows >= MAX_ROWS_PER_PAGE && i < plan.buckets.length - 1) {
      next = plan.buckets[i + 1]![0];
      break;
    }
  }
  return { object: 'page', data, has_more: next !== null, next_page: next === null ? null : tokens.mint(q.canonical, next) };
}

function usage(store: OrgStore, tokens: PageTokens, params: URLSearchParams, kind: 'completions' | 'embeddings') {
  const q = timeQuery(store, tokens, params, ['1m', '1h', '1d'], null);
  const groups = enumArray(params, 'group_by', kind === 'completions' ? COMPLETIONS_GROUPS : EMBEDDINGS_GROUPS);
  const projectIds = arrayParam(params, 'project_ids');
  const userIds = arrayParam(params, 'user_ids');
  const keyIds = arrayParam(params, 'api_key_ids');
  const models = arrayParam(params, 'models');
  const batch = kind === 'completions' ? boolParam(params, 'batch') : undefined;
  if (kind === 'embeddings' && params.has('batch')) throw new StandInError(400, 'invalid_request', 'Unrecognized request argument supplied: batch', 'batch');
  const selected = store.org.series.filter(
    (s) =>
      s.kind === kind &&
      (!projectIds.length || projectIds.includes(s.projectId ?? '')) &&
      (!userIds.length || userIds.includes(s.userId ?? '')) &&
      (!keyIds.length || keyIds.includes(s.keyId ?? '')) &&
      (!models.length || models.includes(s.model)) &&
      (batch === undefined || (s.tier === 'batch') === batch),
  );
  const g = new Set<string>(groups);
  const dims = (s: Series) => ({
    project_id: g.has('project_id') ? s.projectId : null,
    user_id: g.has('user_id') ? s.userId : null,
    api_key_id: g.has('api_key_id') ? s.keyId : null,
    model: g.has('model') ? s.model : null,
    ...(kind === 'completions' ? { batch: g.has('batch') ? s.tier === 'batch' : null, service_tier: g.has('service_tier') ? s.tier : null } : {}),
  });
  const additions = store.additions();
  const now = store.now();
  return pageOf(tokens, q, (a, b) =>
    groupWindow(store.org, selected, a, b, now, additions, dims).map(({ dims: d, metrics: m }) =>
      kind === 'embeddings'
        ? { object: 'organization.usage.embeddings.result', input_tokens: m.input ?? 0, num_model_requests: m.requests ?? 0, ...d }
        : completionsResult(m, d),
    ),
  );
}

function completionsResult(m: Metrics, d: Record<string, unknown>) {
  const uncached = m.uncached ?? 0;
  const cached = m.cached ?? 0;
  const write = m.cacheWrite ?? 0;
  return {
    object: 'organization.usage.completions.result',
    input_tokens: uncached + cached + write,
    output_tokens: m.output ?? 0,
    input_cached_tokens: cached,
    input_cache_write_tokens: write,
    input_uncached_tokens: uncached,
    input_text_tokens: uncached,
    output_text_tokens: m.output ?? 0,
    input_cached_text_tokens: cached,
    input_audio_tokens: 0,
    input_cached_audio_tokens: 0,
    output_audio_tokens: 0,
    input_image_tokens: 0,
    input_cached_image_tokens: 0,
    output_image_tokens: 0,
    num_model_requests: m.requests ?? 0,
    ...d,
  };
}

/** Billed nano-dollars of one series' usage, per line item (batch at half price). */
export function openAiLineItems(s: Series, m: Metrics): Array<{ lineItem: string; nanos: number; quantity: number }> {
  const price = OPENAI_STANDIN_PRICES[s.model];
  if (!price) return [];
  const half = s.tier === 'batch' ? 2 : 1;
  const suffix = s.tier === 'batch' ? ' (batch)' : '';
  if (s.kind === 'embeddings') return [{ lineItem: `${s.model}, input`, nanos: ((m.input ?? 0) * price.input) / half, quantity: m.input ?? 0 }];
  const input = (m.uncached ?? 0) + (m.cacheWrite ?? 0);
  return [
    { lineItem: `${s.model}, input${suffix}`, nanos: (input * price.input) / half, quantity: input },
    { lineItem: `${s.model}, cached input${suffix}`, nanos: ((m.cached ?? 0) * price.cached) / half, quantity: m.cached ?? 0 },
    { lineItem: `${s.model}, output${suffix}`, nanos: ((m.output ?? 0) * price.output) / half, quantity: m.output ?? 0 },
  ].filter((x) => x.quantity > 0);
}

function costs(store: OrgStore, tokens: PageTokens, params: URLSearchParams) {
  const q = timeQuery(store, tokens, params, ['1d'], { default: 7, max: 180 });
  const groups = new Set<string>(enumArray(params, 'group_by', COSTS_GROUPS));
  const projectIds = arrayParam(params, 'project_ids');
  const keyIds = arrayParam(params, 'api_key_ids');
  const selected = store.org.series.filter((s) => (!projectIds.length || projectIds.includes(s.projectId ?? '')) && (!keyIds.length || keyIds.includes(s.keyId ?? '')));
  const additions = store.additions();
  const now = store.now();
  return pageOf(tokens, q, (a, b) => {
    const rows = new Map<string, { nanos: number; quantity: number; dims: Record<string, unknown> }>();
    const add = (dims: Record<string, unknown>, nanos: number, quantity: number) => {
      const k = JSON.stringify(dims);
      const row = rows.get(k);
      if (row) {
        row.nanos += nanos;
        row.quantity += quantity;
      } else rows.set(k, { nanos, quantity, dims });
    };
    for (const s of selected) {
      for (const item of openAiLineItems(s, groupWindow(store.org, [s], a, b, now, additions, () => ({}))[0]?.metrics ?? {})) {
        add({ line_item: groups.has('line_item') ? item.lineItem : null, project_id: groups.has('project_id') ? s.projectId : null, api_key_id: groups.has('api_key_id') ? s.keyId : null }, item.nanos, item.quantity);
      }
    }
    // Storage billed to the data project, attributable to no key.
    const storage = store.org.projects.find((p) => p.name === 'Data pipeline');
    if (storage && !keyIds.length && (!projectIds.length || projectIds.includes(storage.id))) {
      const elapsed = Math.max(0, Math.min(b, now) - a);
      add({ line_item: groups.has('line_item') ? 'vector store storage' : null, project_id: groups.has('project_id') ? storage.id : null, api_key_id: null }, Math.floor((VECTOR_STORE_NANOS_PER_DAY * elapsed) / DAY_S), elapsed / DAY_S);
    }
    return [...rows.values()]
      .filter((r) => r.nanos > 0)
      .map((r) => ({
        object: 'organization.costs.result',
        amount: { value: Math.round(r.nanos) / 1e9, currency: 'usd' },
        ...r.dims,
        ...(groups.has('line_item') ? { quantity: r.quantity, quantity_unit: r.dims.line_item === 'vector store storage' ? 'gibibyte_hours' : 'tokens' } : {}),
      }));
  });
}

function listPage<T extends { id: string }>(items: T[], params: URLSearchParams, render: (item: T) => unknown) {
  const limit = intParam(params, 'limit', 20, 1, 100);
  const after = scalarParam(params, 'after');
  let start = 0;
  if (after) {
    const i = items.findIndex((x) => x.id === after);
    if (i < 0) throw new StandInError(400, 'invalid_request', `Invalid 'after': no object with id '${after}'.`, 'after');
    start = i + 1;
  }
  const page = items.slice(start, start + limit);
  return { object: 'list', data: page.map(render), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: start + limit < items.length };
}

function projectView(p: OrgState['projects'][number]) {
  return { id: p.id, object: 'organization.project', name: p.name, created_at: p.createdAt, archived_at: p.archivedAt, status: p.archivedAt === null ? 'active' : 'archived', external_key_id: null, residency: 'GLOBAL' };
}

function keyView(store: OrgStore, k: OrgKey) {
  const now = store.now();
  const additions = store.additions();
  let lastUsed: number | null = null;
  for (const s of store.seriesByKey().get(k.id) ?? []) {
    const end = Math.min(now, s.until ?? Infinity);
    for (let t = dayStart(end); t >= Math.max(dayStart(s.since), dayStart(end) - 7 * DAY_S); t -= DAY_S) {
      const m = groupWindow(store.org, [s], t, t + DAY_S, end, additions, () => ({}))[0];
      if (m) {
        lastUsed = Math.max(lastUsed ?? 0, Math.min(end, t + DAY_S) - 1);
        break;
      }
    }
  }
  const owner =
    k.owner.type === 'user'
      ? { type: 'user', user: { id: k.owner.id, name: k.owner.name, email: `${k.owner.name.split(' ')[0]!.toLowerCase()}@northwind.example`, role: 'owner', created_at: k.createdAt - 86_400 } }
      : { type: 'service_account', service_account: { id: k.owner.id, name: k.owner.name, created_at: k.createdAt - 3600, role: 'member' } };
  return {
    object: 'organization.project.api_key',
    redacted_value: k.redacted,
    name: k.name,
    created_at: k.createdAt,
    last_used_at: lastUsed,
    id: k.id,
    owner_project_access: k.status === 'active' ? 'active' : 'inactive',
    owner,
  };
}

async function route(store: OrgStore, tokens: PageTokens, req: IncomingMessage, path: string, params: URLSearchParams): Promise<unknown> {
  if (req.method !== 'GET') throw new StandInError(405, 'invalid_request', `Method ${req.method} not allowed on ${path} in this stand-in (it serves the reads).`);
  if (path === '/v1/organization/usage/completions') return usage(store, tokens, params, 'completions');
  if (path === '/v1/organization/usage/embeddings') return usage(store, tokens, params, 'embeddings');
  if (path === '/v1/organization/costs') return costs(store, tokens, params);
  if (path === '/v1/organization/projects') {
    const includeArchived = boolParam(params, 'include_archived') ?? false;
    const projects = [...store.org.projects].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    return listPage(projects.filter((p) => includeArchived || p.archivedAt === null), params, projectView);
  }
  const project = /^\/v1\/organization\/projects\/([^/]+)$/.exec(path);
  if (project) {
    const found = store.org.projects.find((p) => p.id === decodeURIComponent(project[1]!));
    if (!found) throw new StandInError(404, 'not_found', `No such project: ${project[1]}`);
    return projectView(found);
  }
  const keys = /^\/v1\/organization\/projects\/([^/]+)\/api_keys(?:\/([^/]+))?$/.exec(path);
  if (keys) {
    const project = store.org.projects.find((p) => p.id === decodeURIComponent(keys[1]!));
    if (!project) throw new StandInError(404, 'not_found', `No such project: ${keys[1]}`);
    const access = scalarParam(params, 'owner_project_access') ?? 'active';
    if (!['active', 'inactive', 'any'].includes(access)) throw new StandInError(400, 'invalid_request', 'owner_project_access must be one of active, inactive, any.', 'owner_project_access');
    const listed = store.org.keys
      .filter((k) => k.projectId === project.id && k.status !== 'deleted')
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    if (keys[2]) {
      const key = listed.find((k) => k.id === decodeURIComponent(keys[2]!));
      if (!key) throw new StandInError(404, 'not_found', `No such API key: ${keys[2]}`);
      return keyView(store, key);
    }
    const visible = listed.filter((k) => access === 'any' || (access === 'active') === (k.status === 'active'));
    return listPage(visible, params, (k) => keyView(store, k));
  }
  throw new StandInError(404, 'not_found', `Invalid URL (GET ${path})`);
}

export const OPENAI_ADMIN_SPEC: StandInSpec = {
  provider: 'openai',
  name: 'the OpenAI admin stand-in',
  portEnv: 'OPENAI_ADMIN_PORT',
  seedOrg: (now, key, seed) => seedOpenAiOrg(now, key, seed),
  bigOrg: bigOpenAiOrg,
  newAdminKey: newOpenAiAdminKey,
  credential,
  authenticate,
  route,
  errorBody,
  faultMessages: {
    rateLimit: 'Rate limit reached for requests to the organization usage API. Please try again later.',
    server: () => 'The server had an error while processing your request. Sorry about that!',
  },
  newKey: (store, input) => openAiKey(`${store.org.seed}|${input.index}|${Date.now()}`, input.name, input.projectId, users.ada, store.now()),
};

export const startOpenAiAdmin = (options: StandInOptions): Promise<StandIn> => startStandIn(OPENAI_ADMIN_SPEC, options);
