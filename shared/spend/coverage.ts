/**
 * Coverage (docs/features/spend-and-exports.md): whether the figures of a range are whole, and
 * if not, why — derived, never stored as a second truth: from the connections (their backfill, status, the keys
 * and requests their last sync held back at a plan limit), the account's plan, the unpriced counters of the days
 * asked, and which days the providers' bills have settled. `complete` is false when a note other than `estimated`
 * applies. Reads: ONE Query of the account partition (the account item and its connections, each of which keeps
 * the days its provider has not billed yet); the unpriced requests come from the aggregates the answer read.
 * Notes answer for the filters asked (coverageScope): a connection's notes only where its keys can be in the answer.
 */
import type { Item } from '#shared/db/client.ts';
import { toAccount } from '#shared/db/accounts.ts';
import { getProviderKey, listProviderKeys } from '#shared/db/discovered-keys.ts';
import { accountWithConnections, type Connection } from '#shared/db/connections.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { providerName } from '#shared/connections/alerts.ts';
import { addDays, daysBetween, isoDate } from '#shared/time/periods.ts';
import { OPENROUTER_HISTORY_DAYS } from '#shared/connections/model.ts';

export type CoverageCode = 'plan_customer_limit' | 'plan_key_limit' | 'plan_request_limit' | 'sync_pending' | 'sync_failing' | 'unpriced' | 'estimated' | 'history_unavailable';

export interface CoverageNote {
  code: CoverageCode;
  message: string;
  provider?: string;
  from?: string;
  to?: string;
  count?: number;
}

export interface Coverage {
  complete: boolean;
  notes: CoverageNote[];
}

const PLAN_NAMES: Record<string, string> = { FREE: 'Free', GROWTH: 'Growth', SCALE: 'Scale' };
const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
const max = (a: string, b: string) => (a > b ? a : b);
const min = (a: string, b: string) => (a < b ? a : b);

/** The days a connection still has to import: its first sync's, or a backfill under way (null: none). */
export function pendingDays(c: Pick<Connection, 'cursor' | 'backfillTo' | 'lastSuccessAt' | 'importedFrom'>, today: string): [string, string] | null {
  if (c.lastSuccessAt === null) return c.backfillTo ? [c.cursor ?? c.importedFrom, c.backfillTo] : [c.importedFrom, today];
  if (c.cursor !== null && c.backfillTo) return [c.cursor, c.backfillTo];
  return null;
}

/**
 * What a filtered answer covers, for its notes (docs/features/spend-and-exports.md: `coverage` answers for the filters asked): a note of a
 * connection applies only when that connection can hold spend the answer counts. Built from the filters by
 * `coverageScope`; `undefined` fields don't narrow. Other notes (history a provider no longer holds, plan limits of
 * customers) plug in the same way: `connectionInScope` for a connection's note, `scope.keyHashes` for a key's; a new filter passes `keeps` (keys) or `eventsOnly` to coverageScope.
 */
export interface CoverageScope {
  /** Only connections of these providers (a `provider` filter). */
  providers?: ReadonlySet<string>;
  /**
   * Only these connections: those the kept keys came from (a `keyHash`, `projectId` or `tagFilter` filter). Empty when
   * the kept keys report through `/ingest` only (a `customer`, a key of events, a project without keys): no
   * connection's note applies then.
   */
  connectionIds?: ReadonlySet<string>;
  /**
   * The kept keys, when a filter names keys: a connection's keys past the plan's key limit matter only when they are
   * among them (their spend is missing from the answer). Undefined: every key of the connections in scope.
   */
  keyHashes?: ReadonlySet<string>;
}

/** Whether a connection's notes apply to an answer of this scope. */
export function connectionInScope(c: Pick<Connection, 'id' | 'provider'>, scope: CoverageScope | undefined): boolean {
  if (!scope) return true;
  if (scope.providers && !scope.providers.has(c.provider)) return false;
  return !scope.connectionIds || scope.connectionIds.has(c.id);
}

/**
 * The scope of the keys a filter keeps (key items of the key index: `source`, `connectionId`, `provider`, `tracked`):
 * the connections they came from and the keys themselves.
 */
export function scopeOfKeys(keys: Iterable<{ keyHash?: unknown; source?: unknown; connectionId?: unknown }>, base: CoverageScope = {}): CoverageScope {
  const connectionIds = new Set<string>();
  const keyHashes = new Set<string>();
  for (const k of keys) {
    if (typeof k.keyHash === 'string') keyHashes.add(k.keyHash);
    if (k.source === 'connection' && typeof k.connectionId === 'string') connectionIds.add(k.connectionId);
  }
  return { ...base, connectionIds, keyHashes };
}

/** The filters of an answer, as coverageScope reads them. */
export interface ScopeFilters {
  provider?: string;
  keyHash?: string;
  projectId?: string;
  /** Another filter that keeps keys (a tag): whether it keeps this key item (the key index is read once for it). */
  keeps?: (key: Item) => boolean;
  /** A filter of events only (a customer, a feature): their spend comes through `/ingest`, no connection's note applies. */
  eventsOnly?: boolean;
}

/**
 * The scope of an answer's filters (CoverageScope) and its keys past the key limit: without a filter that names keys,
 * none is read; a `keyHash` alone reads its key item (one GetItem); `projectId` or `keeps` read the key index (one Query).
 */
export async function coverageScope(accountId: string, filters: ScopeFilters): Promise<Pick<CoverageInput, 'scope' | 'untrackedInScope'>> {
  const providers = filters.provider === undefined ? undefined : new Set([filters.provider]);
  const base: CoverageScope = providers ? { providers } : {};
  if (filters.eventsOnly) return { scope: { ...base, connectionIds: new Set(), keyHashes: new Set() } };
  if (filters.keyHash === undefined && filters.projectId === undefined && filters.keeps === undefined) return providers ? { scope: base } : {};
  const index = filters.projectId === undefined && filters.keeps === undefined ? [await getProviderKey(accountId, filters.keyHash!)].filter((k): k is Item => k !== undefined) : await listProviderKeys(accountId);
  const kept = index.filter(
    (k) =>
      (filters.keyHash === undefined || k.keyHash === filters.keyHash) &&
      (filters.projectId === undefined || (k.project as { id?: unknown } | null | undefined)?.id === filters.projectId) &&
      (filters.keeps === undefined || filters.keeps(k)),
  );
  const untrackedInScope = new Map<string, number>();
  for (const k of kept) {
    if (k.tracked === false && typeof k.connectionId === 'string') untrackedInScope.set(k.connectionId, (untrackedInScope.get(k.connectionId) ?? 0) + 1);
  }
  return { scope: scopeOfKeys(kept, base), untrackedInScope };
}

export interface CoverageInput {
  from: string;
  to: string;
  /** A provider filter (the same as `scope.providers` of one provider). */
  provider?: string;
  /** What the answer's filters keep (coverageScope); none: the whole account. */
  scope?: CoverageScope;
  /** Keys of the scope that are past the plan's key limit (`tracked: false`), per connection id (with `scope.keyHashes`). */
  untrackedInScope?: ReadonlyMap<string, number>;
  /** Requests of models without a price in the range and filters asked (from the aggregates the answer read). */
  unpricedRequests: bigint;
  /** `compare=previous`: the previous range, whose `history_unavailable` notes come back as `previousNotes`. */
  previous?: { from: string; to: string };
}

/** Whether a connection's day is settled: imported, past, not pending, billed (not in its unsettled days). */
export function isSettled(c: Pick<Connection, 'cursor' | 'backfillTo' | 'lastSuccessAt' | 'importedFrom' | 'unsettledDays'>, date: string, today: string): boolean {
  if (date < c.importedFrom || date >= today) return false;
  const pending = pendingDays(c, today);
  if (pending && date >= pending[0] && date <= pending[1]) return false;
  return !(c.unsettledDays ?? []).includes(date);
}

/**
 * `history_unavailable` of one connection: the days of the range before the first day it could import (its
 * `importedFrom`; OpenRouter keeps 30 days of activity), which no figure holds: unknown, never "nothing spent".
 */
export function historyUnavailable(c: Pick<Connection, 'provider' | 'importedFrom'>, from: string, to: string): CoverageNote | undefined {
  if (from >= c.importedFrom) return undefined;
  const last = min(addDays(c.importedFrom, -1), to);
  const name = providerName(c.provider);
  const days = from === last ? from : `${from} to ${last}`;
  const why =
    c.provider === 'openrouter'
      ? `OpenRouter keeps only the last ${OPENROUTER_HISTORY_DAYS} days of activity, and the connection could import from ${c.importedFrom}`
      : `the connection imports from ${c.importedFrom}`;
  return {
    code: 'history_unavailable',
    provider: c.provider,
    from,
    to: last,
    message: `${name}: ${days} could not be imported (${why}): what was spent then is unknown, not $0.`,
  };
}

/** The notes of one range (pure but for the reads named above); `settled` per day for groupBy=day. */
export async function coverageOf(accountId: string, input: CoverageInput, now = new Date()): Promise<Coverage & { settled: Set<string>; previousNotes: CoverageNote[] }> {
  const today = isoDate(now);
  const { account: accountItem, connections } = await accountWithConnections(accountId);
  const account = accountItem ? toAccount(accountItem) : undefined;
  // A provider filter narrows whatever else the scope says.
  const scope: CoverageScope | undefined =
    input.provider === undefined ? input.scope : { ...input.scope, providers: new Set(input.scope?.providers && !input.scope.providers.has(input.provider) ? [] : [input.provider]) };
  const inScope = connections.filter((c) => connectionInScope(c, scope));
  const notes: CoverageNote[] = [];
  const plan = PLAN_NAMES[account?.plan ?? 'FREE'] ?? account?.plan ?? 'Free';
  const limits = account ? limitsInForce(account, now) : undefined;
  const range = daysBetween(input.from, input.to);
  const settledSets = inScope.map((c) => new Set(range.filter((d) => isSettled(c, d, today))));
  for (const [i, c] of inScope.entries()) {
    const name = providerName(c.provider);
    // A filter that names keys: only its own keys past the limit are missing from its figures.
    const untracked = scope?.keyHashes ? (input.untrackedInScope?.get(c.id) ?? 0) : (c.untrackedKeys ?? 0);
    if (untracked > 0) {
      const n = untracked;
      notes.push({
        code: 'plan_key_limit',
        provider: c.provider,
        count: n,
        message: `${plural(n, `${name} key is`, `${name} keys are`)} not tracked on the ${plan} plan (${plural(limits?.keys ?? 0, 'key', 'keys')} at most): their spend is not in these figures. Upgrade to track them; their history is imported with the next sync.`,
      });
    }
    const heldTo = c.requestsHeldTo ?? input.to;
    if (c.requestsHeldFrom && c.requestsHeldFrom <= input.to && heldTo >= input.from) {
      const [from, to] = [max(c.requestsHeldFrom, input.from), min(heldTo, input.to)];
      notes.push({
        code: 'plan_request_limit',
        provider: c.provider,
        from,
        to,
        message: `Some ${name} requests and tokens ${from === to ? `of ${from}` : `between ${from} and ${to}`} are not imported: the ${plan} plan's ${(limits?.trackedRequests ?? 0).toLocaleString('en-US')} tracked requests of this period went to the newer requests first. Days ${name} has billed still show their billed spend. Upgrade to import the rest.`,
      });
    }
    const history = historyUnavailable(c, input.from, input.to);
    if (history) notes.push(history);
    const pending = pendingDays(c, today);
    if (pending && pending[0] <= input.to && pending[1] >= input.from) {
      notes.push({
        code: 'sync_pending',
        provider: c.provider,
        from: max(pending[0], input.from),
        to: min(pending[1], input.to),
        message: `${name} is still being imported: ${max(pending[0], input.from)} to ${min(pending[1], input.to)} ${pending[0] === pending[1] ? 'is' : 'are'} not in these figures yet. They fill in over the next minutes.`,
      });
    }
    if (c.status === 'error') {
      notes.push({
        code: 'sync_failing',
        provider: c.provider,
        ...(c.lastSuccessAt ? { from: c.lastSuccessAt.slice(0, 10) } : {}),
        message: `${name} cannot be synced (${c.statusDetail ?? 'the provider refused the admin key'}). Figures after ${c.lastSuccessAt ? c.lastSuccessAt.slice(0, 16).replace('T', ' ') + ' UTC' : 'the connection was made'} are missing until it is fixed under Connections.`,
      });
    }
    // Days of the range the provider has not billed yet (today always): their spend is the token estimate.
    const imported = daysBetween(max(input.from, c.importedFrom), min(input.to, today)).filter((d) => d >= c.importedFrom);
    const open = imported.filter((d) => !settledSets[i]!.has(d));
    if (open.length > 0) {
      notes.push({
        code: 'estimated',
        provider: c.provider,
        from: open[0]!,
        to: open.at(-1)!,
        count: open.length,
        message: `${name}: ${plural(open.length, 'day', 'days')} (${open[0] === open.at(-1) ? open[0] : `${open[0]} to ${open.at(-1)}`}) ${open.length === 1 ? 'is' : 'are'} an estimate from tokens and the price table until ${name} bills ${open.length === 1 ? 'it' : 'them'}.`,
      });
    }
  }
  const unpriced = input.unpricedRequests;
  if (unpriced > 0n) {
    notes.push({
      code: 'unpriced',
      count: Number(unpriced),
      message: `${plural(Number(unpriced), 'request', 'requests')} used a model without a price and count $0 until the provider's bill settles the day or you set a price under Prices.`,
    });
  }
  // A day is settled when every connection in scope has its bill (and there is one).
  const settled = new Set<string>();
  if (inScope.length > 0) for (const d of range) if (settledSets.every((s) => s.has(d))) settled.add(d);
  const previousNotes = input.previous ? inScope.flatMap((c) => historyUnavailable(c, input.previous!.from, input.previous!.to) ?? []) : [];
  return { complete: notes.every((n) => n.code === 'estimated'), notes, settled, previousNotes };
}
