/**
 * A local stand-in of Anthropic's Admin API (the part a usage importer reads), written from the official reference
 * (https://platform.claude.com/docs/en/api/admin/usage_report/retrieve_messages, …/cost_report, …/api_keys; the
 * guide https://platform.claude.com/docs/en/manage-claude/usage-cost-api):
 *
 *   GET  /v1/organizations/usage_report/messages   starting_at (RFC 3339, required), ending_at, bucket_width
 *        1m|1h|1d, group_by[] api_key_id|workspace_id|model|service_tier|context_window|inference_geo|account_id|
 *        service_account_id, filters api_key_ids[] workspace_ids[] models[] service_tiers[] context_window[]
 *        inference_geos[] account_ids[] service_account_ids[], limit, page
 *   GET  /v1/organizations/cost_report              1d only, group_by[] workspace_id|description, limit, page;
 *                                                   `amount` a decimal string in cents, currency "USD"
 *   GET  /v1/organizations/api_keys[/{id}]          after_id | before_id, limit 1..1000 (20), status, workspace_id
 *   POST /v1/organizations/api_keys/{id}            {name?, status?: active|inactive|archived}
 *   GET  /v1/organizations/me                      the admin key's organization {id (UUID), type, name}
 *   GET  /v1/organizations/workspaces[/{id}]        after_id | before_id, limit 1..1000 (20), include_archived,
 *                                                   include_default (both false by default); `data_residency` as
 *                                                   the reference's defaults (us, unrestricted, global)
 *   POST|GET /v1/organizations/spend_limits[/{id}], DELETE …/{id}   workspace limits (beta, early access; below)
 *   POST /v1/messages                               inference, with the secret of a key made through the control API:
 *                                                   an inactive key 401; a workspace at its monthly spend limit 400
 *                                                   invalid_request_error "You have reached your specified workspace
 *                                                   API usage limits…" before the call runs; a call bills its input
 *                                                   (JSON length / 4 tokens) and `max_tokens` of output
 *
 * Headers `x-api-key: <admin key>` (`sk-ant-admin01-…`, printed by `npm start`) and `anthropic-version`; errors as
 * `{type: "error", error: {type, message}, request_id}`. Buckets snap to the UTC minute/hour/day; a bucket is
 * returned once it started and if it ends no later than `ending_at`; the current one is partial and grows.
 * `api_key_id` is null for Console (playground) usage even when grouped by it, `workspace_id` null for the default
 * workspace. Costs of a day appear once the day is over (the report lags), and Priority Tier is not in them.
 */
import type { IncomingMessage } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import {
  arrayParam,
  BUCKET_LIMITS,
  bucketWidthParam,
  BUCKET_WIDTHS,
  canonicalQuery,
  DAY_S,
  dayStart,
  enumArray,
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
  parseDate,
  pauseSeries,
  readJsonBody,
  rfc3339,
  scalarParam,
  seriesWindow,
  type StandIn,
  type StandInOptions,
  type StandInSpec,
  startStandIn,
  type Series,
  StandInError,
} from '#local/provider-org.ts';

/** Per-token rates in thousandths of a micro-dollar (USD per 1M tokens × 1000). */
interface StandInRates {
  input: number;
  output: number;
  cacheRead: number;
  cache5m: number;
  cache1h: number;
}

/**
 * Sonnet 4 and 4.5 with the 1M context window: usage past 200K input tokens (`context_window: "200k-1M"`) is billed at
 * $6 input and $22.50 output per 1M, cache reads and writes by the same multipliers: the price table's rows, read from
 * secondary sources quoting Anthropic's pricing page ("Long context pricing"; docs/features/ingestion-and-pricing.md names
 * them).
 */
const SONNET_LONG_CONTEXT: StandInRates = { input: 6000, output: 22_500, cacheRead: 600, cache5m: 7500, cache1h: 12_000 };

/**
 * The stand-in's list prices: base input, output, cache read (0.1×), 5-minute cache write (1.25×), 1-hour cache write
 * (2×); `long`: the long-context rates of the models that have them. Batch at half price.
 */
export const ANTHROPIC_STANDIN_PRICES: Record<string, StandInRates & { name: string; long?: StandInRates }> = {
  'claude-sonnet-4-5-20250929': { name: 'Claude Sonnet 4.5', input: 3000, output: 15_000, cacheRead: 300, cache5m: 3750, cache1h: 6000, long: SONNET_LONG_CONTEXT },
  'claude-haiku-4-5-20251001': { name: 'Claude Haiku 4.5', input: 1000, output: 5000, cacheRead: 100, cache5m: 1250, cache1h: 2000 },
  'claude-opus-4-5-20251101': { name: 'Claude Opus 4.5', input: 5000, output: 25_000, cacheRead: 500, cache5m: 6250, cache1h: 10_000 },
  'claude-sonnet-4-20250514': { name: 'Claude Sonnet 4', input: 3000, output: 15_000, cacheRead: 300, cache5m: 3750, cache1h: 6000, long: SONNET_LONG_CONTEXT },
};
/** Web search: $10 per 1,000 searches = 10,000,000 nano-dollars each. */
const WEB_SEARCH_NANOS = 10_000_000;
/** Code execution billed to the Production workspace per day, attributable to no key (nano-dollars). */
const CODE_EXECUTION_NANOS_PER_DAY = 250_000_000;

const USAGE_GROUPS = ['api_key_id', 'workspace_id', 'model', 'service_tier', 'context_window', 'inference_geo', 'account_id', 'service_account_id'] as const;
const COST_GROUPS = ['workspace_id', 'description'] as const;
const SERVICE_TIERS = ['standard', 'batch', 'priority', 'priority_on_demand', 'flex', 'flex_discount'];
const ARRAY_PARAMS = ['group_by', 'api_key_ids', 'workspace_ids', 'models', 'service_tiers', 'context_window', 'inference_geos', 'account_ids', 'service_account_ids'];
const TOKEN_TYPES: Array<[string, keyof StandInRates, string, string]> = [
  ['uncached', 'input', 'uncached_input_tokens', 'Input Tokens'],
  ['output', 'output', 'output_tokens', 'Output Tokens'],
  ['cacheRead', 'cacheRead', 'cache_read_input_tokens', 'Input Tokens, Cache Hit'],
  ['cache5m', 'cache5m', 'cache_creation.ephemeral_5m_input_tokens', 'Input Tokens, 5m Cache Write'],
  ['cache1h', 'cache1h', 'cache_creation.ephemeral_1h_input_tokens', 'Input Tokens, 1h Cache Write'],
];

export const newAnthropicAdminKey = () => `sk-ant-admin01-${randomBytes(48).toString('base64url')}-${randomBytes(4).toString('hex')}AA`;

// ---------------------------------------------------------------------------------------------------------------
// The made-up organization

const users = {
  lin: { type: 'user' as const, id: 'user_01WCz1FkmYMm4gnmykNKUu3Q', name: 'Lin Ohara' },
  sam: { type: 'user' as const, id: 'user_01Hq8sD2ZfPyb3Kq7Tn5Wm1X', name: 'Sam Reyes' },
};

function anthropicKey(seed: string, name: string, workspaceId: string | null, owner: OrgKey['owner'], createdAt: number, status: OrgKey['status'] = 'active'): OrgKey {
  return {
    id: `apikey_01${idChars(`${seed}|key|${name}`, 22)}`,
    name,
    projectId: workspaceId,
    redacted: `sk-ant-api03-${idChars(`${seed}|hint1|${name}`, 3)}...${idChars(`${seed}|hint2|${name}`, 2)}AA`,
    createdAt,
    status,
    owner,
  };
}

function series(key: OrgKey | null, model: string, tier: string, base: Metrics, since: number, until: number | null = null, contextWindow = '0-200k'): Series {
  return {
    id: `${key?.id ?? '-'}|${model}|${tier}|messages${contextWindow === '0-200k' ? '' : `|${contextWindow}`}`,
    kind: 'messages',
    keyId: key?.id ?? null,
    projectId: key ? key.projectId : null,
    userId: null,
    model,
    tier,
    contextWindow,
    base,
    since,
    until,
  };
}

const msg = (uncached: number, cacheRead: number, cache5m: number, cache1h: number, output: number, webSearch = 0): Metrics => ({ uncached, cacheRead, cache5m, cache1h, output, webSearch });

/**
 * "Harbor Analytics": the default workspace and three more (one archived), eleven keys in every status (active,
 * inactive, archived, expired, one deleted in the Console with its history), four current models in standard,
 * batch and priority tiers, 5-minute and 1-hour cache writes, web search, long context, and Console usage.
 */
export function seedAnthropicOrg(now: number, adminKey: string, seed = 'harbor'): OrgState {
  const origin = firstOfPreviousMonth(now);
  const before = origin - 40 * DAY_S;
  const day = (n: number) => origin + n * DAY_S;
  const today = dayStart(now);
  const workspace = (name: string, createdAt: number, archivedAt: number | null = null) => ({ id: `wrkspc_01${idChars(`${seed}|ws|${name}`, 22)}`, name, createdAt, archivedAt });
  const wProd = workspace('Production', before);
  const wResearch = workspace('Research', before + DAY_S);
  const wOld = workspace('Old experiments', before - 60 * DAY_S, day(8) + 7200);
  const k = {
    prod: anthropicKey(seed, 'prod-api', wProd.id, users.lin, before + 100),
    prodBatch: anthropicKey(seed, 'prod-batch', wProd.id, users.lin, before + 200),
    agent: anthropicKey(seed, 'support-agent', wProd.id, users.sam, before + 300),
    research: anthropicKey(seed, 'research-opus', wResearch.id, users.sam, before + 400),
    code: anthropicKey(seed, 'claude-code-team', null, users.lin, before + 500),
    defaultWs: anthropicKey(seed, 'default-workspace-key', null, users.sam, before + 600),
    paused: anthropicKey(seed, 'paused-integration', wProd.id, users.lin, before + 700, 'inactive'),
    archived: anthropicKey(seed, 'old-experiments', wOld.id, users.sam, before - 50 * DAY_S, 'archived'),
    expired: anthropicKey(seed, 'hackathon', wResearch.id, users.sam, before + 800, 'expired'),
    deleted: anthropicKey(seed, 'leaked-key', wProd.id, users.lin, before + 900, 'deleted'),
    fresh: anthropicKey(seed, 'new-summarizer', wResearch.id, users.lin, Math.max(today - 2 * DAY_S, origin) + 3600),
  };
  const s: Series[] = [
    series(k.prod, 'claude-sonnet-4-5-20250929', 'standard', msg(2_100_000, 6_400_000, 380_000, 90_000, 410_000, 35), origin),
    series(k.prod, 'claude-haiku-4-5-20251001', 'standard', msg(3_900_000, 1_200_000, 150_000, 0, 620_000), origin),
    series(k.prod, 'claude-sonnet-4-5-20250929', 'standard', msg(600_000, 900_000, 40_000, 0, 60_000), origin, null, '200k-1M'),
    series(k.prodBatch, 'claude-sonnet-4-5-20250929', 'batch', msg(7_500_000, 0, 0, 0, 1_100_000), origin),
    series(k.prodBatch, 'claude-haiku-4-5-20251001', 'batch', msg(9_000_000, 0, 0, 0, 800_000), origin),
    series(k.agent, 'claude-haiku-4-5-20251001', 'standard', msg(800_000, 2_600_000, 0, 240_000, 190_000, 12), origin),
    series(k.research, 'claude-opus-4-5-20251101', 'priority', msg(450_000, 700_000, 60_000, 30_000, 160_000), origin),
    series(k.research, 'claude-opus-4-5-20251101', 'standard', msg(300_000, 200_000, 20_000, 0, 90_000, 20), origin),
    series(k.code, 'claude-sonnet-4-5-20250929', 'standard', msg(900_000, 14_000_000, 1_100_000, 0, 520_000), origin),
    series(k.defaultWs, 'claude-sonnet-4-20250514', 'standard', msg(350_000, 0, 0, 0, 80_000), origin),
    series(k.paused, 'claude-haiku-4-5-20251001', 'standard', msg(200_000, 0, 0, 0, 40_000), origin, day(18) + 20_000),
    series(k.archived, 'claude-sonnet-4-20250514', 'standard', msg(150_000, 0, 0, 0, 30_000), origin, wOld.archivedAt),
    series(k.expired, 'claude-haiku-4-5-20251001', 'standard', msg(120_000, 0, 0, 0, 25_000), origin, day(5) + 40_000),
    series(k.deleted, 'claude-sonnet-4-5-20250929', 'standard', msg(500_000, 0, 0, 0, 100_000), origin, day(11) + 10_000),
    series(k.fresh, 'claude-haiku-4-5-20251001', 'standard', msg(400_000, 300_000, 50_000, 0, 70_000), k.fresh.createdAt),
    // The Console's Workbench/playground: no API key, the default workspace.
    series(null, 'claude-sonnet-4-5-20250929', 'standard', msg(60_000, 0, 0, 0, 30_000), origin),
  ];
  return makeOrg({
    provider: 'anthropic',
    seed,
    originDay: origin,
    adminKey,
    inferenceKeys: [`sk-ant-api03-${idChars(`${seed}|inference`, 86)}-${idChars(`${seed}|inf2`, 6)}AA`],
    projects: [wProd, wResearch, wOld],
    keys: Object.values(k),
    series: s,
  });
}

const BIG_MODELS = Object.keys(ANTHROPIC_STANDIN_PRICES);

/** N keys in workspaces of 100 × M models, usage every day of the last D days (today included); every tenth key with long-context calls too. */
export function bigAnthropicOrg(now: number, adminKey: string, size: { keys: number; models: number; days: number }): OrgState {
  const seed = `big-${size.keys}-${size.models}-${size.days}`;
  const since = dayStart(now) - (size.days - 1) * DAY_S;
  const workspaces = Array.from({ length: Math.ceil(size.keys / 100) }, (_, i) => ({ id: `wrkspc_01${idChars(`${seed}|ws|${i}`, 22)}`, name: `Team ${i + 1}`, createdAt: since - 30 * DAY_S, archivedAt: null }));
  const models = Array.from({ length: size.models }, (_, i) => (i < BIG_MODELS.length ? BIG_MODELS[i]! : `claude-haiku-4-5-2025100${i}`));
  const keys: OrgKey[] = [];
  const s: Series[] = [];
  for (let i = 0; i < size.keys; i++) {
    const key = anthropicKey(seed, `key-${String(i + 1).padStart(4, '0')}`, workspaces[Math.floor(i / 100)]!.id, users.lin, since - DAY_S - i);
    keys.push(key);
    for (const model of models) s.push(series(key, model, 'standard', msg(150_000 + (i % 5) * 10_000, 300_000, 20_000, 5000, 40_000), since));
    // Every tenth key also makes calls of more than 200K input on the first model (Sonnet 4.5): the long-context
    // window.
    if (i % 10 === 0) s.push(series(key, models[0]!, 'standard', msg(450_000, 600_000, 20_000, 0, 30_000), since, null, '200k-1M'));
  }
  return makeOrg({ provider: 'anthropic', seed, originDay: since, adminKey, inferenceKeys: [], projects: workspaces, keys, series: s, big: size });
}

// ---------------------------------------------------------------------------------------------------------------
// The API

const ERROR_TYPES: Record<StandInError['kind'], string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  rate_limit: 'rate_limit_error',
  server: 'api_error',
};

function errorBody(e: StandInError) {
  const type = e.status === 529 ? 'overloaded_error' : ERROR_TYPES[e.kind];
  return { type: 'error', error: { type, message: e.message }, request_id: `req_011C${randomBytes(12).toString('base64url')}` };
}

const credential = (req: IncomingMessage) => String(req.headers['x-api-key'] ?? '').trim();

/** `store`: the organization whose admin key `key` is (revoked or not), if any. */
function authenticate(store: OrgStore | undefined, key: string, req: IncomingMessage): void {
  if (!key) throw new StandInError(401, 'authentication', 'x-api-key header is required');
  // An inference key (sk-ant-api03-…) is a key, just not one that may use the Admin API.
  if (!store && key.startsWith('sk-ant-api')) {
    throw new StandInError(403, 'permission', 'This endpoint requires an Admin API key (sk-ant-admin…); a workspace API key does not have access to the Admin API.');
  }
  if (!store || store.org.adminRevoked) throw new StandInError(401, 'authentication', 'invalid x-api-key');
  if (!req.headers['anthropic-version']) throw new StandInError(400, 'invalid_request', 'anthropic-version: header is required');
}

interface ReportQuery {
  width: number;
  limit: number;
  pos: number;
  /** Buckets must end no later than this (ending_at), else Infinity. */
  endLimit: number;
  canonical: string;
}

function reportQuery(tokens: PageTokens, params: URLSearchParams, widths: Array<'1m' | '1h' | '1d'>, limits: { default: number; max: number } | null): ReportQuery {
  const rawStart = scalarParam(params, 'starting_at');
  if (!rawStart) throw new StandInError(400, 'invalid_request', 'starting_at: Field required');
  const start = rfc3339Param(rawStart, 'starting_at');
  const rawEnd = scalarParam(params, 'ending_at');
  const end = rawEnd ? rfc3339Param(rawEnd, 'ending_at') : Infinity;
  if (end <= start) throw new StandInError(400, 'invalid_request', 'Invalid date range: ending date must be after starting date');
  const widthName = bucketWidthParam(params, widths);
  const width = BUCKET_WIDTHS[widthName];
  const lim = limits ?? BUCKET_LIMITS[widthName];
  const limit = intParam(params, 'limit', lim.default, 1, lim.max, `limit: Input should be less than or equal to ${lim.max}${limits ? '' : ` for bucket_width ${widthName}`}`);
  const canonical = canonicalQuery(params, ARRAY_PARAMS);
  const page = scalarParam(params, 'page');
  return { width, limit, pos: page ? tokens.read(canonical, page) : Math.floor(start / width) * width, endLimit: end, canonical };
}

function rfc3339Param(value: string, name: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    throw new StandInError(400, 'invalid_request', `${name}: Input should be a valid datetime (RFC 3339), got '${value}'`);
  }
  return parseDate(value);
}

function reportPage(store: OrgStore, tokens: PageTokens, q: ReportQuery, render: (a: number, b: number) => unknown[]) {
  const now = store.now();
  const fits = (s: number) => s <= now && s + q.width <= q.endLimit;
  const data: unknown[] = [];
  let s = q.pos;
  let rows = 0;
  while (fits(s) && data.length < q.limit && rows < MAX_ROWS_PER_PAGE) {
    const results = render(s, s + q.width);
    data.push({ starting_at: rfc3339(s), ending_at: rfc3339(s + q.width), results });
    rows += results.length;
    s += q.width;
  }
  const more = fits(s);
  return { data, has_more: more, next_page: more ? tokens.mint(q.canonical, s) : null };
}

function usageReport(store: OrgStore, tokens: PageTokens, req: IncomingMessage, params: URLSearchParams) {
  const q = reportQuery(tokens, params, ['1m', '1h', '1d'], null);
  const groups = new Set<string>(groupByParam(params, 'brackets', [...USAGE_GROUPS, 'speed']));
  if ((groups.has('speed') || params.has('speeds[]') || params.has('speeds')) && !String(req.headers['anthropic-beta'] ?? '').includes('fast-mode-2026-02-01')) {
    throw new StandInError(400, 'invalid_request', "Grouping or filtering by speed requires the 'anthropic-beta: fast-mode-2026-02-01' header");
  }
  const keyIds = arrayParam(params, 'api_key_ids');
  const workspaceIds = arrayParam(params, 'workspace_ids');
  const models = arrayParam(params, 'models');
  const tiers = enumArray(params, 'service_tiers', SERVICE_TIERS);
  const windows = enumArray(params, 'context_window', ['0-200k', '200k-1M']);
  const geos = enumArray(params, 'inference_geos', ['global', 'us', 'not_available']);
  const accounts = arrayParam(params, 'account_ids');
  const serviceAccounts = arrayParam(params, 'service_account_ids');
  const selected = store.org.series.filter(
    (s) =>
      s.kind === 'messages' &&
      (!keyIds.length || keyIds.includes(s.keyId ?? '')) &&
      (!workspaceIds.length || workspaceIds.includes(s.projectId ?? '')) &&
      (!models.length || models.includes(s.model)) &&
      (!tiers.length || tiers.includes(s.tier)) &&
      (!windows.length || windows.includes(s.contextWindow ?? '0-200k')) &&
      (!geos.length || geos.includes('global')) &&
      !accounts.length &&
      !serviceAccounts.length,
  );
  const dims = (s: Series) => ({
    api_key_id: groups.has('api_key_id') ? s.keyId : null,
    workspace_id: groups.has('workspace_id') ? s.projectId : null,
    model: groups.has('model') ? s.model : null,
    service_tier: groups.has('service_tier') ? s.tier : null,
    context_window: groups.has('context_window') ? (s.contextWindow ?? '0-200k') : null,
    inference_geo: groups.has('inference_geo') ? 'global' : null,
    // Only OAuth / OIDC-federated requests carry these: none in this organization.
    account_id: null,
    service_account_id: null,
    ...(groups.has('speed') ? { speed: 'standard' } : {}),
  });
  const additions = store.additions();
  const now = store.now();
  return reportPage(store, tokens, q, (a, b) =>
    groupWindow(store.org, selected, a, b, now, additions, dims).map(({ dims: d, metrics: m }) => ({
      ...d,
      uncached_input_tokens: m.uncached ?? 0,
      cache_read_input_tokens: m.cacheRead ?? 0,
      cache_creation: { ephemeral_1h_input_tokens: m.cache1h ?? 0, ephemeral_5m_input_tokens: m.cache5m ?? 0 },
      output_tokens: m.output ?? 0,
      server_tool_use: { web_search_requests: m.webSearch ?? 0 },
    })),
  );
}

/** Nano-dollars → cents as a decimal string (1 cent = 10,000,000 nano-dollars), exact. */
export function nanosToCentsString(nanos: number): string {
  const n = BigInt(Math.round(nanos));
  const whole = n / 10_000_000n;
  const frac = (n % 10_000_000n).toString().padStart(7, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/**
 * Billed items of one series' usage: token types (the long-context window at its rates), batch at half price, web
 * searches; Priority Tier not billed here. The long-context descriptions' wording (`, Long Context`) is the
 * stand-in's own: no public example of it was found; what a client must read is the row's `context_window`.
 */
export function anthropicCostItems(s: Series, m: Metrics) {
  const price = ANTHROPIC_STANDIN_PRICES[s.model];
  if (!price || s.tier === 'priority') return [];
  const divisor = s.tier === 'batch' ? 2 : 1;
  const long = s.contextWindow === '200k-1M';
  const rates: StandInRates = long && price.long ? price.long : price;
  const items = TOKEN_TYPES.map(([metric, priceName, tokenType, label]) => ({
    costType: 'tokens',
    tokenType,
    model: s.model,
    description: `${price.name} Usage - ${label}${s.tier === 'batch' ? ', Batch' : ''}${long ? ', Long Context' : ''}`,
    nanos: ((m[metric] ?? 0) * rates[priceName]) / divisor,
  }));
  items.push({ costType: 'web_search', tokenType: '', model: s.model, description: 'Web Search Usage', nanos: (m.webSearch ?? 0) * WEB_SEARCH_NANOS });
  return items.filter((i) => i.nanos > 0);
}

function costReport(store: OrgStore, tokens: PageTokens, params: URLSearchParams) {
  const q = reportQuery(tokens, params, ['1d'], { default: 7, max: 31 });
  const groups = new Set<string>(groupByParam(params, 'brackets', COST_GROUPS));
  const selected = store.org.series;
  const additions = store.additions();
  const now = store.now();
  const production = store.org.projects.find((p) => p.name === 'Production');
  return reportPage(store, tokens, q, (a, b) => {
    // The report lags: a day's costs appear once the day is over.
    if (b > now) return [];
    const rows = new Map<string, { nanos: number; dims: Record<string, unknown> }>();
    const add = (dims: Record<string, unknown>, nanos: number) => {
      const k = JSON.stringify(dims);
      const row = rows.get(k);
      if (row) row.nanos += nanos;
      else rows.set(k, { nanos, dims });
    };
    const dims = (workspace: string | null, item: { costType: string; tokenType: string; model: string | null; description: string }, s: Series | null) =>
      groups.has('description')
        ? {
            workspace_id: groups.has('workspace_id') ? workspace : null,
            description: item.description,
            cost_type: item.costType,
            token_type: item.costType === 'tokens' ? item.tokenType : null,
            model: item.costType === 'tokens' ? item.model : null,
            service_tier: item.costType === 'tokens' && s ? (s.tier === 'batch' ? 'batch' : 'standard') : null,
            context_window: item.costType === 'tokens' && s ? (s.contextWindow ?? '0-200k') : null,
            inference_geo: item.costType === 'tokens' ? 'global' : null,
          }
        : { workspace_id: groups.has('workspace_id') ? workspace : null, description: null, cost_type: null, token_type: null, model: null, service_tier: null, context_window: null, inference_geo: null };
    for (const s of selected) {
      const m = groupWindow(store.org, [s], a, b, now, additions, () => ({}))[0]?.metrics;
      if (m) for (const item of anthropicCostItems(s, m)) add(dims(s.projectId, item, s), item.nanos);
    }
    if (production) {
      add(dims(production.id, { costType: 'code_execution', tokenType: '', model: null, description: 'Code Execution Usage' }, null), CODE_EXECUTION_NANOS_PER_DAY);
    }
    return [...rows.values()].map((r) => ({ amount: nanosToCentsString(r.nanos), currency: 'USD', ...r.dims }));
  });
}

/** The current `APIKey` shape: `scope` (the default workspace by its real id), no `workspace_id`. */
function keyView(store: OrgStore, k: OrgKey) {
  return {
    id: k.id,
    type: 'api_key',
    name: k.name,
    partial_key_hint: k.redacted,
    status: k.status,
    created_at: new Date(k.createdAt * 1000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    created_by: { id: k.owner.id, type: k.owner.type === 'user' ? 'user' : 'service_account' },
    expires_at: k.status === 'expired' ? rfc3339(k.createdAt + 30 * DAY_S) : null,
    scope: { type: 'workspace', workspace_id: k.projectId ?? defaultWorkspace(store).id },
  };
}

function listKeys(store: OrgStore, params: URLSearchParams) {
  const status = scalarParam(params, 'status');
  if (status && !['active', 'inactive', 'archived', 'expired'].includes(status)) throw new StandInError(400, 'invalid_request', `status: Input should be 'active', 'inactive', 'archived' or 'expired'`);
  const workspace = scalarParam(params, 'workspace_id');
  const createdBy = scalarParam(params, 'created_by_user_id');
  // Newest first; keys deleted in the Console are not listed (their usage stays in the reports).
  const all = store.org.keys
    .filter((k) => k.status !== 'deleted' && (!status || k.status === status) && (workspace === undefined || (k.projectId ?? defaultWorkspace(store).id) === workspace) && (!createdBy || k.owner.id === createdBy))
    .sort((a, b) => b.createdAt - a.createdAt || b.id.localeCompare(a.id));
  return cursorPage(all, params, (k) => keyView(store, k));
}

/** Anthropic's list paging: `limit` 1..1000 (20), `after_id` | `before_id`, `first_id` / `last_id` / `has_more`. */
function cursorPage<T extends { id: string }>(all: T[], params: URLSearchParams, render: (item: T) => unknown) {
  const limit = intParam(params, 'limit', 20, 1, 1000);
  const afterId = scalarParam(params, 'after_id');
  const beforeId = scalarParam(params, 'before_id');
  if (afterId && beforeId) throw new StandInError(400, 'invalid_request', 'Only one of after_id and before_id may be given.');
  const at = (id: string, name: string) => {
    const i = all.findIndex((k) => k.id === id);
    if (i < 0) throw new StandInError(400, 'invalid_request', `${name}: no object with id '${id}'`);
    return i;
  };
  let page: T[];
  let hasMore: boolean;
  if (beforeId) {
    const end = at(beforeId, 'before_id');
    page = all.slice(Math.max(0, end - limit), end);
    hasMore = end - limit > 0;
  } else {
    const start = afterId ? at(afterId, 'after_id') + 1 : 0;
    page = all.slice(start, start + limit);
    hasMore = start + limit < all.length;
  }
  return { data: page.map(render), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: hasMore };
}

/**
 * `GET /v1/organizations/me` (Get Current Organization): the organization of the admin key, `{id (a UUID), type:
 * "organization", name}`. The id follows the organization's seed: another seed, another organization.
 */
function organizationView(store: OrgStore) {
  const hex = createHash('sha256').update(`${store.org.seed}|organization`).digest('hex');
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  const name = store.org.seed === 'harbor' ? 'Harbor Analytics' : `${store.org.seed[0]!.toUpperCase()}${store.org.seed.slice(1)}`;
  return { id, type: 'organization', name };
}

/** The default workspace as `include_default=true` lists it (usage and keys still say `workspace_id: null`). */
const defaultWorkspace = (store: OrgStore) => ({ id: `wrkspc_01${idChars(`${store.org.seed}|ws|default`, 22)}`, name: 'Default', createdAt: store.org.originDay - 400 * DAY_S, archivedAt: null });

function workspaceView(w: OrgState['projects'][number]) {
  return {
    type: 'workspace',
    id: w.id,
    name: w.name,
    created_at: rfc3339(w.createdAt),
    archived_at: w.archivedAt === null ? null : rfc3339(w.archivedAt),
    display_color: `#${idChars(w.id, 6).replace(/[^0-9a-f]/gi, 'A').toUpperCase().slice(0, 6)}`,
    // The reference's defaults for a workspace created without a data residency configuration.
    data_residency: { workspace_geo: 'us', allowed_inference_geos: 'unrestricted', default_inference_geo: 'global' },
  };
}

function listWorkspaces(store: OrgStore, params: URLSearchParams) {
  const includeArchived = boolParam(params, 'include_archived') ?? false;
  const includeDefault = boolParam(params, 'include_default') ?? false;
  const all = [...(includeDefault ? [defaultWorkspace(store)] : []), ...store.org.projects]
    .filter((w) => includeArchived || w.archivedAt === null)
    .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  return cursorPage(all, params, workspaceView);
}

function boolParam(params: URLSearchParams, name: string): boolean | undefined {
  const raw = scalarParam(params, name);
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new StandInError(400, 'invalid_request', `${name}: Input should be a valid boolean`);
}

/** A workspace's spend this UTC month (nano-dollars) at the stand-in's prices: what its spend limit counts. */
function workspaceMonthNanos(store: OrgStore, workspaceId: string): number {
  const now = store.now();
  const d = new Date(now * 1000);
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  const additions = store.additions();
  let nanos = 0;
  for (const s of store.org.series) {
    if (s.projectId !== workspaceId) continue;
    // Day by day: a window is one UTC day's (a month-long one would count only its first day).
    for (let day = monthStart; day <= now; day += DAY_S) {
      const m = seriesWindow(store.org, s, day, Math.min(day + DAY_S, now + 1), now, additions);
      for (const item of anthropicCostItems(s, m)) nanos += item.nanos;
    }
  }
  return nanos;
}

const spendLimitView = (store: OrgStore, workspaceId: string, l: { id: string; cents: number; createdAt: number; updatedAt: number }) => ({
  type: 'spend_limit',
  id: l.id,
  amount: String(l.cents),
  currency: 'USD',
  is_enabled: true,
  period: 'monthly',
  scope: { type: 'workspace', workspace_id: workspaceId },
  created_at: rfc3339(l.createdAt),
  updated_at: rfc3339(l.updatedAt),
});

/**
 * The Spend Limits API (beta; platform.claude.com/docs/en/api/admin/spend_limits/create, …/delete) as a Console
 * organization sees it: workspace limits, monthly, an upsert on (scope, period); without the early access preview
 * (`POST /_burnrate/spend-limits {earlyAccess: false}`) setting or deleting one is refused.
 */
async function spendLimits(store: OrgStore, req: IncomingMessage, id: string | undefined): Promise<unknown> {
  const method = req.method ?? 'GET';
  const limits = (store.org.workspaceLimits ??= {});
  if (method !== 'GET' && store.org.spendLimitsEarlyAccess === false) {
    throw new StandInError(403, 'permission', 'Setting organization and workspace spend limits is in an early access preview. To request access, contact your Anthropic account team.');
  }
  if (id !== undefined) {
    const entry = Object.entries(limits).find(([, l]) => l.id === id);
    if (!entry) throw new StandInError(404, 'not_found', 'Spend limit not found');
    if (method === 'DELETE') {
      delete limits[entry[0]];
      await store.save();
      return { id, type: 'spend_limit_deleted' };
    }
    if (method === 'GET') return spendLimitView(store, entry[0], entry[1]);
    throw new StandInError(405, 'invalid_request', `Method ${method} not allowed.`);
  }
  if (method === 'GET') return { data: Object.entries(limits).map(([w, l]) => spendLimitView(store, w, l)), has_more: false, first_id: null, last_id: null };
  if (method !== 'POST') throw new StandInError(405, 'invalid_request', `Method ${method} not allowed.`);
  const body = await readJsonBody(req);
  const scope = body.scope as { type?: unknown; workspace_id?: unknown } | undefined;
  if (!scope || scope.type !== 'workspace' || typeof scope.workspace_id !== 'string') throw new StandInError(400, 'invalid_request', 'scope: a Console organization sets organization and workspace limits (this stand-in: workspace)');
  if (body.period !== undefined && body.period !== 'monthly') throw new StandInError(400, 'invalid_request', 'period: organization and workspace limits are monthly');
  if (typeof body.amount !== 'string' || !/^\d+$/.test(body.amount)) throw new StandInError(400, 'invalid_request', 'amount: a non-negative integer decimal string in cents');
  if (![defaultWorkspace(store), ...store.org.projects].some((w) => w.id === scope.workspace_id)) throw new StandInError(404, 'not_found', 'Workspace not found');
  const now = store.now();
  const existing = limits[scope.workspace_id];
  limits[scope.workspace_id] = { id: existing?.id ?? `spl_01${randomBytes(11).toString('hex')}`, cents: Number(body.amount), createdAt: existing?.createdAt ?? now, updatedAt: now };
  await store.save();
  return spendLimitView(store, scope.workspace_id, limits[scope.workspace_id]!);
}

async function route(store: OrgStore, tokens: PageTokens, req: IncomingMessage, path: string, params: URLSearchParams): Promise<unknown> {
  const method = req.method ?? 'GET';
  const limit = /^\/v1\/organizations\/spend_limits(?:\/([^/]+))?$/.exec(path);
  if (limit) return spendLimits(store, req, limit[1] === undefined ? undefined : decodeURIComponent(limit[1]));
  const one = /^\/v1\/organizations\/api_keys\/([^/]+)$/.exec(path);
  if (one && method === 'POST') {
    const key = store.org.keys.find((k) => k.id === decodeURIComponent(one[1]!) && k.status !== 'deleted');
    if (!key) throw new StandInError(404, 'not_found', 'API key not found');
    const body = await readJsonBody(req);
    if (body.status !== undefined && !['active', 'inactive', 'archived'].includes(String(body.status))) throw new StandInError(400, 'invalid_request', "status: Input should be 'active', 'inactive' or 'archived'");
    if (body.name !== undefined && (typeof body.name !== 'string' || !body.name || body.name.length > 500)) throw new StandInError(400, 'invalid_request', 'name: 1 to 500 characters');
    if (typeof body.name === 'string') key.name = body.name;
    if (body.status !== undefined) {
      key.status = body.status as OrgKey['status'];
      // An inactive key's calls are refused: its usage stops growing, and grows again once it is active.
      for (const s of store.org.series) if (s.keyId === key.id) pauseSeries(s, key.status !== 'active', store.now());
    }
    await store.save();
    return keyView(store, key);
  }
  if (method !== 'GET') throw new StandInError(405, 'invalid_request', `Method ${method} not allowed on ${path}`);
  if (path === '/v1/organizations/usage_report/messages') return usageReport(store, tokens, req, params);
  if (path === '/v1/organizations/cost_report') return costReport(store, tokens, params);
  if (path === '/v1/organizations/api_keys') return listKeys(store, params);
  if (path === '/v1/organizations/workspaces') return listWorkspaces(store, params);
  if (path === '/v1/organizations/me') return organizationView(store);
  const workspace = /^\/v1\/organizations\/workspaces\/([^/]+)$/.exec(path);
  if (workspace) {
    const found = [defaultWorkspace(store), ...store.org.projects].find((w) => w.id === decodeURIComponent(workspace[1]!));
    if (!found) throw new StandInError(404, 'not_found', 'Workspace not found');
    return workspaceView(found);
  }
  if (one) {
    const key = store.org.keys.find((k) => k.id === decodeURIComponent(one[1]!) && k.status !== 'deleted');
    if (!key) throw new StandInError(404, 'not_found', 'API key not found');
    return keyView(store, key);
  }
  throw new StandInError(404, 'not_found', 'Not found');
}

export const ANTHROPIC_ADMIN_SPEC: StandInSpec = {
  provider: 'anthropic',
  name: 'the Anthropic admin stand-in',
  portEnv: 'ANTHROPIC_ADMIN_PORT',
  seedOrg: (now, key, seed) => seedAnthropicOrg(now, key, seed),
  bigOrg: bigAnthropicOrg,
  newAdminKey: newAnthropicAdminKey,
  credential,
  authenticate,
  route,
  errorBody,
  faultMessages: {
    rateLimit: 'Number of request tokens has exceeded your per-minute rate limit. Please try again later.',
    server: (status) => (status === 529 ? 'Overloaded' : 'Internal server error'),
  },
  refuses: (store, s) => {
    if (s.keyId && store.org.keys.find((k) => k.id === s.keyId)?.status !== 'active') return 'key_inactive';
    // A workspace at its monthly spend limit: its calls are refused.
    const limit = s.projectId ? store.org.workspaceLimits?.[s.projectId] : undefined;
    return limit && workspaceMonthNanos(store, s.projectId!) >= limit.cents * 10_000_000 ? 'workspace_spend_limit_exceeded' : undefined;
  },
  readOnlyMessage: 'This API key does not have permission to perform this action (a read-only admin key).',
  newSecret: () => `sk-ant-api03-${randomBytes(70).toString('base64url').slice(0, 93)}AA`,
  inference: {
    // Messages (platform.claude.com/docs/en/api/messages), as `@anthropic-ai/sdk` calls them: the key in `x-api-key`
    // (or `Authorization: Bearer`).
    paths: ['/v1/messages'],
    credential: (req) => String(req.headers['x-api-key'] ?? /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '').trim(),
    matches: (key, secret) => key.secret === secret,
    series: () => ({}),
    usage: (_s, input, output) => ({
      metrics: { uncached: input, cacheRead: 0, cache5m: 0, cache1h: 0, output, webSearch: 0 },
      usage: { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output, service_tier: 'standard' },
    }),
    answer: (id, model, usage) => ({
      id: `msg_01${id}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'Hello.' }],
      stop_reason: 'max_tokens',
      stop_sequence: null,
      usage,
    }),
    // A workspace at its spend limit: 400 invalid_request_error "You have reached your specified workspace API usage
    // limits. You will regain access on <the 1st of next month> at 00:00 UTC." (the API's words, as
    // github.com/anthropics/claude-code/issues/1047 quotes them).
    refusal: (reason, store) => {
      const body = (type: string, message: string) => ({ type: 'error', error: { type, message }, request_id: `req_011C${randomBytes(12).toString('base64url')}` });
      if (reason === 'workspace_spend_limit_exceeded') {
        const d = new Date((store?.now() ?? Date.now() / 1000) * 1000);
        const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
        return { status: 400, body: body('invalid_request_error', `You have reached your specified workspace API usage limits. You will regain access on ${next} at 00:00 UTC.`) };
      }
      return { status: 401, body: body('authentication_error', 'invalid x-api-key') };
    },
  },
  newKey: (store, input) => anthropicKey(`${store.org.seed}|${input.index}|${Date.now()}`, input.name, input.projectId, users.lin, store.now()),
};

export const startAnthropicAdmin = (options: StandInOptions): Promise<StandIn> => startStandIn(ANTHROPIC_ADMIN_SPEC, options);
