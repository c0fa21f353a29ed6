/**
 * OpenRouter's management API (openrouter.ai/docs/api/api-reference, its OpenAPI document): `Authorization: Bearer
 * <management key>` on `https://openrouter.ai/api/v1`.
 * - Inventory: `GET /keys?include_disabled=true&offset=N` (pages of at most 100, `{data: [key]}`; a key is `{hash, name,
 *   label, disabled, limit, usage, usage_daily, …}`, `hash` the id the other endpoints take).
 * - Usage: `GET /activity?api_key_hash=<hash>` (`{data: [{date, model, provider_name, endpoint_id, usage, requests,
 *   prompt_tokens, completion_tokens, reasoning_tokens, …}]}`, one row per UTC day × model × provider endpoint, the
 *   last 30 completed UTC days only). `usage` is in dollars and is what OpenRouter charges: cells carry it as their
 *   reported cost (never priced from the table). Today is not in the activity: today's cell per key is the key's
 *   `usage_daily` (dollars of the current UTC day), without a model or token breakdown.
 * - What the account is charged per day and model (settlement, reconciliation): `GET /activity` without a key filter;
 *   what the keys' activity does not explain (a key deleted before the connection was made) is the connection's usage
 *   without a key (shared/connections/settle.ts `settleReportedDay`).
 * - The lever: `PATCH /keys/{hash}` `{disabled}`.
 * Imports only shared helpers (never client.ts, which picks this implementation).
 */
import { dollarsToPicos, picosToMicros } from '#shared/connections/decimal.ts';
import { ProviderBadResponse, providerHttp, type ProviderHttpOptions } from '#shared/connections/http.ts';
import { FAN_OUT, inPool, MAX_LIST_ITEMS, ProviderLimitExceeded, readPages } from '#shared/connections/pages.ts';
import { OPENROUTER_HISTORY_DAYS, type BilledDay, type ProviderKey, type UsageCell } from '#shared/connections/model.ts';
import { addDays, isoDate } from '#shared/time/periods.ts';
import { NOT_BY_MODEL } from '#shared/usage/names.ts';

/** The activity endpoint holds the last 30 completed UTC days (shared/connections/model.ts). */
export { OPENROUTER_HISTORY_DAYS };
/** The model of a key's cell of today: `usage_daily` has no model breakdown (the activity gives it tomorrow): never shown as a model. */
export const OPENROUTER_TODAY_MODEL = NOT_BY_MODEL;
/** Keys per page of `GET /keys` (the reference: "the most recent 100 API keys", `offset` for the next ones). */
export const OPENROUTER_KEYS_PAGE = 100;
/** Activity requests in flight at once (one per key). */
const CONCURRENCY = FAN_OUT;

/** The first UTC day OpenRouter's activity still holds, seen on `today`. */
export const openRouterOldestDay = (today: string) => addDays(today, -OPENROUTER_HISTORY_DAYS);

/** An API key object of `GET /keys` (the fields read; the reference has more). */
export interface OpenRouterKey {
  hash: string;
  name?: string | null;
  label?: string | null;
  disabled?: boolean;
  limit?: number | null;
  usage?: number;
  usage_daily?: number;
}

interface ActivityRow {
  date?: unknown;
  model?: unknown;
  usage?: unknown;
  requests?: unknown;
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
}

/** The same methods as client.ts's `ProviderClient` (structurally), plus the lever. */
export interface OpenRouterClient {
  readonly provider: 'openrouter';
  check(): Promise<void>;
  listKeys(): Promise<ProviderKey[]>;
  readUsage(from: string, toExclusive: string): Promise<UsageCell[]>;
  readBilled(from: string, toExclusive: string): Promise<BilledDay[]>;
  /** Keys known from earlier syncs whose activity is read too (a key deleted since is no longer listed). */
  readAlso(keyIds: readonly string[]): void;
}

const tokens = (value: unknown, field: string): number => {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new ProviderBadResponse(`An activity row's ${field} is not a count.`);
  return value;
};

const dollars = (value: unknown, field: string): bigint => {
  if (value === undefined || value === null) return 0n;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ProviderBadResponse(`${field} is not an amount in dollars.`);
  return dollarsToPicos(value);
};

/** `base`: `https://openrouter.ai`, with or without `/api/v1`. `now` only decides which UTC day is today. */
export function openRouterClient(base: string, managementKey: string, options: ProviderHttpOptions & { now?: () => Date } = {}): OpenRouterClient {
  const api = `${base.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}/api/v1`;
  const http = providerHttp(api, { authorization: `Bearer ${managementKey}` }, managementKey, options);
  const url = (path: string, params: [string, string][] = []) => {
    const u = new URL(`${api}${path}`);
    for (const [k, v] of params) u.searchParams.append(k, v);
    return u;
  };
  const today = () => isoDate(options.now?.() ?? new Date());

  // One client serves one sync: the inventory and each key's activity are read once, whatever the slices.
  let inventory: Promise<OpenRouterKey[]> | undefined;
  let also: readonly string[] = [];
  const activity = new Map<string, Promise<ActivityRow[]>>();

  /** Every key, page by page (`offset`), within the bounds of pages.ts: a `/keys` that ignores `offset` is an error. */
  async function readInventory(): Promise<OpenRouterKey[]> {
    return readPages<OpenRouterKey>(
      '/api/v1/keys',
      async (offset) => {
        const body = (await http.getJson(url('/keys', [['include_disabled', 'true'], ['offset', offset ?? '0']]))) as { data?: unknown };
        if (!Array.isArray(body.data)) throw new ProviderBadResponse('OpenRouter answered /keys without a data list.');
        for (const k of body.data as OpenRouterKey[]) {
          if (typeof k?.hash !== 'string' || !k.hash) throw new ProviderBadResponse('OpenRouter listed a key without a hash.');
        }
        const next = Number(offset ?? '0') + OPENROUTER_KEYS_PAGE;
        return { items: body.data as OpenRouterKey[], next: body.data.length < OPENROUTER_KEYS_PAGE ? undefined : String(next) };
      },
      { idOf: (k) => k.hash },
    );
  }
  const keysOnce = () => (inventory ??= readInventory());

  /** Every activity row of the last 30 completed days: of one key, or (`null`) of the whole account. */
  function activityOf(hash: string | null): Promise<ActivityRow[]> {
    const id = hash ?? '';
    let rows = activity.get(id);
    if (!rows) {
      rows = http.getJson(url('/activity', hash ? [['api_key_hash', hash]] : [])).then((body) => {
        const data = (body as { data?: unknown }).data;
        if (!Array.isArray(data)) throw new ProviderBadResponse('OpenRouter answered /activity without a data list.');
        if (data.length > MAX_LIST_ITEMS) throw new ProviderLimitExceeded('items', `The provider's /api/v1/activity has more than ${MAX_LIST_ITEMS.toLocaleString('en-US')} items, the most Burnrate reads of one list.`);
        return data as ActivityRow[];
      });
      activity.set(id, rows);
    }
    return rows;
  }

  return {
    provider: 'openrouter',
    async check() {
      await http.getJson(url('/keys', [['include_disabled', 'true']]));
    },
    async listKeys() {
      return (await keysOnce()).map(
        (k): ProviderKey => ({
          id: k.hash,
          name: typeof k.name === 'string' && k.name ? k.name : null,
          redactedValue: typeof k.label === 'string' && k.label ? k.label : null,
          project: null,
          status: k.disabled === true ? 'inactive' : 'active',
          limitUsd: typeof k.limit === 'number' ? k.limit : null,
        }),
      );
    },
    async readUsage(from, toExclusive) {
      const day = today();
      const first = from > openRouterOldestDay(day) ? from : openRouterOldestDay(day);
      const last = toExclusive < day ? toExclusive : day; // exclusive: completed days only
      const keys = await keysOnce();
      // Sums per (day, key, model) across provider endpoints, money in 10^-14 $ until the end.
      const cells = new Map<string, UsageCell & { picos: bigint }>();
      const add = (date: string, keyId: string, model: string, requests: number, input: number, output: number, picos: bigint) => {
        const id = `${date}|${keyId}|${model}`;
        let cell = cells.get(id);
        if (!cell) {
          cell = { date, keyId, model, tier: 'standard', projectId: null, requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: 0, webSearchRequests: 0, quantity: 0, picos: 0n };
          cells.set(id, cell);
        }
        cell.requests += requests;
        cell.inputTokens += input;
        cell.outputTokens += output;
        cell.picos += picos;
      };
      if (first < last) {
        // A key that never spent has no activity: not asked for.
        const spent = keys.filter((k) => typeof k.usage !== 'number' || k.usage > 0).map((k) => k.hash);
        const listed = new Set(keys.map((k) => k.hash));
        const hashes = [...spent, ...also.filter((id) => !listed.has(id))];
        await inPool(hashes, CONCURRENCY, async (hash) => {
          for (const r of await activityOf(hash)) {
            if (typeof r.date !== 'string') throw new ProviderBadResponse('An activity row has no date.');
            const date = r.date.slice(0, 10);
            if (date < first || date >= last) continue;
            const model = typeof r.model === 'string' && r.model ? r.model.toLowerCase() : 'unknown';
            add(date, hash, model, tokens(r.requests, 'requests'), tokens(r.prompt_tokens, 'prompt_tokens'), tokens(r.completion_tokens, 'completion_tokens'), dollars(r.usage, 'usage'));
          }
        });
      }
      if (from <= day && day < toExclusive) {
        for (const k of keys) {
          const picos = dollars(k.usage_daily, 'usage_daily');
          if (picos !== 0n) add(day, k.hash, OPENROUTER_TODAY_MODEL, 0, 0, 0, picos);
        }
      }
      return [...cells.values()].map(({ picos, ...cell }) => ({ ...cell, reportedCostMicros: picosToMicros(picos) }));
    },
    async readBilled(from, toExclusive) {
      // The account's activity per day and model (every key's, deleted ones' too): what OpenRouter charges.
      const byDay = new Map<string, Map<string, bigint>>();
      for (const r of await activityOf(null)) {
        if (typeof r.date !== 'string') continue;
        const date = r.date.slice(0, 10);
        if (date < from || date >= toExclusive) continue;
        const model = typeof r.model === 'string' && r.model ? r.model.toLowerCase() : 'unknown';
        const models = byDay.get(date) ?? new Map<string, bigint>();
        byDay.set(date, models);
        models.set(model, (models.get(model) ?? 0n) + dollars(r.usage, 'usage'));
      }
      return [...byDay].map(
        ([date, models]): BilledDay => ({ date, rows: [...models].map(([model, picos]) => ({ date, keyId: null, projectId: null, line: model, model, picos })) }),
      );
    },
    readAlso(keyIds) {
      also = keyIds;
    },
  };
}
