/**
 * The made-up organizations behind the local stand-ins of the OpenAI and Anthropic admin APIs
 * (local/openai-admin.ts, local/anthropic-admin.ts), and what both stand-ins share: array query parameters (filters in all
 * three spellings, `group_by` only in each reference's own), opaque page tokens bound to their query, bucket planning, the forced faults, the HTTP server and
 * the control API under `/_burnrate/` (a path neither provider uses).
 *
 * Usage is computed, not stored: a *series* is one stream of usage (provider key or none, project/workspace, model,
 * tier) with typical daily amounts; its amount on a UTC day is a deterministic function of (organization seed,
 * series id, day), spread evenly over the day. So any bucket [a, b) of any width is `curve(b) − curve(a)`: 1m, 1h
 * and 1d buckets add up exactly, the current bucket is partial and grows with the clock, and an organization of
 * 1,000 keys × 5 models × 62 days costs 5,000 series objects, not 310,000 stored cells. On top of the curve sit the
 * control API's changes: point additions (usage added at an instant) and revisions (a day's total set anew).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';

export const DAY_S = 86_400;
export type ProviderName = 'openai' | 'anthropic' | 'openrouter';
/** Usage counters of one series over some time, integers. Which names exist depends on the series' kind. */
export type Metrics = Record<string, number>;
export type SeriesKind =
  | 'completions'
  | 'embeddings'
  | 'messages'
  // OpenAI's usage endpoints beyond tokens.
  | 'images'
  | 'audio_speeches'
  | 'audio_transcriptions'
  | 'moderations'
  | 'vector_stores'
  | 'code_interpreter_sessions'
  | 'web_search_calls'
  | 'file_search_calls'
  // OpenRouter's activity.
  | 'activity';

/** The counters each kind of usage has (the stand-ins render them in each provider's field names). */
export const KIND_METRICS: Record<SeriesKind, readonly string[]> = {
  // OpenAI completions: input_tokens = uncached + cached + cacheWrite.
  completions: ['uncached', 'cached', 'cacheWrite', 'output', 'requests'],
  embeddings: ['input', 'requests'],
  // Anthropic messages: no request count in the report.
  messages: ['uncached', 'cacheRead', 'cache5m', 'cache1h', 'output', 'webSearch'],
  images: ['images', 'requests'],
  audio_speeches: ['characters', 'requests'],
  audio_transcriptions: ['seconds', 'requests'],
  moderations: ['input', 'requests'],
  // Storage in bytes (a day's reading), project-level; sessions project-level; tool calls inside model requests.
  vector_stores: ['bytes'],
  code_interpreter_sessions: ['sessions'],
  web_search_calls: ['calls', 'requests'],
  file_search_calls: ['calls'],
  // OpenRouter activity: tokens and requests, and what it charged in micro-dollars (`cost`; rendered as dollars).
  activity: ['requests', 'prompt', 'completion', 'reasoning', 'cost'],
};

export interface OrgProject {
  /** OpenAI `proj_…`; Anthropic `wrkspc_…` (the default workspace is not listed: its usage has workspace null). */
  id: string;
  name: string;
  createdAt: number;
  archivedAt: number | null;
}

export type KeyStatus = 'active' | 'inactive' | 'archived' | 'expired' | 'deleted';

export interface OrgKey {
  /** OpenAI `key_…`; Anthropic `apikey_01…`. */
  id: string;
  name: string;
  /** The project (OpenAI) or workspace (Anthropic; null = the default workspace). */
  projectId: string | null;
  /** OpenAI `sk-proj-abc...wxyz`; Anthropic `sk-ant-api03-R2D...igAA`. */
  redacted: string;
  createdAt: number;
  status: KeyStatus;
  /** Who owns it (OpenAI `owner`, Anthropic `created_by`). */
  owner: { type: 'user' | 'service_account'; id: string; name: string };
  /** OpenRouter: the key's credit limit in dollars (null: none). */
  limit?: number | null;
  /** OpenRouter: when the limit resets (`daily`, `weekly`, `monthly`; null: never, a lifetime limit). */
  limitReset?: string | null;
  /**
   * The key's secret, for its calls to the stand-in's inference endpoint (keys made through the control API; OpenRouter
   * keys always: their id is the secret's hash).
   */
  secret?: string;
}

export interface Series {
  /** Stable id: `<keyId|->|<model>|<tier>|<kind>`. */
  id: string;
  kind: SeriesKind;
  /** null: usage without an API key (Console, playground). */
  keyId: string | null;
  projectId: string | null;
  userId: string | null;
  model: string;
  /** OpenAI: `default` | `batch` | `flex` | `priority` | `scale`; Anthropic: `standard` | `batch` | `priority`. */
  tier: string;
  /** Anthropic only. */
  contextWindow?: string;
  /** Typical amounts of a full day. */
  base: Metrics;
  /** Usage starts at (unix s). */
  since: number;
  /** Usage stops at (unix s), or never. */
  until: number | null;
  /**
   * Spans [from, to) (to null: still) in which the provider refuses the series' calls: an Anthropic key set inactive,
   * an OpenAI project over its hard spend limit. Its usage does not grow there; it resumes after.
   */
  pauses?: Array<[number, number | null]>;
}

export interface OrgState {
  /** `main` for the seeded organization `npm start` prints; `org_…` for those made through the control API. */
  id: string;
  provider: ProviderName;
  /** What the deterministic amounts derive from. */
  seed: string;
  /** First day of usage (unix s at 00:00 UTC): the first day of the previous UTC month when made. */
  originDay: number;
  /**
   * A test organization with a short history (`POST /_burnrate/orgs {historyDays}`): no seeded usage before this day
   * (unix s at 00:00 UTC); its projects, keys and their dates are the seed's. Null or absent: the seed's whole history.
   */
  historyFrom?: number | null;
  adminKey: string;
  adminRevoked: boolean;
  /** An admin key that may read but not write (`POST /_burnrate/admin-key {readOnly: true}`): writes answer 403. */
  readOnlyAdminKey?: string | null;
  /** OpenAI: projects' hard spend limits (`/v1/organization/projects/{id}/spend_limit`). */
  spendLimits?: Record<string, { thresholdCents: number; enforcing: boolean; since: number; reachedAt?: number }>;
  /** Anthropic: workspaces' monthly spend limits (`POST /v1/organizations/spend_limits`), by workspace id. */
  workspaceLimits?: Record<string, { id: string; cents: number; createdAt: number; updatedAt: number }>;
  /** Anthropic: the organization has the Spend Limits early access (default true; `POST /_burnrate/spend-limits {earlyAccess}`). */
  spendLimitsEarlyAccess?: boolean;
  /** OpenAI: how far past its limit a project's recorded spend gets before enforcement begins (cents; default 0). */
  overshootCents?: number;
  /**
   * OpenAI: seconds between a project's spend reaching its limit and the refusals beginning (default 0): "Enforcement
   * is not instantaneous" (developers.openai.com/api/docs/guides/spend-limits), with no figure given.
   */
  enforcementLagSeconds?: number;
  /** Keys that exist but are not admin keys (a test can try one): answered 401/403. */
  inferenceKeys: string[];
  projects: OrgProject[];
  keys: OrgKey[];
  series: Series[];
  /** `<seriesId>#<dayStart>` → the day's new full total (control API `revise`). */
  revisions: Record<string, Metrics>;
  /** Usage added at an instant (control API `usage`). */
  additions: Array<{ seriesId: string; at: number; metrics: Metrics }>;
  /** A frozen clock (unix s), or null for the real one. */
  clock: number | null;
  /** Made by `POST /_burnrate/big`: its parameters, for the state page. */
  big: { keys: number; models: number; days: number; requests?: number } | null;
  /**
   * Late arrivals (the seeded organizations: 2% over 6 hours; big ones: none): this share of a day's usage shows in
   * the day's bucket only after the day is over, growing over the next `hours`, as providers' recent buckets do.
   */
  late: { share: number; hours: number } | null;
}

/** An organization from its parts; the rest starts empty (no changes, real clock, main id until registered). */
export function makeOrg(parts: Pick<OrgState, 'provider' | 'seed' | 'originDay' | 'adminKey' | 'inferenceKeys' | 'projects' | 'keys' | 'series'> & Partial<OrgState>): OrgState {
  return { id: 'main', adminRevoked: false, revisions: {}, additions: [], clock: null, big: null, late: parts.big ? null : { share: 0.02, hours: 6 }, ...parts };
}

export class StandInError extends Error {
  constructor(
    readonly status: number,
    readonly kind: 'invalid_request' | 'authentication' | 'permission' | 'not_found' | 'rate_limit' | 'server',
    message: string,
    readonly param: string | null = null,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Time

export const dayStart = (t: number) => Math.floor(t / DAY_S) * DAY_S;
export const isoDate = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
export const rfc3339 = (t: number) => new Date(t * 1000).toISOString().replace(/\.000Z$/, 'Z');
export function parseDate(value: string): number {
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (!Number.isFinite(t)) throw new StandInError(400, 'invalid_request', `Invalid date: ${value}`);
  return Math.floor(t / 1000);
}
/** 00:00 UTC of the first day of the previous UTC month. */
export function firstOfPreviousMonth(now: number): number {
  const d = new Date(now * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1) / 1000;
}

// ---------------------------------------------------------------------------------------------------------------
// Deterministic amounts

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mix(a: number, b: number): number {
  let h = (a ^ Math.imul(b + 0x9e3779b9, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A number in [0, 1) from (seed, series, day, salt). */
const unit = (h: number, day: number, salt: number) => mix(mix(h, day), salt) / 2 ** 32;

/** Deterministic id-like text: `length` characters of [A-Za-z0-9] from a seed text. */
export function idChars(seedText: string, length: number): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789';
  let h = fnv1a(seedText);
  let out = '';
  for (let i = 0; i < length; i++) {
    h = mix(h, i);
    out += alphabet[h % alphabet.length];
  }
  return out;
}

const seriesHashes = new WeakMap<Series, number>();
function seriesHash(org: OrgState, s: Series): number {
  let h = seriesHashes.get(s);
  if (h === undefined) {
    h = fnv1a(`${org.seed}|${s.id}`);
    seriesHashes.set(s, h);
  }
  return h;
}

/** The series' seeded full-day amounts on the day starting at `day` (before clipping and control changes). */
function seededDay(org: OrgState, s: Series, day: number): Metrics {
  const h = seriesHash(org, s);
  const dayIndex = day / DAY_S;
  // 1970-01-01 was a Thursday (4).
  const weekday = (dayIndex + 4) % 7;
  const weekend = weekday === 0 || weekday === 6 ? 0.55 : 1;
  const level = (0.6 + 0.8 * unit(h, dayIndex, 0)) * weekend;
  const out: Metrics = {};
  let salt = 1;
  for (const [name, value] of Object.entries(s.base)) {
    out[name] = Math.round(value * level * (0.9 + 0.2 * unit(h, dayIndex, salt++)));
  }
  return out;
}

/**
 * The series' usage in [a, b) as seen at `now`: the day's total spread evenly over the day (clipped to the series'
 * lifetime), plus additions in the window. [a, b) must lie within one UTC day.
 */
export function seriesWindow(org: OrgState, s: Series, a: number, b: number, now: number, additions: AdditionIndex): Metrics {
  const day = dayStart(a);
  // A revised day counts in full (its new total is what the provider now reports), whatever the key's lifetime.
  const revised = org.revisions[`${s.id}#${day}`];
  const lo = revised ? a : Math.max(a, s.since);
  const hi = Math.min(b, now, revised ? Infinity : (s.until ?? Infinity));
  // Late arrivals: a share of each day's usage reaches the report only after the day closed, growing over the next
  // hours, counted at the day's last second (for a series that ran the whole day; ending a key never changes what
  // its earlier hours show).
  const late = revised ? null : org.late;
  const lastSecond = day + DAY_S - 1;
  const ranWholeDay = s.since <= day && (s.until ?? Infinity) > lastSecond;
  const lateSeen = late && ranWholeDay && a <= lastSecond && lastSecond < b ? Math.min(1, Math.max(0, (now - day - DAY_S) / (late.hours * 3600))) : 0;
  const out: Metrics = {};
  for (const name of KIND_METRICS[s.kind]) out[name] = 0;
  if (hi > lo || lateSeen > 0) {
    const total = revised ?? seededDay(org, s, day);
    for (const name of KIND_METRICS[s.kind]) {
      const lateAmount = late ? Math.floor((total[name] ?? 0) * late.share) : 0;
      const d = (total[name] ?? 0) - lateAmount;
      const at = (x: number) => Math.floor((d * (x - day)) / DAY_S);
      if (hi > lo) {
        out[name] = at(hi) - at(lo);
        // Paused spans grow nothing (the curve telescopes, so buckets of any width still add up).
        for (const [p0, p1] of s.pauses ?? []) {
          const a2 = Math.max(lo, p0);
          const b2 = Math.min(hi, p1 ?? Infinity);
          if (b2 > a2) out[name]! -= at(b2) - at(a2);
        }
      }
      out[name]! += Math.floor(lateAmount * lateSeen);
    }
  }
  if (additions.size === 0) return out;
  const hiAdd = Math.min(b, now);
  for (const add of additions.get(`${s.id}#${day}`) ?? []) {
    if (add.at >= a && add.at < hiAdd) for (const [name, v] of Object.entries(add.metrics)) out[name] = (out[name] ?? 0) + v;
  }
  return out;
}

export type AdditionIndex = Map<string, OrgState['additions']>;
export function indexAdditions(org: OrgState): AdditionIndex {
  const index: AdditionIndex = new Map();
  for (const add of org.additions) {
    const k = `${add.seriesId}#${dayStart(add.at)}`;
    const list = index.get(k);
    if (list) list.push(add);
    else index.set(k, [add]);
  }
  return index;
}

export const isZero = (m: Metrics) => Object.values(m).every((v) => v === 0);

export function addInto(target: Metrics, m: Metrics): void {
  for (const [name, v] of Object.entries(m)) target[name] = (target[name] ?? 0) + v;
}

// ---------------------------------------------------------------------------------------------------------------
// Query parameters: arrays in all three spellings

/**
 * An array parameter as both providers' clients send it: repeated (`x=a&x=b`, the cookbook's `requests`), with
 * brackets (`x[]=a`, the official SDKs and Anthropic's curl examples) or comma-joined (`x=a,b`, Elastic). All
 * three, mixed too, give the same list (duplicates dropped, order of first appearance kept).
 */
export function arrayParam(params: URLSearchParams, name: string): string[] {
  const out: string[] = [];
  for (const [n, value] of params) {
    if (n !== name && n !== `${name}[]`) continue;
    for (const part of value.split(',')) {
      const item = part.trim();
      if (item && !out.includes(item)) out.push(item);
    }
  }
  return out;
}

/** One scalar parameter; a repeated one is refused (it would be ambiguous). */
export function scalarParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new StandInError(400, 'invalid_request', `${name} must be given once.`, name);
  return values[0];
}

export function intParam(params: URLSearchParams, name: string, fallback: number, min: number, max: number, maxMessage?: string): number {
  const raw = scalarParam(params, name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw)) throw new StandInError(400, 'invalid_request', `${name} must be an integer.`, name);
  const value = Number(raw);
  if (value < min) throw new StandInError(400, 'invalid_request', `${capitalize(name)} must be greater than or equal to ${min}.`, name);
  if (value > max) throw new StandInError(400, 'invalid_request', maxMessage ?? `${capitalize(name)} must be less than or equal to ${max}.`, name);
  return value;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function enumArray(params: URLSearchParams, name: string, allowed: readonly string[]): string[] {
  const values = arrayParam(params, name);
  for (const v of values) {
    if (!allowed.includes(v)) {
      throw new StandInError(400, 'invalid_request', `Invalid value for ${name}: '${v}'. Expected one of: ${allowed.join(', ')}.`, name);
    }
  }
  return values;
}

/**
 * `group_by` as each reference documents it, and no other spelling: OpenAI's OpenAPI document gives its array
 * parameters no `style` (so the default form, exploded: `group_by=a&group_by=b`); Anthropic's reference spells it
 * `group_by[]=a&group_by[]=b`. Another spelling is refused (400), so a client that sends one fails here as it
 * would against the provider (the filters keep taking all three spellings).
 */
export function groupByParam(params: URLSearchParams, spelling: 'repeated' | 'brackets', allowed: readonly string[]): string[] {
  const name = spelling === 'repeated' ? 'group_by' : 'group_by[]';
  const other = spelling === 'repeated' ? 'group_by[]' : 'group_by';
  if (params.has(other)) {
    throw new StandInError(400, 'invalid_request', `Unrecognized request argument supplied: ${other} (the array is spelled ${spelling === 'repeated' ? 'group_by=a&group_by=b' : 'group_by[]=a&group_by[]=b'}).`, other);
  }
  const out: string[] = [];
  for (const value of params.getAll(name)) {
    if (!allowed.includes(value)) {
      throw new StandInError(400, 'invalid_request', `Invalid value for ${name}: '${value}'. Expected one of: ${allowed.join(', ')}.`, name);
    }
    if (!out.includes(value)) out.push(value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Opaque page tokens, bound to the query that minted them

/**
 * A stable text of a query without its `page`: names without `[]`, array values split and sorted. So the three
 * array spellings of one query share their page tokens, and any other change of the query voids them.
 */
export function canonicalQuery(params: URLSearchParams, arrayNames: readonly string[]): string {
  const names = [...new Set([...params.keys()].map((n) => n.replace(/\[\]$/, '')))].filter((n) => n !== 'page').sort();
  return names
    .map((n) => `${n}=${arrayNames.includes(n) ? arrayParam(params, n).sort().join(',') : params.getAll(n).join(',')}`)
    .join('&');
}

export class PageTokens {
  private readonly secret = randomBytes(32);

  /** `page_` + base64 of 20 bytes (the next position, 8 bytes, and 12 bytes of an HMAC over it and the query). */
  mint(query: string, position: number): string {
    const pos = Buffer.alloc(8);
    pos.writeBigUInt64BE(BigInt(position));
    return `page_${Buffer.concat([pos, this.mac(query, pos)]).toString('base64')}`;
  }

  /** The position a token stands for; 400 for a token this query did not mint. */
  read(query: string, token: string): number {
    const raw = token.startsWith('page_') ? Buffer.from(token.slice(5), 'base64') : Buffer.alloc(0);
    const pos = raw.subarray(0, 8);
    if (raw.length !== 20 || !raw.subarray(8).equals(this.mac(query, pos))) {
      throw new StandInError(400, 'invalid_request', 'Invalid page token: it does not belong to this query (page tokens are bound to the query parameters that produced them).', 'page');
    }
    return Number(pos.readBigUInt64BE());
  }

  private mac(query: string, pos: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(query).update(pos).digest().subarray(0, 12);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Buckets

export const BUCKET_WIDTHS = { '1m': 60, '1h': 3600, '1d': DAY_S } as const;
export type BucketWidth = keyof typeof BUCKET_WIDTHS;
/** Both references: buckets per page by width (default, max). */
export const BUCKET_LIMITS: Record<BucketWidth, { default: number; max: number }> = {
  '1d': { default: 7, max: 31 },
  '1h': { default: 24, max: 168 },
  '1m': { default: 60, max: 1440 },
};
/**
 * A page ends early (never inside a bucket) once it holds this many result rows, so a heavily grouped organization
 * of 1,000 keys does not answer 31 days in one 50 MB body. The references cap buckets, not rows; a client that
 * follows `next_page` sees no difference.
 */
export const MAX_ROWS_PER_PAGE = 10_000;

export function bucketWidthParam(params: URLSearchParams, allowed: readonly BucketWidth[] = ['1m', '1h', '1d']): BucketWidth {
  const raw = scalarParam(params, 'bucket_width') ?? '1d';
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new StandInError(400, 'invalid_request', `Invalid bucket_width '${raw}'. Expected one of: ${allowed.join(', ')}.`, 'bucket_width');
  }
  return raw as BucketWidth;
}

// ---------------------------------------------------------------------------------------------------------------
// Grouping usage of a window

export interface Row {
  series: Series;
  metrics: Metrics;
}

/**
 * Usage of each matching series in [a, b) (one UTC day at most) as of `now`, summed per group: `dims` picks what
 * a group is keyed by (the dimensions grouped by), every other dimension is null in the result.
 */
export function groupWindow(
  org: OrgState,
  series: Series[],
  a: number,
  b: number,
  now: number,
  additions: AdditionIndex,
  dims: (s: Series) => Record<string, unknown>,
): Array<{ dims: Record<string, unknown>; metrics: Metrics }> {
  const groups = new Map<string, { dims: Record<string, unknown>; metrics: Metrics }>();
  for (const s of series) {
    const m = seriesWindow(org, s, a, b, now, additions);
    if (isZero(m)) continue;
    const d = dims(s);
    // Dimension values are ids, names and booleans: joined with a control character they key the group.
    const k = Object.values(d).join('\u0001');
    const g = groups.get(k);
    if (g) addInto(g.metrics, m);
    else groups.set(k, { dims: d, metrics: { ...m } });
  }
  return [...groups.values()];
}

// ---------------------------------------------------------------------------------------------------------------
// Faults and request counts (in memory)

export interface Fault {
  status: number;
  remaining: number;
  retryAfter: number | null;
  /** Only requests whose path starts with this (default: every provider path). */
  pathPrefix: string;
}

// ---------------------------------------------------------------------------------------------------------------
// The organization: loading, saving, the control API

/**
 * One organization with what goes with it at run time. A stand-in holds several (`OrgRegistry`): the seeded one
 * that `npm start` prints, plus any a test or bench makes through the control API, each with its own admin key
 * (requests find their organization by it), clock, faults and request counts, so test files running side by side
 * never disturb each other.
 */
/**
 * How an organization's API misbehaves, for the bounds on provider reads (shared/connections/pages.ts): on paths that
 * start with `pathPrefix`, `ignoreCursor` drops the page cursor or offset of every request (`offset`, `after`,
 * `after_id`, `page`), so a list answers its first page forever; `hugeBodyBytes` answers a JSON body of that many
 * bytes instead (streamed in 64 KiB writes: the stand-in never holds it).
 */
export interface Misbehaviour {
  pathPrefix: string;
  ignoreCursor: boolean;
  hugeBodyBytes: number | null;
}

/** The page cursors and offsets of the three references. */
const CURSOR_PARAMS = ['offset', 'after', 'after_id', 'page'];

/** Writes `{"data":[],"padding":"xxx…"}` of `bytes` bytes, 64 KiB at a time, waiting for the socket to drain. */
async function sendHugeBody(res: ServerResponse, bytes: number): Promise<void> {
  const head = '{"data":[],"padding":"';
  const tail = '"}';
  const fill = Math.max(0, bytes - head.length - tail.length);
  // Chunked, without a content-length: the reader learns the size only as the body arrives.
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  // Until the socket drains, or closes (the reader refused the rest): one listener of each at a time.
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  if (!res.write(head)) await drained();
  for (let left = fill; left > 0 && !res.destroyed; left -= chunk.length) {
    if (!res.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await drained();
  }
  if (!res.destroyed) res.end(tail);
}

export interface OrgStore {
  readonly provider: ProviderName;
  org: OrgState;
  faults: Fault[];
  /** A provider gone wrong (control API `misbehave`; memory only): lists that ignore their cursor, a huge body. */
  misbehaviour: Misbehaviour | null;
  requests: { total: number; byPath: Record<string, number> };
  now(): number;
  /** Saves every organization of the stand-in (and rebuilds this one's indexes). */
  save(): Promise<void>;
  additions(): AdditionIndex;
  /** The series of each provider key (`-` for usage without a key). */
  seriesByKey(): Map<string, Series[]>;
}

export interface OrgStoreOptions {
  provider: ProviderName;
  /** `<dataDir>/state.json` keeps the organizations (admin keys, changes) across restarts; none: memory only. */
  dataDir?: string;
  /** `seed`: another seed makes another organization (its own project / workspace and key ids). */
  seedOrg: (now: number, adminKey: string, seed?: string) => OrgState;
  bigOrg: (now: number, adminKey: string, size: { keys: number; models: number; days: number; requests?: number }) => OrgState;
  newAdminKey: () => string;
  /** An admin key for the main organization instead of the kept or a new one. */
  adminKey?: string;
}

export interface OrgRegistry {
  readonly provider: ProviderName;
  readonly options: OrgStoreOptions;
  /** The seeded organization `npm start` prints (id `main`). */
  main(): OrgStore;
  all(): OrgStore[];
  byId(id: string): OrgStore | undefined;
  /** The organization whose admin key this is (revoked or not). */
  byAdminKey(key: string): OrgStore | undefined;
  add(org: OrgState): OrgStore;
  remove(id: string): boolean;
  save(): Promise<void>;
}

const realNow = () => Math.floor(Date.now() / 1000);

export async function openOrgRegistry(options: OrgStoreOptions): Promise<OrgRegistry> {
  const file = options.dataDir ? join(options.dataDir, 'state.json') : undefined;
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  let kept: OrgState[] = [];
  if (file) {
    try {
      kept = (JSON.parse(await readFile(file, 'utf8')) as { orgs: OrgState[] }).orgs ?? [];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') console.error(`[${options.provider}-admin] ${file} is unreadable; seeding anew:`, error);
    }
  }
  const stores: OrgStore[] = [];
  let saving: Promise<void> = Promise.resolve();
  const saveAll = () => {
    if (!file) return Promise.resolve();
    const text = `${JSON.stringify({ orgs: stores.map((st) => st.org) })}\n`;
    saving = saving
      .then(async () => {
        await writeFile(`${file}.tmp`, text);
        await rename(`${file}.tmp`, file);
      })
      .catch((error: unknown) => console.error(`[${options.provider}-admin] could not save state:`, error));
    return saving;
  };
  const wrap = (org: OrgState): OrgStore => {
    // Indexes of the organization, rebuilt after a change (save) or when the organization was replaced.
    let indexes: { of: OrgState; additions: AdditionIndex; byKey: Map<string, Series[]> } | undefined;
    const current = () => {
      if (!indexes || indexes.of !== store.org) {
        const byKey = new Map<string, Series[]>();
        for (const s of store.org.series) {
          const list = byKey.get(s.keyId ?? '-');
          if (list) list.push(s);
          else byKey.set(s.keyId ?? '-', [s]);
        }
        indexes = { of: store.org, additions: indexAdditions(store.org), byKey };
      }
      return indexes;
    };
    const store: OrgStore = {
      provider: options.provider,
      org,
      faults: [],
      misbehaviour: null,
      requests: { total: 0, byPath: {} },
      now: () => store.org.clock ?? realNow(),
      additions: () => current().additions,
      seriesByKey: () => current().byKey,
      save: () => {
        indexes = undefined;
        return saveAll();
      },
    };
    return store;
  };
  const registry: OrgRegistry = {
    provider: options.provider,
    options,
    main: () => stores[0]!,
    all: () => stores,
    byId: (id) => stores.find((st) => st.org.id === id),
    byAdminKey: (key) => stores.find((st) => st.org.adminKey === key || (!!st.org.readOnlyAdminKey && st.org.readOnlyAdminKey === key)),
    add: (org) => {
      const store = wrap(org);
      stores.push(store);
      return store;
    },
    remove: (id) => {
      const i = stores.findIndex((st) => st.org.id === id);
      if (i <= 0) return false;
      stores.splice(i, 1);
      return true;
    },
    save: saveAll,
  };
  for (const org of kept) registry.add(org);
  if (!stores.length) registry.add({ ...options.seedOrg(realNow(), options.adminKey ?? options.newAdminKey()), id: 'main' });
  if (options.adminKey) stores[0]!.org.adminKey = options.adminKey;
  await saveAll();
  return registry;
}

/** Every series' usage per (UTC day, key, model, tier) in [from, to) as of now: the figures a sync must reproduce. */
export function truth(store: OrgStore, from: number, to: number): Array<{ date: string; series: Series; metrics: Metrics }> {
  const now = store.now();
  const additions = store.additions();
  const out: Array<{ date: string; series: Series; metrics: Metrics }> = [];
  for (let day = dayStart(from); day < to && day <= now; day += DAY_S) {
    for (const s of store.org.series) {
      const m = seriesWindow(store.org, s, day, day + DAY_S, now, additions);
      if (!isZero(m)) out.push({ date: isoDate(day), series: s, metrics: m });
    }
  }
  return out;
}

function findSeries(store: OrgStore, body: Record<string, unknown>, create: boolean): Series {
  const keyId = body.apiKeyId === null || body.apiKeyId === undefined ? null : String(body.apiKeyId);
  const kind = (body.kind as SeriesKind | undefined) ?? (store.provider === 'anthropic' ? 'messages' : store.provider === 'openrouter' ? 'activity' : 'completions');
  if (!KIND_METRICS[kind]) throw new StandInError(400, 'invalid_request', `Unknown kind ${String(body.kind)}.`);
  const model = String(body.model ?? '');
  if (!model) throw new StandInError(400, 'invalid_request', 'model is required.');
  // OpenRouter: the tier is the provider endpoint that served the usage (`default`: the model's own vendor).
  const tier = String(body.tier ?? (store.provider === 'anthropic' ? 'standard' : 'default'));
  // Anthropic's long-context usage is its own series (`contextWindow: "200k-1M"`).
  const window = store.provider === 'anthropic' ? String(body.contextWindow ?? '0-200k') : '0-200k';
  const id = `${keyId ?? '-'}|${model}|${tier}|${kind}${window === '0-200k' ? '' : `|${window}`}`;
  const found = store.org.series.find((s) => s.id === id);
  if (found) return found;
  if (!create) throw new StandInError(404, 'not_found', `No usage series ${id}.`);
  const key = keyId ? store.org.keys.find((k) => k.id === keyId) : undefined;
  if (keyId && !key) throw new StandInError(404, 'not_found', `No key ${keyId}.`);
  const s: Series = {
    id,
    kind,
    keyId,
    projectId: key ? key.projectId : ((body.projectId as string | null | undefined) ?? (store.provider === 'openai' ? (store.org.projects[0]?.id ?? null) : null)),
    userId: key?.owner.type === 'user' ? key.owner.id : null,
    model,
    tier,
    ...(store.provider === 'anthropic' ? { contextWindow: window } : {}),
    base: Object.fromEntries(KIND_METRICS[kind].map((n) => [n, 0])),
    since: 0,
    until: null,
  };
  store.org.series.push(s);
  return s;
}

function metricsBody(kind: SeriesKind, value: unknown, allowNegative: boolean): Metrics {
  if (!value || typeof value !== 'object') throw new StandInError(400, 'invalid_request', `Metrics expected: ${KIND_METRICS[kind].join(', ')}.`);
  const out: Metrics = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (!KIND_METRICS[kind].includes(name)) throw new StandInError(400, 'invalid_request', `Unknown metric ${name} for ${kind}: ${KIND_METRICS[kind].join(', ')}.`);
    if (!Number.isSafeInteger(v) || (!allowNegative && (v as number) < 0)) throw new StandInError(400, 'invalid_request', `${name} must be an integer${allowNegative ? '' : ' ≥ 0'}.`);
    out[name] = v as number;
  }
  return out;
}

/** The day total a revision or an addition works on (curve total + that day's additions). */
function fullDay(store: OrgStore, s: Series, day: number): Metrics {
  const total = seriesWindow(store.org, s, day, day + DAY_S, Infinity, store.additions());
  return total;
}

export interface ControlDeps {
  /** Makes a key of this provider (ids and hints in its shapes). */
  newKey: (store: OrgStore, input: { name: string; projectId: string | null; index: number }) => OrgKey;
  /** Why the provider would refuse a call of this series now (key inactive, project over its limit), if it would. */
  refuses?: (store: OrgStore, s: Series) => string | undefined;
  /** A new key's secret (its calls to the inference endpoint present it). */
  newSecret?: () => string;
}

/**
 * A provider's inference endpoint as the stand-in serves it, so an application's calls through the official SDKs
 * spend, and are refused, as at the provider: each call is checked BEFORE it runs (a key switched off, a cap reached:
 * the provider's refusal, nothing added); a call that starts under a cap runs to its end and is billed whole (the
 * providers charge a request when it finishes), so a cap is passed by at most the calls in flight when it is reached.
 * The call's usage: its input (the request's JSON length / 4 tokens) and `max_tokens` of output, at the stand-in's
 * prices.
 */
export interface InferenceSpec {
  /** POST paths the SDKs call. */
  paths: string[];
  /** The inference key a request presents. */
  credential(req: IncomingMessage): string;
  /** Whether `secret` is this key's. */
  matches(key: OrgKey, secret: string): boolean;
  /** The series a call of `model` grows (its fields for the control API's series lookup). */
  series(model: string): Record<string, unknown>;
  /** The call's metrics, its cost (nano-dollars) and the usage object of the answer. */
  usage(s: Series, input: number, output: number): { metrics: Metrics; usage: Record<string, unknown> };
  /** The provider's answer. */
  answer(id: string, model: string, usage: Record<string, unknown>, created: number): unknown;
  /** The provider's refusal for a reason of `refuses` (or an unknown key: `unknown_key`). */
  refusal(reason: string, store: OrgStore | undefined): { status: number; body: unknown; headers?: Record<string, string> };
  /** After a call is billed: the provider notes a cap it reached (OpenAI: when a lag before enforcement starts). */
  afterCall?(store: OrgStore): void;
}

/** One call to the inference endpoint: found key, refusal or usage added and answered. */
async function inferenceCall(registry: OrgRegistry, spec: StandInSpec, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const inf = spec.inference!;
  const secret = inf.credential(req);
  const body = await readJsonBody(req);
  const found = secret ? registry.all().flatMap((st) => st.org.keys.filter((k) => k.status !== 'deleted' && inf.matches(k, secret)).map((k) => ({ st, k })))[0] : undefined;
  const refuse = (reason: string, st: OrgStore | undefined) => {
    const r = inf.refusal(reason, st);
    sendJson(res, r.status, r.body, r.headers ?? {});
  };
  if (!found) return refuse('unknown_key', undefined);
  const { st, k } = found;
  if (k.status === 'archived' || k.status === 'expired') return refuse('unknown_key', st);
  const model = typeof body.model === 'string' ? body.model : '';
  if (!model) return sendJson(res, 400, spec.errorBody(new StandInError(400, 'invalid_request', 'model: Field required', 'model')));
  countRequest(st, new URL(req.url ?? '/', 'http://localhost').pathname);
  const s = findSeries(st, { apiKeyId: k.id, model, ...inf.series(model) }, true);
  const reason = spec.refuses?.(st, s) ?? (k.status !== 'active' ? 'key_inactive' : undefined);
  if (reason) return refuse(reason, st);
  const { max_tokens: maxTokens, max_completion_tokens: maxCompletion, model: _m, stream: _s, ...rest } = body;
  const output = Math.max(1, Math.floor(Number(maxCompletion ?? maxTokens ?? 16)));
  const input = Math.max(1, Math.ceil(JSON.stringify(rest).length / 4));
  const { metrics, usage } = inf.usage(s, input, output);
  const now = st.now();
  st.org.additions.push({ seriesId: s.id, at: Math.max(dayStart(now), now - 1), metrics });
  await st.save(); // (also renews the additions' index the caps read)
  inf.afterCall?.(st);
  sendJson(res, 200, inf.answer(`${randomBytes(12).toString('hex')}`, model, usage, now));
}

/** Pauses a series from `now` (no-op while paused), or ends its pause at `now`. */
export function pauseSeries(s: Series, paused: boolean, now: number): void {
  const open = s.pauses?.find((p) => p[1] === null);
  if (paused && !open) (s.pauses ??= []).push([now, null]);
  if (!paused && open) open[1] = now;
}

/**
 * The control API (`/_burnrate/…`, JSON in and out), for tests, benches and the demo seed. Routes act on the main
 * organization, or on another one under `/_burnrate/orgs/<id>/…`:
 *
 *   GET  /_burnrate/orgs                       the organizations: id, admin key
 *   POST /_burnrate/orgs       {big?: {keys, models, days}, seed?, now?, late?, empty?, historyDays?}   a new organization (the
 *                                                                  seed, or a big one) with its own admin key, optionally
 *                                                                  a frozen clock, late arrivals (null: none) and a short
 *                                                                  history (seeded usage only on its last N days, today
 *                                                                  counted) → its state
 *   DELETE /_burnrate/orgs/:id                 remove one (not main)
 *   GET  /_burnrate/state                      admin key, clock, projects, keys (deleted too), series
 *   POST /_burnrate/clock      {now: ISO|unix s|null}              freeze the clock (null: the real one again)
 *   POST /_burnrate/usage      {apiKeyId|null, model, tier?, kind?, contextWindow?, date?|at?, add: {…}}  usage at an instant
 *   POST /_burnrate/revise     {apiKeyId|null, model, tier?, kind?, date, set?: {…} | delta?: {…}}  a day's new total
 *   POST /_burnrate/late       {share, hours}                       late arrivals (share 0: none)
 *   POST /_burnrate/projects   {name}                               a new project (OpenAI) / workspace (Anthropic)
 *   POST /_burnrate/keys       {name, projectId?, model?, tier?, daily?: {…}}              a new key (usage from now)
 *   POST /_burnrate/keys/:id   {status: active|inactive|archived|expired|deleted}           usage stops unless active
 *   DELETE /_burnrate/keys/:id                 the same as status deleted: gone from the lists, its usage stays
 *   POST /_burnrate/admin-key  {revoked?: bool, rotate?: bool}     revoke (→ 401) or issue a new admin key
 *   POST /_burnrate/faults     {status: 429|5xx, count, retryAfter?, pathPrefix?}   the next `count` requests fail
 *   DELETE /_burnrate/faults                   no more forced faults
 *   POST /_burnrate/misbehave  {ignoreCursor?, hugeBodyBytes?, pathPrefix?}   lists that loop / a huge body (Misbehaviour)
 *   DELETE /_burnrate/misbehave                behave again
 *   POST /_burnrate/reset      {}                                   the seed again (same id and admin key)
 *   POST /_burnrate/big        {keys, models, days}                 N keys × M models × D days, usage every day
 *   GET  /_burnrate/truth?from&to[&detail=totals]                  usage per (day, key, model, tier) as of now
 *   GET  /_burnrate/requests   DELETE /_burnrate/requests          provider requests counted since the last reset
 *
 * Metric names: `completions` uncached, cached, cacheWrite, output, requests; `embeddings` input, requests;
 * `messages` uncached, cacheRead, cache5m, cache1h, output, webSearch.
 */
export async function control(registry: OrgRegistry, deps: ControlDeps, method: string, path: string, params: URLSearchParams, body: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const ok = (b: unknown, status = 200) => ({ status, body: b });
  const rest = path.replace(/^\/_burnrate/, '');
  if (rest === '/orgs' && method === 'GET') return ok(registry.all().map((st) => ({ id: st.org.id, adminKey: st.org.adminKey, big: st.org.big })));
  if (rest === '/orgs' && method === 'POST') {
    const adminKey = registry.options.newAdminKey();
    // Seeded as of its frozen clock when it has one (a bench can stand at the end of a past month), else now.
    const frozen = body.now === undefined || body.now === null ? undefined : typeof body.now === 'number' ? body.now : parseDate(String(body.now));
    const now = frozen ?? realNow();
    if (body.seed !== undefined && (typeof body.seed !== 'string' || !/^[a-z0-9-]{1,40}$/.test(body.seed))) throw new StandInError(400, 'invalid_request', 'seed: 1–40 characters of a-z, 0-9, "-".');
    const seed = typeof body.seed === 'string' ? body.seed : undefined;
    const historyFrom = body.historyDays === undefined || body.historyDays === null ? null : dayStart(now) - (historyDaysOf(body.historyDays) - 1) * DAY_S;
    const made = body.big ? registry.options.bigOrg(now, adminKey, bigSize(body.big as Record<string, unknown>)) : registry.options.seedOrg(now, adminKey, seed);
    // `empty: true`: an organization with nothing in it (no projects or workspaces, no keys, no usage).
    const org = body.empty === true ? { ...made, projects: [], keys: [], series: [], inferenceKeys: [] } : withHistoryFrom(made, historyFrom);
    const store = registry.add({ ...org, id: `org_${randomBytes(8).toString('hex')}` });
    // Optional at once: a frozen clock, late arrivals.
    if (body.now !== undefined) await controlOrg(registry, store, deps, 'POST /clock', params, { now: body.now });
    if (body.late !== undefined) await controlOrg(registry, store, deps, 'POST /late', params, (body.late as Record<string, unknown> | null) ?? { share: 0 });
    await registry.save();
    return ok(stateView(store), 201);
  }
  const scoped = /^\/orgs\/([^/]+)(\/.*)?$/.exec(rest);
  if (scoped && !scoped[2] && method === 'DELETE') {
    if (!registry.remove(scoped[1]!)) throw new StandInError(404, 'not_found', 'No such organization (the main one cannot be removed).');
    await registry.save();
    return { status: 204, body: null };
  }
  const store = scoped ? registry.byId(scoped[1]!) : registry.main();
  if (!store) throw new StandInError(404, 'not_found', `No organization ${scoped?.[1]}.`);
  return controlOrg(registry, store, deps, `${method} ${scoped ? (scoped[2] ?? '/') : rest}`, params, body);
}

function historyDaysOf(value: unknown): number {
  const days = Number(value);
  if (!Number.isInteger(days) || days < 1 || days > 400) throw new StandInError(400, 'invalid_request', 'historyDays: a whole number of days in 1..400 expected.');
  return days;
}

/**
 * The organization with no seeded usage before `historyFrom` (null: as seeded): each series starts there at the
 * earliest, so a series that ended before it has none. What a test sees is an organization whose keys and projects
 * are the seed's but whose usage began recently: a first sync has only those days to import.
 */
function withHistoryFrom(org: OrgState, historyFrom: number | null): OrgState {
  if (historyFrom === null) return org;
  return { ...org, historyFrom, series: org.series.map((s) => (s.since >= historyFrom ? s : { ...s, since: historyFrom })) };
}

function bigSize(body: Record<string, unknown>) {
  const size = { keys: Number(body.keys ?? 1000), models: Number(body.models ?? 5), days: Number(body.days ?? 62) };
  if (![size.keys, size.models, size.days].every((n) => Number.isInteger(n) && n >= 1) || size.keys > 100_000 || size.models > 50 || size.days > 400) {
    throw new StandInError(400, 'invalid_request', 'keys (1..100000), models (1..50), days (1..400) expected.');
  }
  if (body.requests === undefined) return size;
  // OpenAI: a series' typical requests a day (the default 120; a bench keeps an account under its plan's limit).
  const requests = Number(body.requests);
  if (!Number.isInteger(requests) || requests < 1 || requests > 100_000) throw new StandInError(400, 'invalid_request', 'requests (1..100000) expected.');
  return { ...size, requests };
}

async function controlOrg(registry: OrgRegistry, store: OrgStore, deps: ControlDeps, route: string, params: URLSearchParams, body: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const org = store.org;
  const ok = (b: unknown, status = 200) => ({ status, body: b });
  const keyMatch = /^POST \/keys\/([^/]+)$/.exec(route);
  // DELETE /keys/:id: deleted in the console; its usage history stays.
  const deleteMatch = /^DELETE \/keys\/([^/]+)$/.exec(route);
  if (deleteMatch) return controlOrg(registry, store, deps, `POST /keys/${deleteMatch[1]}`, params, { status: 'deleted' });
  if (route === 'GET /state') return ok(stateView(store));
  if (route === 'POST /clock') {
    const v = body.now;
    org.clock = v === null || v === undefined ? null : typeof v === 'number' ? v : parseDate(String(v));
    await store.save();
    return ok({ now: rfc3339(store.now()), frozen: org.clock !== null });
  }
  if (route === 'POST /usage') {
    const s = findSeries(store, body, true);
    const now = store.now();
    // A call now that the provider would refuse adds nothing (a key set inactive, a project over its hard limit).
    const refused = body.at === undefined && body.date === undefined ? deps.refuses?.(store, s) : undefined;
    if (refused) return ok({ series: s.id, refused });
    // At `at`; else on `date` (at noon, or a second ago if that is today); else a second ago. Usage shows in the
    // bucket of its instant once the clock is past it (so not at "now" itself, where OpenAI's current bucket ends).
    const justNow = Math.max(dayStart(now), now - 1);
    const dayAsked = body.date !== undefined ? dayStart(parseDate(String(body.date))) : undefined;
    if (dayAsked !== undefined && dayAsked > now) throw new StandInError(400, 'invalid_request', 'date is in the future of the stand-in\'s clock.');
    const at = body.at !== undefined ? parseDate(String(body.at)) : dayAsked !== undefined ? Math.min(dayAsked + DAY_S / 2, justNow) : justNow;
    const metrics = metricsBody(s.kind, body.add, false);
    org.additions.push({ seriesId: s.id, at, metrics });
    await store.save();
    return ok({ series: s.id, at: rfc3339(at), day: fullDay(store, s, dayStart(at)) });
  }
  if (route === 'POST /revise') {
    const s = findSeries(store, body, false);
    const day = dayStart(parseDate(String(body.date ?? '')));
    const current = fullDay(store, s, day);
    let target: Metrics;
    if (body.set !== undefined) target = { ...current, ...metricsBody(s.kind, body.set, false) };
    else {
      const delta = metricsBody(s.kind, body.delta, true);
      target = { ...current };
      for (const [n, v] of Object.entries(delta)) target[n] = (target[n] ?? 0) + v;
    }
    if (Object.values(target).some((v) => v < 0)) throw new StandInError(400, 'invalid_request', 'A revision cannot make a count negative.');
    // The day's curve becomes the new total; the additions of that day are folded into it.
    org.revisions[`${s.id}#${day}`] = target;
    org.additions = org.additions.filter((a) => !(a.seriesId === s.id && dayStart(a.at) === day));
    await store.save();
    return ok({ series: s.id, date: isoDate(day), day: fullDay(store, s, day) });
  }
  if (route === 'POST /spend-limits' && typeof body.earlyAccess === 'boolean') {
    org.spendLimitsEarlyAccess = body.earlyAccess;
    await store.save();
    return ok({ earlyAccess: body.earlyAccess, workspaceLimits: org.workspaceLimits ?? {} });
  }
  if (route === 'POST /spend-limits') {
    const cents = Number(body.overshootCents ?? org.overshootCents ?? 0);
    if (!Number.isInteger(cents) || cents < 0) throw new StandInError(400, 'invalid_request', 'overshootCents: a whole number ≥ 0 expected.');
    const lag = Number(body.lagSeconds ?? org.enforcementLagSeconds ?? 0);
    if (!Number.isInteger(lag) || lag < 0 || lag > 86_400) throw new StandInError(400, 'invalid_request', 'lagSeconds: a whole number of seconds in [0, 86400] expected.');
    org.overshootCents = cents;
    org.enforcementLagSeconds = lag;
    await store.save();
    return ok({ overshootCents: cents, lagSeconds: lag, spendLimits: org.spendLimits ?? {} });
  }
  if (route === 'POST /late') {
    const share = Number(body.share ?? 0);
    const hours = Number(body.hours ?? 6);
    if (!(share >= 0 && share < 1) || !(hours > 0 && hours <= 72)) throw new StandInError(400, 'invalid_request', 'share in [0, 1), hours in (0, 72] expected.');
    org.late = share === 0 ? null : { share, hours };
    await store.save();
    return ok({ late: org.late });
  }
  if (route === 'POST /projects') {
    const project: OrgProject = {
      id: `${store.provider === 'openai' ? 'proj_' : 'wrkspc_01'}${randomBytes(16).toString('hex').slice(0, store.provider === 'openai' ? 24 : 22)}`,
      name: String(body.name ?? 'New project'),
      createdAt: store.now(),
      archivedAt: null,
    };
    org.projects.push(project);
    await store.save();
    return ok(project, 201);
  }
  if (route === 'POST /keys') {
    const name = String(body.name ?? 'new key');
    const projectId = (body.projectId as string | null | undefined) ?? (store.provider === 'openai' ? (org.projects[0]?.id ?? null) : null);
    if (projectId !== null && !org.projects.some((p) => p.id === projectId)) throw new StandInError(404, 'not_found', `No project/workspace ${projectId}.`);
    if (projectId === null && store.provider === 'openai') throw new StandInError(400, 'invalid_request', 'An OpenAI key belongs to a project.');
    const key = deps.newKey(store, { name, projectId, index: org.keys.length });
    key.createdAt = store.now();
    key.secret ??= deps.newSecret?.();
    org.keys.push(key);
    if (body.model) {
      const s = findSeries(store, { ...body, apiKeyId: key.id }, true);
      s.since = key.createdAt;
      if (body.daily) s.base = { ...s.base, ...metricsBody(s.kind, body.daily, false) };
    }
    await store.save();
    return ok(key, 201);
  }
  if (keyMatch) {
    const key = org.keys.find((k) => k.id === decodeURIComponent(keyMatch[1]!));
    if (!key) throw new StandInError(404, 'not_found', 'No such key.');
    const status = String(body.status ?? '') as KeyStatus;
    if (!['active', 'inactive', 'archived', 'expired', 'deleted'].includes(status)) throw new StandInError(400, 'invalid_request', 'status: active|inactive|archived|expired|deleted');
    key.status = status;
    for (const s of org.series) if (s.keyId === key.id) s.until = status === 'active' ? null : (s.until ?? store.now());
    await store.save();
    return ok(key);
  }
  if (route === 'POST /admin-key') {
    if (body.readOnly === true) {
      org.readOnlyAdminKey ??= registry.options.newAdminKey();
      await store.save();
      return ok({ adminKey: org.adminKey, readOnlyAdminKey: org.readOnlyAdminKey });
    }
    if (body.rotate === true) {
      org.adminKey = registry.options.newAdminKey();
      org.adminRevoked = false;
    }
    if (typeof body.revoked === 'boolean') org.adminRevoked = body.revoked;
    await store.save();
    return ok({ adminKey: org.adminKey, revoked: org.adminRevoked });
  }
  if (route === 'POST /faults') {
    const status = Number(body.status);
    if (status !== 429 && !(status >= 500 && status <= 599)) throw new StandInError(400, 'invalid_request', 'status: 429 or 5xx');
    const retryAfter = body.retryAfter === undefined || body.retryAfter === null ? null : Number(body.retryAfter);
    store.faults.push({ status, remaining: Math.max(1, Number(body.count ?? 1)), retryAfter, pathPrefix: String(body.pathPrefix ?? (store.provider === 'openrouter' ? '/api/v1/' : '/v1/')) });
    return ok({ faults: store.faults });
  }
  if (route === 'POST /misbehave') {
    const huge = body.hugeBodyBytes === undefined || body.hugeBodyBytes === null ? null : Number(body.hugeBodyBytes);
    if (huge !== null && !(Number.isInteger(huge) && huge >= 1 && huge <= 500 * 1024 * 1024)) throw new StandInError(400, 'invalid_request', 'hugeBodyBytes: 1..524288000');
    store.misbehaviour = {
      pathPrefix: String(body.pathPrefix ?? (store.provider === 'openrouter' ? '/api/v1/' : '/v1/')),
      ignoreCursor: body.ignoreCursor === true,
      hugeBodyBytes: huge,
    };
    return ok({ misbehaviour: store.misbehaviour });
  }
  if (route === 'DELETE /misbehave') {
    store.misbehaviour = null;
    return ok({ misbehaviour: null });
  }
  if (route === 'DELETE /faults') {
    store.faults.length = 0;
    return ok({ faults: [] });
  }
  if (route === 'POST /reset') {
    // The seed again, with the organization's short history if it was made with one (from the same day).
    store.org = { ...withHistoryFrom(registry.options.seedOrg(realNow(), org.adminKey, org.big ? undefined : org.seed), org.historyFrom ?? null), id: org.id };
    store.faults.length = 0;
    await store.save();
    return ok(stateView(store));
  }
  if (route === 'POST /big') {
    store.org = { ...registry.options.bigOrg(store.now(), org.adminKey, bigSize(body)), id: org.id, clock: org.clock };
    await store.save();
    return ok(stateView(store));
  }
  if (route === 'GET /truth') return ok(truthView(store, params));
  if (route === 'GET /requests') return ok(store.requests);
  if (route === 'DELETE /requests') {
    store.requests = { total: 0, byPath: {} };
    return ok(store.requests);
  }
  throw new StandInError(404, 'not_found', `No control route ${route}.`);
}

function stateView(store: OrgStore) {
  const org = store.org;
  return {
    id: org.id,
    provider: org.provider,
    adminKey: org.adminKey,
    adminRevoked: org.adminRevoked,
    readOnlyAdminKey: org.readOnlyAdminKey ?? null,
    spendLimits: org.spendLimits ?? {},
    workspaceLimits: org.workspaceLimits ?? {},
    inferenceKeys: org.inferenceKeys,
    now: rfc3339(store.now()),
    clockFrozen: org.clock !== null,
    late: org.late,
    importFrom: isoDate(org.originDay),
    historyFrom: org.historyFrom ? isoDate(org.historyFrom) : null,
    big: org.big,
    projects: org.projects,
    keys: org.keys,
    series: org.big ? org.series.length : org.series,
  };
}

function truthView(store: OrgStore, params: URLSearchParams) {
  const from = params.get('from') ? parseDate(params.get('from')!) : store.org.originDay;
  const to = params.get('to') ? parseDate(params.get('to')!) + DAY_S : store.now() + 1;
  const cells = truth(store, from, to);
  const byDay: Record<string, Metrics> = {};
  const byKey: Record<string, Metrics> = {};
  const byModel: Record<string, Metrics> = {};
  const total: Metrics = {};
  for (const c of cells) {
    addInto((byDay[c.date] ??= {}), c.metrics);
    addInto((byKey[c.series.keyId ?? 'null'] ??= {}), c.metrics);
    addInto((byModel[c.series.model] ??= {}), c.metrics);
    addInto(total, c.metrics);
  }
  return {
    asOf: rfc3339(store.now()),
    from: isoDate(from),
    to: isoDate(to - 1),
    total,
    byDay,
    byKey,
    byModel,
    ...(params.get('detail') === 'totals'
      ? {}
      : {
          cells: cells.map((c) => ({
            date: c.date,
            apiKeyId: c.series.keyId,
            projectId: c.series.projectId,
            model: c.series.model,
            tier: c.series.tier,
            kind: c.series.kind,
            ...(c.series.contextWindow && c.series.contextWindow !== '0-200k' ? { contextWindow: c.series.contextWindow } : {}),
            ...c.metrics,
          })),
        }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

export interface StandInServer {
  url: string;
  port: number;
  server: Server;
  stop(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024;

export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new StandInError(413, 'invalid_request', 'Body too large.');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // below
  }
  throw new StandInError(400, 'invalid_request', 'A JSON object body expected.');
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Takes the next forced fault that applies to `path`, if any. */
export function takeFault(store: OrgStore, path: string): Fault | undefined {
  const fault = store.faults.find((f) => path.startsWith(f.pathPrefix));
  if (!fault) return undefined;
  fault.remaining -= 1;
  if (fault.remaining <= 0) store.faults.splice(store.faults.indexOf(fault), 1);
  return fault;
}

export function countRequest(store: OrgStore, path: string): void {
  store.requests.total += 1;
  const key = path.replace(/\/(proj|key|apikey)_[^/]+/g, '/$1_…').replace(/\/keys\/[0-9a-f]{64}$/, '/keys/{hash}');
  store.requests.byPath[key] = (store.requests.byPath[key] ?? 0) + 1;
}

/** Listens on `host` (127.0.0.1: this machine only) at `port` (0: any free port). */
export async function listen(
  name: string,
  envName: string,
  port: number,
  host: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<StandInServer> {
  const server = createServer(handler);
  server.keepAliveTimeout = 5000;
  server.listen({ port, host });
  try {
    await once(server, 'listening');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(`Port ${port} (${name}) is already in use. Stop whatever holds it, or set ${envName} to another port.`);
  }
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`,
    port: bound,
    server,
    async stop() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** What one provider's stand-in plugs into the shared server. */
export interface StandInSpec {
  provider: ProviderName;
  /** For messages: `the OpenAI admin stand-in`. */
  name: string;
  /** The environment variable that sets its port (named in the "port in use" message). */
  portEnv: string;
  seedOrg: OrgStoreOptions['seedOrg'];
  bigOrg: OrgStoreOptions['bigOrg'];
  newAdminKey: () => string;
  /** The key a request presents ('' for none). */
  credential(req: IncomingMessage): string;
  /**
   * Throws the provider's refusal (missing/unknown/revoked/inference key, missing headers). `store`: the
   * organization whose admin key `key` is, revoked or not.
   */
  authenticate(store: OrgStore | undefined, key: string, req: IncomingMessage, registry: OrgRegistry): void;
  /** The provider's answer to an authenticated request. */
  route(store: OrgStore, tokens: PageTokens, req: IncomingMessage, path: string, params: URLSearchParams): Promise<unknown>;
  /** An error in the provider's own shape. */
  errorBody(error: StandInError): unknown;
  /** The messages of forced faults: a 429, a 5xx of this status. */
  faultMessages: { rateLimit: string; server: (status: number) => string };
  /** Makes a key of this provider for the control API. */
  newKey: ControlDeps['newKey'];
  refuses?: ControlDeps['refuses'];
  newSecret?: ControlDeps['newSecret'];
  /** Its inference endpoint (the calls an application makes with a key). */
  inference?: InferenceSpec;
  /** What the provider says to a write with a read-only admin key (403). */
  readOnlyMessage: string;
}

export interface StandInOptions {
  /** 0: any free port. */
  port: number;
  /** @default 127.0.0.1 */
  host?: string;
  /** Keeps the organization (and its admin key) in `<dataDir>/state.json`; none: memory only. */
  dataDir?: string;
  /** Use this admin key (else the kept one, else a new random one). */
  adminKey?: string;
}

export interface StandIn extends StandInServer {
  /** The main organization's admin key (now: the control API can rotate it). */
  adminKey(): string;
  registry: OrgRegistry;
}

/**
 * Starts one stand-in: its organization (kept under `dataDir`) and its HTTP server. `/_burnrate/…` is the control
 * API; everything else is counted, authenticated, may meet a forced fault (after authentication, as a real rate
 * limiter would), and is routed to the provider's code.
 */
export async function startStandIn(spec: StandInSpec, options: StandInOptions): Promise<StandIn> {
  const registry = await openOrgRegistry({ ...spec, dataDir: options.dataDir, adminKey: options.adminKey });
  const tokens = new PageTokens();
  const faultError = (f: Fault) =>
    f.status === 429
      ? new StandInError(429, 'rate_limit', spec.faultMessages.rateLimit, null, f.retryAfter ?? undefined)
      : new StandInError(f.status, 'server', spec.faultMessages.server(f.status));
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const work = async () => {
      if (url.pathname.startsWith('/_burnrate/')) {
        const body = req.method === 'POST' ? await readJsonBody(req) : {};
        const out = await control(registry, { newKey: spec.newKey, ...(spec.refuses ? { refuses: spec.refuses } : {}), ...(spec.newSecret ? { newSecret: spec.newSecret } : {}) }, req.method ?? 'GET', url.pathname, url.searchParams, body);
        if (out.status === 204) return res.writeHead(204).end();
        return sendJson(res, out.status, out.body);
      }
      if (spec.inference && req.method === 'POST' && spec.inference.paths.includes(url.pathname)) return inferenceCall(registry, spec, req, res);
      const key = spec.credential(req);
      const store = key ? registry.byAdminKey(key) : undefined;
      if (store) countRequest(store, url.pathname);
      spec.authenticate(store, key, req, registry);
      if (!store) throw new StandInError(401, 'authentication', 'Unknown admin key.');
      if (req.method !== 'GET' && key === store.org.readOnlyAdminKey) throw new StandInError(403, 'permission', spec.readOnlyMessage);
      const fault = takeFault(store, url.pathname);
      if (fault) throw faultError(fault);
      const misbehaviour = store.misbehaviour;
      if (misbehaviour && url.pathname.startsWith(misbehaviour.pathPrefix)) {
        if (misbehaviour.hugeBodyBytes !== null) return sendHugeBody(res, misbehaviour.hugeBodyBytes);
        if (misbehaviour.ignoreCursor) for (const p of CURSOR_PARAMS) url.searchParams.delete(p);
      }
      sendJson(res, 200, await spec.route(store, tokens, req, url.pathname, url.searchParams));
    };
    work().catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (!(error instanceof StandInError)) console.error(`[${registry.provider}-admin]`, error);
      const e = error instanceof StandInError ? error : new StandInError(500, 'server', `${spec.name} failed.`);
      sendJson(res, e.status, spec.errorBody(e), e.retryAfter ? { 'retry-after': String(e.retryAfter) } : {});
    });
  };
  const server = await listen(spec.name, spec.portEnv, options.port, options.host ?? '127.0.0.1', handler);
  return { ...server, registry, adminKey: () => registry.main().org.adminKey };
}
