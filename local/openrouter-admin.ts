/**
 * A local stand-in of OpenRouter's management API (the part a spend tracker reads, and the key switch), written from
 * OpenRouter's published OpenAPI document (openrouter.ai/docs/api/api-reference: api-keys/list, api-keys/get,
 * api-keys/update, analytics/get-user-activity):
 *
 *   GET   /api/v1/keys            include_disabled (string "true"|"false"), offset (integer ≥ 0), workspace_id;
 *                                 `{data: [key]}`, the most recent first, at most 100 a page
 *   GET   /api/v1/keys/{hash}     `{data: key}`
 *   PATCH /api/v1/keys/{hash}     {name?, disabled?, limit?, limit_reset?, include_byok_in_limit?} → `{data: key}`;
 *                                 a disabled key's usage stops; enabled again, it resumes from then on; a key
 *                                 past its own limit (usage since its reset: daily, weekly from Monday, monthly from
 *                                 the 1st, at midnight UTC; else its lifetime) is refused (control API `usage`)
 *   POST  /api/v1/chat/completions inference with a key's secret (its hash is the key's `hash`): a disabled key 403, a
 *                                 key past its own limit 402 `metadata.limit_source: "openrouter_key_limit"`
 *                                 (openrouter.ai/docs/api-reference/limits) before the call runs; a call bills its
 *                                 input and `max_tokens` of output, its `usage.cost` in dollars
 *   GET   /api/v1/activity        date (YYYY-MM-DD, one of the last 30 completed UTC days, else 400),
 *                                 api_key_hash, user_id; `{data: [{date, model, model_permaslug, endpoint_id,
 *                                 provider_name, usage, byok_usage_inference, requests, prompt_tokens,
 *                                 completion_tokens, reasoning_tokens}]}`, one row per UTC day × model × provider
 *                                 endpoint, completed days only (today is never there)
 *
 * A key object: `{hash, name, label, disabled, limit, limit_remaining, limit_reset, include_byok_in_limit, usage,
 * usage_daily, usage_weekly, usage_monthly, byok_usage…, created_at, updated_at, expires_at, creator_user_id,
 * workspace_id}` (money in dollars; `usage_daily` the current UTC day, `usage_weekly` since Monday, `usage_monthly`
 * since the 1st). `hash` is the SHA-256 of the key's secret (`sk-or-v1-` + 64 hex), `label` its redacted form.
 * `Authorization: Bearer <management key>`; an inference key (same shape) is refused 403, an unknown key 401. Errors
 * are `{error: {code, message, metadata}, user_id}`; a forced 429 carries `Retry-After`. The control API is
 * local/provider-org.ts's (`kind` `activity`, metrics requests, prompt, completion, reasoning, cost in micro-dollars;
 * `tier` is the provider endpoint).
 */
import type { IncomingMessage } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import {
  DAY_S,
  dayStart,
  firstOfPreviousMonth,
  groupWindow,
  idChars,
  isoDate,
  makeOrg,
  type Metrics,
  type OrgKey,
  type OrgRegistry,
  type OrgState,
  type OrgStore,
  readJsonBody,
  rfc3339,
  scalarParam,
  type Series,
  type StandIn,
  type StandInOptions,
  type StandInSpec,
  startStandIn,
  StandInError,
} from '#local/provider-org.ts';

const PAGE = 100;
/** Prices of the inference endpoint, in thousandths of a micro-dollar per token (USD per 1M tokens × 1000). */
const INFERENCE_PRICES: Record<string, { input: number; output: number }> = {
  'openai/gpt-4.1': { input: 2000, output: 8000 },
  'anthropic/claude-sonnet-4.5': { input: 3000, output: 15_000 },
  'google/gemini-2.5-flash': { input: 300, output: 2500 },
  default: { input: 1000, output: 4000 },
};
const HISTORY_DAYS = 30;

export const newOpenRouterKey = () => `sk-or-v1-${randomBytes(32).toString('hex')}`;
/** The `hash` OpenRouter gives a key: SHA-256 (hex) of its secret. */
export const openRouterKeyHash = (secret: string) => createHash('sha256').update(secret).digest('hex');

const ada = { type: 'user' as const, id: 'user_2ada0Lovelace0000000000000', name: 'Ada Lovelace' };

/** A key with a deterministic secret (from `seed` and `name`), its hash as id and its label as redacted value. */
function routerKey(seed: string, name: string, createdAt: number, status: OrgKey['status'] = 'active', limit: number | null = null): OrgKey {
  const secret = `sk-or-v1-${createHash('sha256').update(`${seed}|secret|${name}`).digest('hex')}`;
  return { id: openRouterKeyHash(secret), name, projectId: null, redacted: `sk-or-v1-${secret.slice(9, 12)}...${secret.slice(-3)}`, createdAt, status, owner: ada, limit, secret };
}

function series(key: OrgKey, model: string, endpoint: string, base: Metrics, since: number, until: number | null = null): Series {
  return { id: `${key.id}|${model}|${endpoint}|activity`, kind: 'activity', keyId: key.id, projectId: null, userId: null, model, tier: endpoint, base, since, until };
}

/** A day's typical activity: requests, tokens and what it cost (micro-dollars). */
const day = (requests: number, prompt: number, completion: number, costMicros: number): Metrics => ({
  requests,
  prompt,
  completion,
  reasoning: Math.floor(completion / 5),
  cost: costMicros,
});

/**
 * "Copper Kettle": seven keys (one with a limit, one disabled ten days ago, one deleted with history, one never used),
 * four models served by several provider endpoints.
 */
export function seedOpenRouterOrg(now: number, managementKey: string, seed = 'copper-kettle'): OrgState {
  const origin = firstOfPreviousMonth(now);
  const before = origin - 20 * DAY_S;
  const today = dayStart(now);
  const k = {
    prod: routerKey(seed, 'Production', before, 'active', 5000),
    staging: routerKey(seed, 'Staging', before),
    research: routerKey(seed, 'Research notebook', before, 'inactive'),
    batch: routerKey(seed, 'Batch jobs', before + 5 * DAY_S, 'active', 150),
    support: routerKey(seed, 'Support bot', today - 12 * DAY_S),
    oldDemo: routerKey(seed, 'Old demo', before, 'deleted'),
    intern: routerKey(seed, 'Intern sandbox', today - 2 * DAY_S),
  };
  const s: Series[] = [
    series(k.prod, 'openai/gpt-4.1', 'OpenAI', day(900, 1_800_000, 300_000, 6_000_000), before),
    series(k.prod, 'openai/gpt-4.1', 'Azure', day(150, 300_000, 50_000, 1_000_000), before),
    series(k.prod, 'anthropic/claude-sonnet-4.5', 'Anthropic', day(400, 1_200_000, 200_000, 6_600_000), before),
    series(k.prod, 'anthropic/claude-sonnet-4.5', 'Amazon Bedrock', day(80, 240_000, 40_000, 1_320_000), before),
    series(k.staging, 'google/gemini-2.5-flash', 'Google', day(300, 600_000, 90_000, 405_000), before),
    series(k.staging, 'openai/gpt-4.1', 'OpenAI', day(60, 120_000, 20_000, 400_000), before),
    series(k.research, 'anthropic/claude-sonnet-4.5', 'Anthropic', day(120, 500_000, 60_000, 2_400_000), before, today - 10 * DAY_S),
    series(k.batch, 'meta-llama/llama-3.3-70b-instruct', 'Together', day(2_000, 3_000_000, 800_000, 1_150_000), before + 5 * DAY_S),
    series(k.batch, 'meta-llama/llama-3.3-70b-instruct', 'DeepInfra', day(700, 1_000_000, 250_000, 330_000), before + 5 * DAY_S),
    series(k.support, 'google/gemini-2.5-flash', 'Google', day(500, 900_000, 150_000, 645_000), today - 12 * DAY_S),
    series(k.oldDemo, 'openai/gpt-4.1', 'OpenAI', day(40, 80_000, 10_000, 240_000), before, today - 20 * DAY_S),
  ];
  return makeOrg({
    provider: 'openrouter',
    seed,
    originDay: origin,
    adminKey: managementKey,
    // An inference key of the account (the same shape as a management key): refused by the management API.
    inferenceKeys: [`sk-or-v1-${createHash('sha256').update(`${seed}|inference`).digest('hex')}`],
    projects: [],
    keys: Object.values(k),
    series: s,
    late: null,
  });
}

const BIG_MODELS = ['openai/gpt-4.1', 'anthropic/claude-sonnet-4.5', 'google/gemini-2.5-flash', 'meta-llama/llama-3.3-70b-instruct', 'mistralai/mistral-large'];

/** N keys × M models, usage every day of the last D days (today included). */
export function bigOpenRouterOrg(now: number, managementKey: string, size: { keys: number; models: number; days: number }): OrgState {
  const seed = `big-${size.keys}-${size.models}-${size.days}`;
  const since = dayStart(now) - (size.days - 1) * DAY_S;
  const keys: OrgKey[] = [];
  const s: Series[] = [];
  const models = Array.from({ length: size.models }, (_, i) => BIG_MODELS[i % BIG_MODELS.length]! + (i >= BIG_MODELS.length ? `-v${Math.floor(i / BIG_MODELS.length)}` : ''));
  for (let i = 0; i < size.keys; i++) {
    const key = routerKey(seed, `key-${String(i + 1).padStart(4, '0')}`, since - DAY_S - i);
    keys.push(key);
    for (const model of models) s.push(series(key, model, 'default', day(120, 200_000 + (i % 7) * 10_000, 40_000, 900_000 + (i % 11) * 1000), since));
  }
  return makeOrg({ provider: 'openrouter', seed, originDay: since, adminKey: managementKey, inferenceKeys: [], projects: [], keys, series: s, big: size, late: null });
}

// ---------------------------------------------------------------------------------------------------------------
// The API

function errorBody(e: StandInError) {
  return { error: { code: e.status, message: e.message, metadata: null }, user_id: null };
}

const credential = (req: IncomingMessage) => /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? '';

function authenticate(store: OrgStore | undefined, token: string, _req: IncomingMessage, registry: OrgRegistry): void {
  if (!token) throw new StandInError(401, 'authentication', 'No auth credentials found');
  if (!store && registry.all().some((st) => st.org.inferenceKeys.includes(token))) {
    throw new StandInError(403, 'permission', 'Only management keys can perform this operation');
  }
  if (!store || store.org.adminRevoked) throw new StandInError(401, 'authentication', 'User not found.');
}

/** The vendor's name of a model id (`openai/gpt-4.1` → OpenAI): the endpoint of a series without one. */
function vendorOf(model: string): string {
  const vendor = model.split('/')[0] ?? model;
  const names: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic', google: 'Google', 'meta-llama': 'Together', mistralai: 'Mistral' };
  return names[vendor] ?? vendor;
}

/** Micro-dollars of the given series over [a, b) as of now, summed per UTC day. */
function costBetween(store: OrgStore, list: Series[], a: number, b: number): number {
  const now = store.now();
  const additions = store.additions();
  let micros = 0;
  for (let d = dayStart(a); d < b && d <= now; d += DAY_S) {
    const g = groupWindow(store.org, list, Math.max(a, d), Math.min(b, d + DAY_S), now, additions, () => ({}))[0];
    micros += g?.metrics.cost ?? 0;
  }
  return micros;
}

const usd = (micros: number) => micros / 1_000_000;

function keyView(store: OrgStore, k: OrgKey) {
  const now = store.now();
  const today = dayStart(now);
  const list = store.seriesByKey().get(k.id) ?? [];
  const date = new Date(now * 1000);
  const monday = today - ((date.getUTCDay() + 6) % 7) * DAY_S;
  const month = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000;
  const lifetime = costBetween(store, list, Math.min(store.org.originDay, ...list.map((s) => s.since)), now + 1);
  const limit = k.limit ?? null;
  const reset = k.limitReset ?? null;
  const inWindow = windowUsage(store, k);
  return {
    hash: k.id,
    name: k.name,
    label: k.redacted,
    disabled: k.status !== 'active',
    limit,
    limit_remaining: limit === null ? null : Math.max(0, limit - usd(inWindow)),
    limit_reset: reset,
    include_byok_in_limit: false,
    usage: usd(lifetime),
    usage_daily: usd(costBetween(store, list, today, now + 1)),
    usage_weekly: usd(costBetween(store, list, monday, now + 1)),
    usage_monthly: usd(costBetween(store, list, month, now + 1)),
    byok_usage: 0,
    byok_usage_daily: 0,
    byok_usage_weekly: 0,
    byok_usage_monthly: 0,
    created_at: rfc3339(k.createdAt),
    updated_at: null,
    expires_at: null,
    creator_user_id: k.owner.id,
    workspace_id: null,
  };
}

/**
 * A key's usage counted against its limit (micro-dollars): since the last reset at midnight UTC (`daily`, `weekly`
 * from Monday, `monthly` from the 1st), else its lifetime (OpenRouter's reference: "Resets happen automatically at
 * midnight UTC, and weeks are Monday through Sunday").
 */
function windowUsage(store: OrgStore, k: OrgKey): number {
  const now = store.now();
  const list = store.seriesByKey().get(k.id) ?? [];
  const today = dayStart(now);
  const date = new Date(now * 1000);
  const from =
    k.limitReset === 'daily'
      ? today
      : k.limitReset === 'weekly'
        ? today - ((date.getUTCDay() + 6) % 7) * DAY_S
        : k.limitReset === 'monthly'
          ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000
          : Math.min(store.org.originDay, ...list.map((s) => s.since));
  return costBetween(store, list, from, now + 1);
}

/** Why OpenRouter refuses a call with this key now: disabled, or past its own limit (402, `openrouter_key_limit`). */
function refusal(store: OrgStore, k: OrgKey | undefined): string | undefined {
  if (!k) return undefined;
  if (k.status !== 'active') return 'key_disabled';
  if (typeof k.limit === 'number' && usd(windowUsage(store, k)) >= k.limit) return 'key_limit_exceeded';
  return undefined;
}

function findKey(store: OrgStore, hash: string): OrgKey {
  const key = store.org.keys.find((k) => k.id === hash && k.status !== 'deleted');
  if (!key) throw new StandInError(404, 'not_found', 'API key not found');
  return key;
}

/** PATCH /keys/{hash}: disabling ends the key's usage now; enabling starts new usage from now (the gap stays empty). */
async function updateKey(store: OrgStore, key: OrgKey, body: Record<string, unknown>) {
  const allowed = ['name', 'disabled', 'limit', 'limit_reset', 'include_byok_in_limit'];
  for (const field of Object.keys(body)) if (!allowed.includes(field)) throw new StandInError(400, 'invalid_request', `Unrecognized key in body: ${field}`);
  if (body.name !== undefined && (typeof body.name !== 'string' || !body.name)) throw new StandInError(400, 'invalid_request', 'name must be a non-empty string');
  if (body.disabled !== undefined && typeof body.disabled !== 'boolean') throw new StandInError(400, 'invalid_request', 'disabled must be a boolean');
  if (body.limit !== undefined && body.limit !== null && (typeof body.limit !== 'number' || body.limit < 0)) throw new StandInError(400, 'invalid_request', 'limit must be a number ≥ 0 or null');
  if (body.limit_reset !== undefined && body.limit_reset !== null && !['daily', 'weekly', 'monthly'].includes(String(body.limit_reset))) throw new StandInError(400, 'invalid_request', 'limit_reset must be daily, weekly, monthly or null');
  const now = store.now();
  if (typeof body.name === 'string') key.name = body.name;
  if (body.limit !== undefined) key.limit = body.limit as number | null;
  if (body.limit_reset !== undefined) key.limitReset = body.limit_reset as string | null;
  if (body.disabled === true && key.status === 'active') {
    key.status = 'inactive';
    for (const s of store.org.series) if (s.keyId === key.id && (s.until === null || s.until > now)) s.until = now;
  } else if (body.disabled === false && key.status !== 'active') {
    key.status = 'active';
    // The ended series keep their history; the same usage resumes in new series from now on.
    const ended = store.org.series.filter((s) => s.keyId === key.id && s.until !== null && s.until <= now);
    const latest = new Map<string, Series>();
    for (const s of ended) {
      const stream = `${s.model}|${s.tier}`;
      if ((latest.get(stream)?.until ?? -1) < s.until!) latest.set(stream, s);
    }
    for (const s of latest.values()) store.org.series.push({ ...s, id: `${s.id.replace(/#\d+$/, '')}#${now}`, since: now, until: null });
  }
  await store.save();
  return { data: keyView(store, key) };
}

function activity(store: OrgStore, params: URLSearchParams) {
  const now = store.now();
  const today = dayStart(now);
  const oldest = today - HISTORY_DAYS * DAY_S;
  const date = scalarParam(params, 'date');
  let days: number[];
  if (date !== undefined) {
    const t = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) / 1000 : Number.NaN;
    if (!Number.isFinite(t) || t < oldest || t >= today) throw new StandInError(400, 'invalid_request', 'Invalid date format or date range');
    days = [t];
  } else {
    days = Array.from({ length: HISTORY_DAYS }, (_, i) => oldest + i * DAY_S);
  }
  const hash = scalarParam(params, 'api_key_hash');
  const list = hash === undefined ? store.org.series : (store.seriesByKey().get(hash) ?? []);
  const additions = store.additions();
  const rows: unknown[] = [];
  for (const d of days) {
    for (const g of groupWindow(store.org, list, d, d + DAY_S, now, additions, (s) => ({ model: s.model, endpoint: s.tier === 'default' ? vendorOf(s.model) : s.tier }))) {
      const model = String(g.dims.model);
      const endpoint = String(g.dims.endpoint);
      rows.push({
        date: isoDate(d),
        model,
        model_permaslug: `${model}-2025-04-14`,
        endpoint_id: `${idChars(`${model}|${endpoint}`, 8)}-${idChars(`${endpoint}|${model}`, 4)}`,
        provider_name: endpoint,
        usage: usd(g.metrics.cost ?? 0),
        byok_usage_inference: 0,
        requests: g.metrics.requests ?? 0,
        prompt_tokens: g.metrics.prompt ?? 0,
        completion_tokens: g.metrics.completion ?? 0,
        reasoning_tokens: g.metrics.reasoning ?? 0,
      });
    }
  }
  return { data: rows };
}

async function route(store: OrgStore, _tokens: unknown, req: IncomingMessage, path: string, params: URLSearchParams): Promise<unknown> {
  const method = req.method ?? 'GET';
  if (path === '/api/v1/activity' && method === 'GET') return activity(store, params);
  if (path === '/api/v1/keys' && method === 'GET') {
    const include = scalarParam(params, 'include_disabled');
    if (include !== undefined && include !== 'true' && include !== 'false') throw new StandInError(400, 'invalid_request', 'include_disabled must be "true" or "false"');
    const rawOffset = scalarParam(params, 'offset') ?? '0';
    if (!/^\d+$/.test(rawOffset)) throw new StandInError(400, 'invalid_request', 'offset must be a non-negative integer');
    const offset = Number(rawOffset);
    const listed = store.org.keys
      .filter((k) => k.status !== 'deleted' && (include === 'true' || k.status === 'active'))
      .sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
    return { data: listed.slice(offset, offset + PAGE).map((k) => keyView(store, k)) };
  }
  const one = /^\/api\/v1\/keys\/([^/]+)$/.exec(path);
  if (one && method === 'GET') return { data: keyView(store, findKey(store, decodeURIComponent(one[1]!))) };
  if (one && method === 'PATCH') return updateKey(store, findKey(store, decodeURIComponent(one[1]!)), await readJsonBody(req));
  if (path === '/api/v1/keys' || one || path === '/api/v1/activity') throw new StandInError(405, 'invalid_request', `Method ${method} not allowed on ${path}`);
  throw new StandInError(404, 'not_found', `Not Found (${method} ${path})`);
}

export const OPENROUTER_SPEC: StandInSpec = {
  provider: 'openrouter',
  name: 'the OpenRouter stand-in',
  portEnv: 'OPENROUTER_PORT',
  // OpenRouter's management keys have no read-only kind; a stand-in organization's read-only key is refused writes like the others.
  readOnlyMessage: 'Forbidden: this key may not change keys (a read-only key).',
  seedOrg: (now, key, seed) => seedOpenRouterOrg(now, key, seed),
  bigOrg: bigOpenRouterOrg,
  newAdminKey: newOpenRouterKey,
  credential,
  authenticate,
  route: route as StandInSpec['route'],
  errorBody,
  faultMessages: {
    rateLimit: 'Rate limit exceeded: too many requests. Please retry shortly.',
    server: () => 'Internal Server Error',
  },
  // A call OpenRouter would refuse adds no usage: a disabled key, a key past its own limit.
  refuses: (store, s) => refusal(store, store.org.keys.find((k) => k.id === s.keyId)),
  inference: {
    // Chat completions (openrouter.ai/docs/api-reference/chat-completion), as the `openai` SDK calls them with
    // baseURL https://openrouter.ai/api/v1. A key is known by its hash (SHA-256 of its secret).
    paths: ['/api/v1/chat/completions'],
    credential,
    matches: (key, secret) => key.id === openRouterKeyHash(secret),
    series: (model) => ({ tier: vendorOf(model) }),
    usage: (s, input, output) => {
      const p = INFERENCE_PRICES[s.model] ?? INFERENCE_PRICES.default!;
      const costMicros = Math.round((input * p.input + output * p.output) / 1000);
      return {
        metrics: { requests: 1, prompt: input, completion: output, reasoning: 0, cost: costMicros },
        usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output, cost: costMicros / 1e6 },
      };
    },
    answer: (id, model, usage, created) => ({
      id: `gen-${created}-${id}`,
      provider: vendorOf(model),
      model,
      object: 'chat.completion',
      created,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'length', native_finish_reason: 'max_tokens' }],
      usage,
    }),
    // A key past its own credit limit: 402 with `metadata.limit_source: "openrouter_key_limit"`
    // (openrouter.ai/docs/api-reference/limits, "Handling 402 errors").
    refusal: (reason) =>
      reason === 'key_limit_exceeded'
        ? {
            status: 402,
            body: {
              error: {
                code: 402,
                message: 'This API key has reached its credit limit. Raise the key\'s limit or wait for it to reset.',
                metadata: { limit_source: 'openrouter_key_limit', remedy_hint: 'Raise the key\'s credit limit or wait for its limit_reset.' },
              },
            },
          }
        : reason === 'key_disabled' || reason === 'key_inactive'
          ? { status: 403, body: { error: { code: 403, message: 'This API key is disabled.', metadata: null } } }
          : { status: 401, body: { error: { code: 401, message: 'User not found.', metadata: null } } },
  },
  newKey: (store, input) => {
    const key = routerKey(`${store.org.seed}|${input.index}|${Date.now()}`, input.name, store.now());
    return key;
  },
};

export const startOpenRouterAdmin = (options: StandInOptions): Promise<StandIn> => startStandIn(OPENROUTER_SPEC, options);
