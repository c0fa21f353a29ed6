/**
 * A local stand-in of OpenAI's organization admin API (the part a usage importer reads), written from the official
 * OpenAPI document (https://github.com/openai/openai-openapi, `openapi.yaml`;
 * https://platform.openai.com/docs/api-reference/usage):
 *
 *   GET /v1/organization/usage/completions   start_time (unix s, required), end_time, bucket_width 1m|1h|1d,
 *                                            group_by project_id|user_id|api_key_id|model|batch|service_tier,
 *                                            project_ids, user_ids, api_key_ids, models, batch, limit, page
 *   GET /v1/organization/usage/embeddings    the same without batch/service_tier
 *   GET /v1/organization/usage/{images,audio_speeches,audio_transcriptions,moderations,vector_stores,
 *       code_interpreter_sessions,web_search_calls,file_search_calls}   each with its own metrics and dimensions
 *   GET /v1/organization/costs               1d buckets only, group_by project_id|line_item|api_key_id,
 *                                            project_ids, api_key_ids, limit 1..180 (default 7); amount.value dollars
 *   GET /v1/organization/projects[/{id}]     limit 1..100 (20), after, include_archived
 *   GET /v1/organization/projects/{id}/api_keys[/{key}]   limit, after, owner_project_access active|inactive|any
 *   GET|POST|DELETE /v1/organization/projects/{id}/spend_limit   the project's hard limit {threshold_amount (cents),
 *                                            currency USD, interval month} with enforcement.status inactive|enforcing;
 *                                            an enforcing project's usage stops growing (control: POST
 *                                            /_burnrate/spend-limits {overshootCents, lagSeconds}: how far past it
 *                                            spend gets first, and how long after reaching it the refusals begin:
 *                                            "Enforcement is not instantaneous", developers.openai.com/api/docs/
 *                                            guides/spend-limits, gives no figure; both 0 by default)
 *   POST /v1/chat/completions                inference, with the secret of a key made through the control API
 *                                            (`POST /_burnrate/keys` answers it): a project at its hard limit is
 *                                            refused 429 `project_spend_limit_exceeded` before the call runs; a call
 *                                            bills its input (JSON length / 4 tokens) and `max_tokens` of output
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
  groupByParam,
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
  pauseSeries,
  readJsonBody,
  scalarParam,
  type StandIn,
  type StandInOptions,
  type StandInSpec,
  startStandIn,
  type Series,
  type SeriesKind,
  StandInError,
} from '#local/provider-org.ts';

type StandInRates = { input: number; cached: number; output: number };
/**
 * The stand-in's list prices, in thousandths of a micro-dollar per token (= USD per 1M tokens × 1000), with the
 * Priority processing rates OpenAI publishes (openai.com/api-priority-processing). Batch and Flex are billed at half
 * (Flex "at Batch API rates"); a priority series of a model without priority rates is billed at its standard rates.
 */
export const OPENAI_STANDIN_PRICES: Record<string, StandInRates & { priority?: StandInRates }> = {
  'gpt-5.1-2025-11-13': { input: 1250, cached: 125, output: 10_000, priority: { input: 2500, cached: 250, output: 20_000 } },
  'gpt-5-mini-2025-08-07': { input: 250, cached: 25, output: 2000, priority: { input: 450, cached: 45, output: 3600 } },
  'gpt-4.1-2025-04-14': { input: 2000, cached: 500, output: 8000, priority: { input: 3500, cached: 875, output: 14_000 } },
  'gpt-4o-mini-2024-07-18': { input: 150, cached: 75, output: 600, priority: { input: 250, cached: 125, output: 1000 } },
  'o4-mini-2025-04-16': { input: 1100, cached: 275, output: 4400, priority: { input: 2000, cached: 500, output: 8000 } },
  'text-embedding-3-small': { input: 20, cached: 20, output: 0 },
};
/**
 * The stand-in's prices of usage beyond tokens, in nano-dollars per unit (OpenAI's pricing page): images per image
 * (dall-e-3, standard 1024×1024), speech per character (tts-1 $15 / 1M), transcription per second (whisper-1
 * $0.006 / min), moderations free, storage per byte-day ($0.10 / GiB-day), code interpreter per session ($0.03),
 * web search per call ($10 / 1,000), file search per call ($2.50 / 1,000).
 */
const UNIT_NANOS: Record<string, { metric: string; nanos: number; label: string; unit: string }> = {
  images: { metric: 'images', nanos: 40_000_000, label: 'images', unit: 'images' },
  audio_speeches: { metric: 'characters', nanos: 15_000, label: 'speech', unit: 'characters' },
  audio_transcriptions: { metric: 'seconds', nanos: 100_000, label: 'transcription', unit: 'duration_seconds' },
  moderations: { metric: 'requests', nanos: 0, label: 'moderations', unit: 'tokens' },
  vector_stores: { metric: 'bytes', nanos: 100_000_000 / 1_073_741_824, label: 'Vector storage', unit: 'gibibyte_hours' },
  code_interpreter_sessions: { metric: 'sessions', nanos: 30_000_000, label: 'code interpreter sessions', unit: 'duration_hours' },
  web_search_calls: { metric: 'calls', nanos: 10_000_000, label: 'web search tool calls', unit: 'tokens' },
  file_search_calls: { metric: 'calls', nanos: 2_500_000, label: 'file search tool calls', unit: 'tokens' },
};

/** Each usage endpoint beyond tokens: its result object, its metric fields, the dimensions it may be grouped by. */
const UNIT_USAGE: Record<string, { object: string; fields: Record<string, string>; groups: readonly string[] }> = {
  images: { object: 'organization.usage.images.result', fields: { images: 'images', num_model_requests: 'requests' }, groups: ['project_id', 'user_id', 'api_key_id', 'model', 'size', 'source'] },
  audio_speeches: { object: 'organization.usage.audio_speeches.result', fields: { characters: 'characters', num_model_requests: 'requests' }, groups: ['project_id', 'user_id', 'api_key_id', 'model'] },
  audio_transcriptions: { object: 'organization.usage.audio_transcriptions.result', fields: { seconds: 'seconds', num_model_requests: 'requests' }, groups: ['project_id', 'user_id', 'api_key_id', 'model'] },
  moderations: { object: 'organization.usage.moderations.result', fields: { input_tokens: 'input', num_model_requests: 'requests' }, groups: ['project_id', 'user_id', 'api_key_id', 'model'] },
  vector_stores: { object: 'organization.usage.vector_stores.result', fields: { usage_bytes: 'bytes' }, groups: ['project_id'] },
  code_interpreter_sessions: { object: 'organization.usage.code_interpreter_sessions.result', fields: { num_sessions: 'sessions' }, groups: ['project_id'] },
  web_search_calls: { object: 'organization.usage.web_searches.result', fields: { num_model_requests: 'requests', num_requests: 'calls' }, groups: ['project_id', 'user_id', 'api_key_id', 'model', 'context_level'] },
  file_search_calls: { object: 'organization.usage.file_searches.result', fields: { num_requests: 'calls' }, groups: ['project_id', 'user_id', 'api_key_id', 'vector_store_id'] },
};

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
    // A project switched to Priority processing for its latency-sensitive calls.
    series('completions', k.webProd, null, 'gpt-5.1-2025-11-13', 'priority', chat(250_000, 120_000, 0, 60_000, 180), origin),
    series('completions', k.notebook, null, 'gpt-4.1-2025-04-14', 'default', chat(420_000, 80_000, 0, 110_000, 150), k.notebook.createdAt),
    series('completions', k.legacy, null, 'gpt-4o-mini-2024-07-18', 'default', chat(260_000, 10_000, 0, 70_000, 400), origin, pLegacy.archivedAt),
    series('completions', k.leaked, null, 'gpt-5.1-2025-11-13', 'default', chat(600_000, 0, 0, 200_000, 700), origin, day(9) + 50_000),
    series('completions', k.contractor, null, 'gpt-5-mini-2025-08-07', 'default', chat(220_000, 30_000, 0, 50_000, 300), origin, day(20) + 30_000),
    series('completions', k.mobile, null, 'gpt-5-mini-2025-08-07', 'default', chat(500_000, 200_000, 10_000, 120_000, 900), k.mobile.createdAt),
    // The playground: usage without an API key.
    series('completions', null, pDefault.id, 'gpt-5.1-2025-11-13', 'default', chat(90_000, 0, 0, 45_000, 40), origin),
    // Beyond tokens: images, speech and transcription, moderation, web and file search calls; storage and code
    // interpreter sessions of the data project (no key).
    series('images', k.webProd, null, 'dall-e-3', 'default', { images: 60, requests: 60 }, origin),
    series('audio_speeches', k.support, null, 'tts-1', 'default', { characters: 180_000, requests: 90 }, origin),
    series('audio_transcriptions', k.support, null, 'whisper-1', 'default', { seconds: 5400, requests: 45 }, origin),
    series('moderations', k.webProd, null, 'omni-moderation-latest', 'default', { input: 300_000, requests: 1200 }, origin),
    series('web_search_calls', k.webProd, null, 'gpt-5.1-2025-11-13', 'default', { calls: 140, requests: 120 }, origin),
    series('file_search_calls', k.indexer, null, '', 'default', { calls: 400 }, origin),
    series('vector_stores', null, pData.id, '', 'default', { bytes: 3 * 1_073_741_824 }, origin),
    series('code_interpreter_sessions', null, pData.id, '', 'default', { sessions: 25 }, origin),
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
  const groups = groupByParam(params, 'repeated', kind === 'completions' ? COMPLETIONS_GROUPS : EMBEDDINGS_GROUPS);
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
    // Batch usage reports `service_tier: "default"` (its tier is the `batch` flag).
    ...(kind === 'completions' ? { batch: g.has('batch') ? s.tier === 'batch' : null, service_tier: g.has('service_tier') ? (s.tier === 'batch' ? 'default' : s.tier) : null } : {}),
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

/** A usage endpoint beyond tokens (images, speech, storage, tool calls, …): its own metrics and dimensions. */
function unitUsage(store: OrgStore, tokens: PageTokens, params: URLSearchParams, kind: SeriesKind) {
  const spec = UNIT_USAGE[kind]!;
  const q = timeQuery(store, tokens, params, ['1m', '1h', '1d'], null);
  const g = new Set<string>(groupByParam(params, 'repeated', spec.groups));
  const projectIds = arrayParam(params, 'project_ids');
  const keyIds = spec.groups.includes('api_key_id') ? arrayParam(params, 'api_key_ids') : [];
  const models = spec.groups.includes('model') ? arrayParam(params, 'models') : [];
  const selected = store.org.series.filter(
    (s) => s.kind === kind && (!projectIds.length || projectIds.includes(s.projectId ?? '')) && (!keyIds.length || keyIds.includes(s.keyId ?? '')) && (!models.length || models.includes(s.model)),
  );
  const dims = (s: Series) =>
    Object.fromEntries(
      spec.groups.map((d) => [
        d,
        !g.has(d) ? null : d === 'project_id' ? s.projectId : d === 'user_id' ? s.userId : d === 'api_key_id' ? s.keyId : d === 'model' ? s.model || null : d === 'size' ? '1024x1024' : d === 'source' ? 'image.generation' : d === 'context_level' ? 'medium' : null,
      ]),
    );
  const additions = store.additions();
  const now = store.now();
  return pageOf(tokens, q, (a, b) =>
    groupWindow(store.org, selected, a, b, now, additions, dims).map(({ dims: d, metrics: m }) => ({
      object: spec.object,
      ...Object.fromEntries(Object.entries(spec.fields).map(([field, metric]) => [field, m[metric] ?? 0])),
      ...d,
    })),
  );
}

/** Billed nano-dollars of one series' usage, per line item: batch and flex at half price, priority at its own rates. */
export function openAiLineItems(s: Series, m: Metrics): Array<{ lineItem: string; nanos: number; quantity: number; unit?: string }> {
  const units = UNIT_NANOS[s.kind];
  if (units) {
    const quantity = m[units.metric] ?? 0;
    // Web search calls are billed without their model ("web search tool calls"), as real bills show.
    const model = s.model && s.kind !== 'web_search_calls' ? `${s.model}, ` : '';
    return quantity > 0 ? [{ lineItem: `${model}${units.label}`, nanos: quantity * units.nanos, quantity, unit: units.unit }] : [];
  }
  const list = OPENAI_STANDIN_PRICES[s.model];
  if (!list) return [];
  const price = s.tier === 'priority' ? (list.priority ?? list) : list;
  const half = s.tier === 'batch' || s.tier === 'flex' ? 2 : 1;
  // Priority as real bills word it ("priority | <model>, input"); batch and flex with a suffix (no real example found).
  const prefix = s.tier === 'priority' ? 'priority | ' : '';
  const suffix = s.tier === 'batch' ? ' (batch)' : s.tier === 'flex' ? ' (flex)' : '';
  if (s.kind === 'embeddings') return [{ lineItem: `${s.model}, input`, nanos: ((m.input ?? 0) * price.input) / half, quantity: m.input ?? 0 }];
  const input = (m.uncached ?? 0) + (m.cacheWrite ?? 0);
  return [
    { lineItem: `${prefix}${s.model}, input${suffix}`, nanos: (input * price.input) / half, quantity: input },
    { lineItem: `${prefix}${s.model}, cached input${suffix}`, nanos: ((m.cached ?? 0) * price.cached) / half, quantity: m.cached ?? 0 },
    { lineItem: `${prefix}${s.model}, output${suffix}`, nanos: ((m.output ?? 0) * price.output) / half, quantity: m.output ?? 0 },
  ].filter((x) => x.quantity > 0);
}

function costs(store: OrgStore, tokens: PageTokens, params: URLSearchParams) {
  const q = timeQuery(store, tokens, params, ['1d'], { default: 7, max: 180 });
  const groups = new Set<string>(groupByParam(params, 'repeated', COSTS_GROUPS));
  const projectIds = arrayParam(params, 'project_ids');
  const keyIds = arrayParam(params, 'api_key_ids');
  const selected = store.org.series.filter((s) => (!projectIds.length || projectIds.includes(s.projectId ?? '')) && (!keyIds.length || keyIds.includes(s.keyId ?? '')));
  const additions = store.additions();
  const now = store.now();
  return pageOf(tokens, q, (a, b) => {
    const rows = new Map<string, { nanos: number; quantity: number; unit: string; dims: Record<string, unknown> }>();
    const add = (dims: Record<string, unknown>, nanos: number, quantity: number, unit: string) => {
      const k = JSON.stringify(dims);
      const row = rows.get(k);
      if (row) {
        row.nanos += nanos;
        row.quantity += quantity;
      } else rows.set(k, { nanos, quantity, unit, dims });
    };
    for (const s of selected) {
      for (const item of openAiLineItems(s, groupWindow(store.org, [s], a, b, now, additions, () => ({}))[0]?.metrics ?? {})) {
        add({ line_item: groups.has('line_item') ? item.lineItem : null, project_id: groups.has('project_id') ? s.projectId : null, api_key_id: groups.has('api_key_id') ? s.keyId : null }, item.nanos, item.quantity, item.unit ?? 'tokens');
      }
    }
    return [...rows.values()]
      .filter((r) => r.nanos > 0)
      .map((r) => ({
        object: 'organization.costs.result',
        amount: { value: Math.round(r.nanos) / 1e9, currency: 'usd' },
        ...r.dims,
        ...(groups.has('line_item') ? { quantity: r.quantity, quantity_unit: r.unit } : {}),
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

// ---------------------------------------------------------------------------------------------------------------
// Projects' hard spend limits (GET|POST|DELETE /v1/organization/projects/{id}/spend_limit)

/** A project's spend this UTC month (nano-dollars): its series' usage at the stand-in's prices. */
function projectMonthNanos(store: OrgStore, projectId: string, now: number): number {
  const d = new Date(now * 1000);
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  const additions = store.additions();
  let nanos = 0;
  for (const s of store.org.series) {
    if (s.projectId !== projectId) continue;
    for (let day = monthStart; day <= now; day += DAY_S) {
      const m = groupWindow(store.org, [s], day, Math.min(day + DAY_S, now + 1), now, additions, () => ({}))[0]?.metrics;
      if (m) for (const item of openAiLineItems(s, m)) nanos += item.nanos;
    }
  }
  return nanos;
}

/**
 * Brings each limit's enforcement up to date: a project whose spend this month reached its limit (plus the
 * configured overshoot: "Enforcement is not instantaneous, so recorded spend can slightly exceed") is `enforcing`,
 * and its usage stops growing; below it again (a raise, a removal, a new month), it resumes.
 */
function refreshEnforcement(store: OrgStore): void {
  const limits = store.org.spendLimits;
  if (!limits) return;
  const now = store.now();
  const lag = store.org.enforcementLagSeconds ?? 0;
  for (const [projectId, limit] of Object.entries(limits)) {
    // Reached when spend is at the limit (plus the overshoot); enforced `lag` seconds after it was first seen reached.
    const reached = projectMonthNanos(store, projectId, now) >= (limit.thresholdCents + (store.org.overshootCents ?? 0)) * 10_000_000;
    if (reached) limit.reachedAt ??= now;
    else delete limit.reachedAt;
    const over = reached && now >= limit.reachedAt! + lag;
    if (over !== limit.enforcing) {
      limit.enforcing = over;
      limit.since = now;
      for (const s of store.org.series) if (s.projectId === projectId) pauseSeries(s, over, now);
    }
  }
}

function setProjectPaused(store: OrgStore, projectId: string, paused: boolean): void {
  for (const s of store.org.series) if (s.projectId === projectId) pauseSeries(s, paused, store.now());
}

const spendLimitView = (l: { thresholdCents: number; enforcing: boolean }) => ({
  object: 'project.spend_limit',
  threshold_amount: l.thresholdCents,
  currency: 'USD',
  interval: 'month',
  enforcement: { status: l.enforcing ? 'enforcing' : 'inactive' },
});

async function spendLimit(store: OrgStore, req: IncomingMessage, projectId: string): Promise<unknown> {
  if (!store.org.projects.some((p) => p.id === projectId)) throw new StandInError(404, 'not_found', `No such project: ${projectId}`);
  const limits = (store.org.spendLimits ??= {});
  if (req.method === 'GET') {
    const l = limits[projectId];
    if (!l) throw new StandInError(404, 'not_found', `No spend limit is set for project ${projectId}.`);
    return spendLimitView(l);
  }
  if (req.method === 'DELETE') {
    if (!limits[projectId]) throw new StandInError(404, 'not_found', `No spend limit is set for project ${projectId}.`);
    delete limits[projectId];
    setProjectPaused(store, projectId, false);
    await store.save();
    return { object: 'project.spend_limit.deleted', deleted: true };
  }
  if (req.method !== 'POST') throw new StandInError(405, 'invalid_request', `Method ${req.method} not allowed.`);
  const body = await readJsonBody(req);
  const amount = body.threshold_amount;
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1) throw new StandInError(400, 'invalid_request', 'threshold_amount must be an integer number of cents ≥ 1.', 'threshold_amount');
  if (body.currency !== 'USD') throw new StandInError(400, 'invalid_request', "currency must be 'USD'.", 'currency');
  if (body.interval !== 'month') throw new StandInError(400, 'invalid_request', "interval must be 'month'.", 'interval');
  limits[projectId] = { thresholdCents: amount, enforcing: limits[projectId]?.enforcing ?? false, since: store.now(), ...(limits[projectId]?.reachedAt !== undefined ? { reachedAt: limits[projectId]!.reachedAt } : {}) };
  refreshEnforcement(store);
  await store.save();
  return spendLimitView(limits[projectId]);
}

async function route(store: OrgStore, tokens: PageTokens, req: IncomingMessage, path: string, params: URLSearchParams): Promise<unknown> {
  refreshEnforcement(store);
  const limit = /^\/v1\/organization\/projects\/([^/]+)\/spend_limit$/.exec(path);
  if (limit) return spendLimit(store, req, decodeURIComponent(limit[1]!));
  if (req.method !== 'GET') throw new StandInError(405, 'invalid_request', `Method ${req.method} not allowed on ${path} in this stand-in (it serves the reads).`);
  if (path === '/v1/organization/usage/completions') return usage(store, tokens, params, 'completions');
  if (path === '/v1/organization/usage/embeddings') return usage(store, tokens, params, 'embeddings');
  if (path === '/v1/organization/costs') return costs(store, tokens, params);
  const beyond = /^\/v1\/organization\/usage\/([a-z_]+)$/.exec(path)?.[1];
  if (beyond && UNIT_USAGE[beyond]) return unitUsage(store, tokens, params, beyond as SeriesKind);
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
  refuses: (store, s) => {
    refreshEnforcement(store);
    return s.projectId && store.org.spendLimits?.[s.projectId]?.enforcing ? 'project_spend_limit_exceeded' : undefined;
  },
  readOnlyMessage: 'You have insufficient permissions for this operation. Missing scopes: api.management.write (a read-only admin key).',
  newSecret: () => `sk-proj-${randomBytes(60).toString('base64url').slice(0, 80)}`,
  inference: {
    // Chat completions (platform.openai.com/docs/api-reference/chat/create), as the `openai` SDK calls them.
    paths: ['/v1/chat/completions'],
    credential,
    matches: (key, secret) => key.secret === secret,
    series: () => ({}),
    usage: (_s, input, output) => ({
      metrics: { uncached: input, cached: 0, cacheWrite: 0, output, requests: 1 },
      usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    }),
    answer: (id, model, usage, created) => ({
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.', refusal: null }, logprobs: null, finish_reason: 'length' }],
      usage,
      service_tier: 'default',
    }),
    // At a project's hard limit: 429 `project_spend_limit_exceeded` (developers.openai.com/api/docs/guides/spend-limits).
    refusal: (reason) =>
      reason === 'project_spend_limit_exceeded'
        ? {
            status: 429,
            body: { error: { message: "You exceeded your project's monthly spend limit. Raise or remove the project's hard limit, or wait for the next month.", type: 'insufficient_quota', param: null, code: 'project_spend_limit_exceeded' } },
          }
        : { status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } },
    // The spend a call adds is tracked at once: a limit it reaches starts its lag now.
    afterCall: (store) => refreshEnforcement(store),
  },
  newKey: (store, input) => openAiKey(`${store.org.seed}|${input.index}|${Date.now()}`, input.name, input.projectId, users.ada, store.now()),
};

export const startOpenAiAdmin = (options: StandInOptions): Promise<StandIn> => startStandIn(OPENAI_ADMIN_SPEC, options);
