/**
 * Helpers for tests against the stack's stand-ins of the providers' admin APIs (local/openai-admin.ts,
 * local/anthropic-admin.ts). Each test file makes its own organization (`newStandInOrg`): its own admin key, clock,
 * faults and request counts, so files running side by side never disturb each other.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { syncConnection, type SyncResult } from '#shared/sync/all.ts';
import { normalizeTier, priceUsage, tierOf, unitCost, unitPriceFor } from '#shared/pricing/pricing.ts';
import { unitEndpointOf, unitModelName } from '#shared/usage/units.ts';
import { api, dynamo, pointAtStack, stack, type RegisteredUser } from './harness.ts';

export type Provider = 'openai' | 'anthropic' | 'openrouter';

export interface StandInOrg {
  provider: Provider;
  /** The stand-in's base URL (no /v1): what `OPENAI_ADMIN_URL` / `ANTHROPIC_ADMIN_URL` hold in the stack. */
  url: string;
  id: string;
  adminKey: string;
  /** First day of its seeded usage (YYYY-MM-DD): the first day of the previous UTC month. */
  importFrom: string;
  /** One call of its control API (`/_burnrate/orgs/<id>/<path>`). */
  control<T = any>(path: string, body?: unknown, method?: string): Promise<T>;
  /** A GET of the provider API with this organization's admin key (or `key`) and the required headers. */
  get(path: string, options?: { key?: string | null; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  state(): Promise<any>;
  remove(): Promise<void>;
}

export function standInUrl(provider: Provider): string {
  return provider === 'openai' ? stack().openaiAdmin.url : provider === 'openrouter' ? stack().openrouter.url : stack().anthropicAdmin.url;
}

/** The headers a real client sends with `key` (none when null). */
export function authHeaders(provider: Provider, key: string | null): Record<string, string> {
  if (key === null) return provider === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {};
  return provider === 'anthropic' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
}

/**
 * A new organization on the stack's stand-in: the seeded one (or `big`, or `empty`), its own admin key; `now` freezes
 * its clock (ISO or unix seconds), `late: null` turns late arrivals off.
 */
export async function newStandInOrg(
  provider: Provider,
  options: {
    big?: { keys: number; models: number; days: number; requests?: number };
    now?: string | number;
    late?: { share: number; hours: number } | null;
    /** Another seed: another organization (its own project / workspace and key ids, Anthropic organization id). */
    seed?: string;
    /** An organization with nothing in it: no projects or workspaces, no keys, no usage. */
    empty?: boolean;
    /**
     * A short history: seeded usage only on the last N days (today counted); keys and projects as seeded. Its first
     * sync imports those days instead of the seed's ~2 months: for tests whose scenario needs no older usage.
     */
    historyDays?: number;
  } = {},
): Promise<StandInOrg> {
  const url = standInUrl(provider);
  const res = await fetch(`${url}/_burnrate/orgs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(options) });
  if (res.status !== 201) throw new Error(`POST /_burnrate/orgs: ${res.status} ${await res.text()}`);
  const state = (await res.json()) as { id: string; adminKey: string; importFrom: string };
  const org: StandInOrg = {
    provider,
    url,
    id: state.id,
    adminKey: state.adminKey,
    importFrom: state.importFrom,
    async control(path, body, method) {
      const r = await fetch(`${url}/_burnrate/orgs/${state.id}${path}`, {
        method: method ?? (body === undefined ? 'GET' : 'POST'),
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`${path}: ${r.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as never;
    },
    async get(path, opts = {}) {
      const key = opts.key === undefined ? org.adminKey : opts.key;
      const r = await fetch(`${url}${path}`, { headers: { ...authHeaders(provider, key), ...opts.headers } });
      const text = await r.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the text
      }
      return { status: r.status, headers: r.headers, body };
    },
    state: () => org.control('/state'),
    async remove() {
      await fetch(`${url}/_burnrate/orgs/${state.id}`, { method: 'DELETE' });
    },
  };
  return org;
}

/** Counts and cost of one (key hash, day, model) cell. */
export interface PricedCell {
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  costMicros: bigint;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** A connection key's hash: SHA-256 of `<provider>:<key id>` (`unattributed` for usage without a key). */
export const keyHash = (provider: Provider, keyId: string | null) => sha256(`${provider}:${keyId ?? 'unattributed'}`);

/**
 * The stand-in's truth (`GET /_burnrate/truth`, its `cells`) per (key hash, day, model), counted as Burnrate counts a
 * provider's rows and priced by the built-in table row by row, as the provider reports them.
 */
export function pricedTruth(provider: Provider, t: { cells: Record<string, any>[] }): Map<string, PricedCell> {
  const out = new Map<string, PricedCell>();
  const rows = new Map<string, { model: string; requests: number; inputTokens: number; cachedInputTokens: number; cacheWriteInputTokens: number; cacheWrite1hInputTokens: number; outputTokens: number; webSearchRequests: number }>();
  // OpenAI usage beyond tokens: a row per (day, key, endpoint:model), its quantity priced per unit from the table.
  const units = new Map<string, { item: string; model: string | null; requests: number; quantity: number }>();
  const QUANTITY: Record<string, string> = { images: 'images', audio_speeches: 'characters', audio_transcriptions: 'seconds', moderations: 'requests', vector_stores: 'bytes', code_interpreter_sessions: 'sessions', web_search_calls: 'calls', file_search_calls: 'calls' };
  for (const c of t.cells as Record<string, any>[]) {
    const endpoint = provider === 'openai' ? unitEndpointOf(c.kind) : undefined;
    if (!endpoint) continue;
    const model = c.model ? String(c.model).toLowerCase() : null;
    const id = `${keyHash(provider, c.apiKeyId)}|${c.date}|${unitModelName(c.kind, model)}`;
    const row = units.get(id) ?? { item: endpoint.item, model, requests: 0, quantity: 0 };
    row.requests += endpoint.requests ? (c.requests ?? 0) : 0;
    row.quantity += c[QUANTITY[c.kind]!] ?? 0;
    units.set(id, row);
  }
  for (const [id, row] of units) {
    const costMicros = BigInt(unitCost(row.quantity, unitPriceFor(provider, row.item, row.model)).costMicros);
    if (row.requests === 0 && costMicros === 0n) continue;
    out.set(id, { requests: row.requests, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costMicros });
  }
  for (const c of t.cells as Record<string, any>[]) {
    if (provider === 'openai' && unitEndpointOf(c.kind)) continue;
    const model = String(c.model).toLowerCase();
    const counts =
      provider === 'anthropic'
        ? {
            requests: 0,
            inputTokens: c.uncached + c.cacheRead + c.cache5m + c.cache1h,
            cachedInputTokens: c.cacheRead,
            cacheWriteInputTokens: c.cache5m,
            cacheWrite1hInputTokens: c.cache1h,
            outputTokens: c.output,
            webSearchRequests: c.webSearch ?? 0,
          }
        : c.kind === 'embeddings'
          ? { requests: c.requests, inputTokens: c.input, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: 0 }
          : {
              requests: c.requests,
              inputTokens: c.uncached + c.cached + c.cacheWrite,
              cachedInputTokens: c.cached,
              cacheWriteInputTokens: c.cacheWrite,
              cacheWrite1hInputTokens: 0,
              outputTokens: c.output,
            };
    // One provider row per (day, key, model, tier as grouped): OpenAI by batch and service tier (batch rows say
    // service_tier "default"), embeddings apart; Anthropic by service tier and context window (`200k-1M`: billed at
    // the model's long-context rates). Rows are priced as the provider reports them.
    const tier = provider === 'anthropic' ? c.tier : c.kind === 'embeddings' ? 'embeddings' : tierOf({ batch: c.tier === 'batch', service_tier: c.tier });
    const window = provider === 'anthropic' && c.contextWindow === '200k-1M' ? 'long' : 'standard';
    const rowId = `${keyHash(provider, c.apiKeyId)}|${c.date}|${model}|${tier}|${window}`;
    const row = rows.get(rowId) ?? { model, requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: 0, webSearchRequests: 0 };
    for (const [f, v] of Object.entries(counts)) (row as unknown as Record<string, number>)[f] = (row as unknown as Record<string, number>)[f]! + (v as number);
    rows.set(rowId, row);
  }
  for (const [rowId, row] of rows) {
    if ([row.requests, row.inputTokens, row.outputTokens].every((v) => v === 0)) continue;
    const [hash, date, , tier, window] = rowId.split('|');
    // A row sums a day of calls (never one long call): its window says which rates apply, not its summed input.
    const cost = BigInt(priceUsage({ provider, ...row, tier: normalizeTier(tier), longContext: window === 'long' }).costMicros);
    const id = `${hash}|${date}|${row.model}`;
    const cell = out.get(id) ?? { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costMicros: 0n };
    cell.requests += row.requests;
    cell.inputTokens += row.inputTokens;
    cell.cachedInputTokens += row.cachedInputTokens;
    cell.outputTokens += row.outputTokens;
    cell.costMicros += cost;
    out.set(id, cell);
  }
  return out;
}

/** Points this process (the in-process sync and levers) at the stack, its connections key and all three stand-ins. */
export async function pointAtStandIns(): Promise<() => void> {
  return pointAtStack({
    CONNECTIONS_LOCAL_KEY: (await readFile(stack().connectionsKeyFile, 'utf8')).trim(),
    OPENAI_ADMIN_URL: stack().openaiAdmin.url,
    ANTHROPIC_ADMIN_URL: stack().anthropicAdmin.url,
    OPENROUTER_URL: stack().openrouter.url,
  });
}

/**
 * A file's stand-ins: points this process at them for the file (its beforeAll) and removes the organizations the file
 * made, then undoes the environment (its afterAll). Returns the list a test adds its organizations to (`orgs` of
 * `connectStandIn`).
 */
export function standInsForFile(): StandInOrg[] {
  const orgs: StandInOrg[] = [];
  let restore: (() => void) | undefined;
  beforeAll(async () => {
    restore = await pointAtStandIns();
  });
  afterAll(async () => {
    await Promise.all(orgs.map((o) => o.remove()));
    restore?.();
  });
  return orgs;
}

/**
 * One sync of a connection at `now`, waiting while another holds its lease (the one `POST /connections` started, or
 * the one a budget's change queued, say). The stack's own sync takes a few hundred milliseconds: asked again every
 * 25 ms (a busy attempt is one conditional write), the wait ends right after it, for up to 30 s.
 */
export async function syncWhenFree(accountId: string, connectionId: string, now: Date): Promise<SyncResult> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const result = await syncConnection(accountId, connectionId, { budgetMs: 600_000, http: { backoffMs: 20 }, now, whenBusy: 'skip' });
    if (result.status !== 'busy') return result;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the lease was never free');
}

/**
 * Waits until the syncs the stack's own worker ran for a connection from `since` (real time) on are over: one of them
 * finished (its `lastSyncAt` at or after `since`) and no sync holds the lease, on two reads 100 ms apart (a sync asked
 * for while another ran is queued as that one releases the lease).
 */
export async function stackSyncsDone(user: RegisteredUser, connectionId: string, since: Date, timeoutMs = 30_000): Promise<void> {
  const quiet = async () => {
    const conn = await api(`/connections/${connectionId}`, { token: user.token });
    if (!(conn.body.lastSyncAt >= since.toISOString())) return false;
    const lease = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.connectionLease(user.accountId, connectionId), ConsistentRead: true }));
    return lease.Item === undefined;
  };
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await quiet()) && (await new Promise((r) => setTimeout(r, 100)), await quiet())) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the stack's syncs of ${connectionId} did not settle within ${timeoutMs} ms`);
}

/**
 * A new stand-in organization (its clock frozen at `now`, no late arrivals) connected for `user` and synced once, with
 * enforcement turned on unless `enforcement: 'off'`. Turning it on queues a sync on the stack's own worker: `settled`
 * waits until that one is over too (for a test that next writes items behind the API's back). The organization joins
 * `orgs`, for the file's afterAll to remove.
 */
export async function connectStandIn(
  user: RegisteredUser,
  provider: Provider,
  options: { now: Date; orgs: StandInOrg[]; enforcement?: 'on' | 'off'; historyDays?: number; settled?: boolean },
): Promise<{ org: StandInOrg; connectionId: string }> {
  const org = await newStandInOrg(provider, { now: options.now.toISOString(), late: null, ...(options.historyDays === undefined ? {} : { historyDays: options.historyDays }) });
  options.orgs.push(org);
  const res = await api('/connections', { method: 'POST', token: user.token, body: { provider, adminKey: org.adminKey } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.enforcement).toBe('off');
  await syncWhenFree(user.accountId, res.body.id, options.now);
  if (options.enforcement !== 'off') {
    const askedAt = new Date();
    expect((await api(`/connections/${res.body.id}`, { method: 'PATCH', token: user.token, body: { enforcement: 'on' } })).status).toBe(200);
    if (options.settled) await stackSyncsDone(user, res.body.id, askedAt);
  }
  return { org, connectionId: res.body.id };
}
