/** The keys domain: list (search, filters, any sort), one key with its breakdown, labels. Money in µ$ inside, dollars out. */
import { listStates } from '#shared/db/enforcement.ts';
import { stoppedBy } from '#shared/enforcement/stopped-by.ts';
import type { LeverState } from '#shared/db/enforcement-model.ts';
import { NotFound, ValidationError } from '#shared/http/errors.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { breakdownRange, MAX_RANGE_DAYS } from '#shared/http/range.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { isQueryDate, MAX_QUERY_DATE, MIN_QUERY_DATE } from '#shared/http/dates.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { daysBetween, isoDate, isoMonth, parseDate } from '#shared/time/periods.ts';
import { rollingNames } from '#shared/db/rolling.ts';
import type { Item } from '#shared/db/client.ts';
import { readInt, readNumber } from '#shared/db/numbers.ts';
import * as repo from '#shared/db/discovered-keys.ts';
import { accountMonthKeys } from '#shared/db/spend.ts';
import { settledDays } from '#shared/db/settlement.ts';
import { keyForecastMonthEnd } from '#shared/usage/forecast.ts';
import { NOT_BY_MODEL } from '#shared/usage/names.ts';
import { effectiveTagsOf, tagMatches, tagsOf, type Tags } from '#shared/tags/tags.ts';
import { setKeyTags } from '#shared/tags/service.ts';
import type { KeyBreakdownQuery, KeySort, LabelBody, ListKeysQuery, SortOrder } from '#shared/keys/schemas.ts';

const HASH = /^[0-9a-f]{64}$/;

/** Counts as `number`s; money exactly, as `bigint` µ$ (shared/db/numbers.ts: a value of an unexpected kind throws). */
const num = (value: unknown): number => readNumber(value);
const micros = (value: unknown): bigint => readInt(value, 'an amount of micro-dollars');

/** The key's month-end forecast (shared/usage/forecast.ts) from its item's rolling counters, in µ$. */
export function keyForecast(item: Item, now: Date): bigint {
  const today = isoDate(now);
  const month = isoMonth(now);
  return keyForecastMonthEnd(item, today, { monthCost: rollingNames(today, month).monthCost, dayCost: (d) => rollingNames(d, month).dayCost }, micros);
}

/** Where a key's spend comes from: events sent to /ingest, or a provider connection (keys stored before say nothing: ingest). */
export const keySource = (item: Item): 'ingest' | 'connection' => (item.source === 'connection' ? 'connection' : 'ingest');

/** A key's figures of one month (`GET /keys?month=`), from the account's month × key items. */
interface MonthFigures {
  costMicros: bigint;
  requests: number;
}

/**
 * A key as the API shows it; `states`: the account's lever states (what stops it now: `stoppedBy`); `month`: the
 * figures of the month `GET /keys?month=` asked for (`spend.month`, `requests.month`).
 */
export function toKeyView(item: Item, now: Date, states: readonly LeverState[], month?: MonthFigures) {
  const r = rollingNames(isoDate(now), isoMonth(now));
  return {
    stoppedBy: stoppedByOf(item, states),
    hash: item.keyHash as string,
    source: keySource(item),
    label: (item.label as string | null | undefined) ?? null,
    hint: (item.hint as string | undefined) ?? null,
    provider: item.provider as string,
    // A connection's key carries its provider metadata (null for keys sent in events).
    name: typeof item.name === 'string' ? item.name : null,
    providerKeyId: typeof item.providerKeyId === 'string' ? item.providerKeyId : null,
    project: (item.project as { id: string; name: string } | null | undefined) ?? null,
    providerStatus: typeof item.providerStatus === 'string' ? (item.providerStatus as 'active' | 'inactive' | 'archived' | 'expired' | 'deleted') : null,
    // OpenRouter: the key's own credit limit in dollars as OpenRouter lists it (null: none, or another provider).
    providerLimitUsd: typeof item.providerLimitUsd === 'number' ? item.providerLimitUsd : null,
    firstSeenAt: item.firstSeenAt as string,
    lastSeenAt: item.lastSeenAt as string,
    spend: {
      today: microsToUsd(micros(item[r.dayCost])),
      monthToDate: microsToUsd(micros(item[r.monthCost])),
      total: microsToUsd(micros(item.totalCostMicros)),
      forecastMonthEnd: microsToUsd(keyForecast(item, now)),
      ...(month ? { month: microsToUsd(month.costMicros) } : {}),
    },
    requests: { today: num(item[r.dayRequests]), monthToDate: num(item[r.monthRequests]), total: num(item.totalRequests), ...(month ? { month: month.requests } : {}) },
    unpricedRequests: num(item.unpricedRequests),
    tracked: item.tracked !== false,
    /** The key's own tags, and its project's overlaid by them (docs/features/tags-and-chargeback.md). */
    tags: tagsOf(item.tags),
    effectiveTags: effectiveTagsOf(item),
  };
}

/** The position of a key in a sorted list: the sort value (µ$ as a decimal string, a timestamp or a name) and its hash. */
type Position = { v: string; h: string };
interface Ranked {
  item: Item;
  value: bigint | string;
  hash: string;
}

export { breakdownRange, MAX_RANGE_DAYS };

/** What `sort=name` orders by (docs/features/spend-and-exports.md): the label, else the provider's name, else the hint, else the hash — lower-cased. */
export function keySortName(item: Item): string {
  const present = (text: unknown): text is string => typeof text === 'string' && text.trim() !== '';
  const name = [item.label, item.name, item.hint].find(present) ?? (item.keyHash as string);
  return name.trim().toLowerCase();
}

/** Whether a key matches `q` (docs/features/spend-and-exports.md): a part of its label, provider name or hint (any case), or the start of its hash. */
export function keyMatches(item: Item, q: string): boolean {
  const needle = q.toLowerCase();
  const contains = (text: unknown) => typeof text === 'string' && text.toLowerCase().includes(needle);
  return contains(item.label) || contains(item.name) || contains(item.hint) || (item.keyHash as string).startsWith(needle);
}

/** The value each sort orders by: money as exact µ$, times and names as text. */
function sortValue(item: Item, sort: KeySort, now: Date, month?: ReadonlyMap<string, MonthFigures>): bigint | string {
  const r = rollingNames(isoDate(now), isoMonth(now));
  switch (sort) {
    case 'month':
      return month?.get(item.keyHash as string)?.costMicros ?? 0n;
    case 'monthToDate':
      return micros(item[r.monthCost]);
    case 'today':
      return micros(item[r.dayCost]);
    case 'total':
      return micros(item.totalCostMicros);
    case 'forecastMonthEnd':
      return keyForecast(item, now);
    case 'lastSeenAt':
      return item.lastSeenAt as string;
    case 'name':
      return keySortName(item);
  }
}

const cmp = <T extends bigint | string>(a: T, b: T) => (a < b ? -1 : a > b ? 1 : 0);

/** The list's order: the sort value in `order`, then the hash ascending (a total order, so a cursor is a position in it). */
const orderOf = (order: SortOrder) => (a: { value: bigint | string; hash: string }, b: { value: bigint | string; hash: string }) =>
  (order === 'asc' ? cmp(a.value, b.value) : cmp(b.value, a.value)) || cmp(a.hash, b.hash);

/** The cursor's position, checked: a 400 unless it is one this list's sort wrote. */
function cursorPosition(cursor: string, accountId: string, list: string, sort: KeySort): { value: bigint | string; hash: string } {
  const p = decodeCursor(cursor, accountId, list) as Partial<Position> | null;
  const numeric = sort !== 'name' && sort !== 'lastSeenAt';
  if (typeof p?.v !== 'string' || typeof p.h !== 'string' || (numeric && !/^-?\d{1,30}$/.test(p.v))) {
    throw new ValidationError('The cursor is not valid for this list.', [{ path: 'query.cursor', message: 'Invalid cursor.' }]);
  }
  return { value: numeric ? BigInt(p.v) : p.v, hash: p.h };
}

/**
 * GET /keys: the account's keys (at most 1,000: SCALE's key limit) read from the key index in one paged Query,
 * filtered and sorted in memory; `total` counts every match, and a cursor is a position in the chosen order.
 */
/** The holders stopping a key now (its switch, its reporter block, its project's cap once reached). */
function stoppedByOf(item: Item, states: readonly LeverState[]) {
  const project = item.project as { id?: unknown } | null | undefined;
  const projectOf = typeof item.connectionId === 'string' && typeof project?.id === 'string' ? { connectionId: item.connectionId, projectId: project.id } : null;
  return stoppedBy(item.keyHash as string, projectOf, states);
}

export async function listKeys(accountId: string, query: ListKeysQuery, now = new Date()) {
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (query.sort === 'month' && query.month === undefined) {
    throw new ValidationError('sort=month needs month.', [{ path: 'query.sort', message: 'Give month (YYYY-MM) with sort=month.' }]);
  }
  const sort = query.sort ?? (query.month !== undefined ? 'month' : 'monthToDate');
  // A month's figures per key: the account's month × key items of that month (ONE Query, beside the keys' Query).
  const monthRead = query.month !== undefined ? accountMonthKeys(accountId, query.month, query.month) : undefined;
  const order = query.order ?? (sort === 'name' ? 'asc' : 'desc');
  const provider = query.provider?.trim().toLowerCase();
  const list = `keys:${sort}:${order}${query.month ? `:${query.month}` : ''}`;
  const byOrder = orderOf(order);
  // What stops each key (API: `stoppedBy`): ONE Query of the account's lever states, read as the acts wrote them.
  const [keyItems, states, monthItems] = await Promise.all([repo.listProviderKeys(accountId), listStates(accountId, false), monthRead]);
  const month = monthItems
    ? new Map(monthItems.map((i): [string, MonthFigures] => [i.keyHash as string, { costMicros: micros(i.costMicros), requests: num(i.requests) }]))
    : undefined;
  const ranked: Ranked[] = keyItems
    .filter(
      (item) =>
        (!query.q || keyMatches(item, query.q)) &&
        (!provider || item.provider === provider) &&
        (!query.source || keySource(item) === query.source) &&
        (!query.tracked || (item.tracked !== false) === (query.tracked === 'true')) &&
        (query.projectId === undefined || (item.project as { id?: unknown } | null | undefined)?.id === query.projectId) &&
        (query.tag === undefined || tagMatches(effectiveTagsOf(item), query.tag)),
    )
    .map((item) => ({ item, value: sortValue(item, sort, now, month), hash: item.keyHash as string }))
    .sort(byOrder);
  let start = 0;
  if (query.cursor) {
    const after = cursorPosition(query.cursor, accountId, list, sort);
    start = ranked.findIndex((entry) => byOrder(after, entry) < 0);
    if (start < 0) start = ranked.length;
  }
  const page = ranked.slice(start, start + limit);
  const last = page.at(-1);
  return {
    items: page.map((entry) => toKeyView(entry.item, now, states, month ? (month.get(entry.hash) ?? { costMicros: 0n, requests: 0 }) : undefined)),
    nextCursor: last && start + limit < ranked.length ? encodeCursor(accountId, list, { v: String(last.value), h: last.hash } satisfies Position) : null,
    total: ranked.length,
  };
}


/** Sums of day × model items, exact (BigInt): a range's tokens can pass 2^53. */
interface Totals {
  costMicros: bigint;
  requests: bigint;
  inputTokens: bigint;
  cachedInputTokens: bigint;
  outputTokens: bigint;
}
const zero = (): Totals => ({ costMicros: 0n, requests: 0n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n });
function addItem(t: Totals, item: Item): void {
  t.costMicros += micros(item.costMicros);
  t.requests += readInt(item.requests, 'requests');
  t.inputTokens += readInt(item.inputTokens, 'inputTokens');
  t.cachedInputTokens += readInt(item.cachedInputTokens, 'cachedInputTokens');
  t.outputTokens += readInt(item.outputTokens, 'outputTokens');
}
const totalsView = (t: Totals) => ({
  costUsd: microsToUsd(t.costMicros),
  requests: Number(t.requests),
  inputTokens: Number(t.inputTokens),
  cachedInputTokens: Number(t.cachedInputTokens),
  outputTokens: Number(t.outputTokens),
});
const compare = (a: bigint, b: bigint) => (a > b ? 1 : a < b ? -1 : 0);

/** Day × model items → a zero-filled daily series and a per-model split (most spend first). Pure. */
export function breakdown(items: Item[], from: string, to: string, settled: ReadonlySet<string> = new Set()) {
  const daily = new Map(daysBetween(from, to).map((d) => [d, zero()]));
  const byModel = new Map<string, { provider: string; model: string; totals: Totals; unit?: string; quantity: bigint; correctionOf?: string }>();
  let notByModel = 0n;
  for (const item of items) {
    const day = daily.get(item.date as string);
    if (!day) continue;
    addItem(day, item);
    // A day its provider breaks down by model only once complete (OpenRouter's today): no model of its own.
    if (item.model === NOT_BY_MODEL) {
      notByModel += micros(item.costMicros);
      continue;
    }
    // A correction of a closed month's day (booked on the day it was found) is a row of its own.
    const correctionOf = typeof item.correctionOf === 'string' ? item.correctionOf : undefined;
    const id = `${item.provider as string}|${item.model as string}|${correctionOf ?? ''}`;
    if (!byModel.has(id)) byModel.set(id, { provider: item.provider as string, model: item.model as string, totals: zero(), quantity: 0n, ...(correctionOf ? { correctionOf } : {}) });
    const row = byModel.get(id)!;
    addItem(row.totals, item);
    // Units, not tokens (a connection's images, speech, storage, tool calls): the unit and how many.
    if (typeof item.unit === 'string') {
      row.unit = item.unit;
      row.quantity += readInt(item.quantity, 'quantity');
    }
  }
  return {
    from,
    to,
    daily: [...daily].map(([date, t]) => ({ date, settled: settled.has(date), ...totalsView(t) })),
    byModel: [...byModel.values()]
      .sort((a, b) => compare(b.totals.costMicros, a.totals.costMicros) || compare(b.totals.requests, a.totals.requests))
      .map(({ provider, model, totals, unit, quantity, correctionOf }) => ({
        provider,
        model,
        ...totalsView(totals),
        ...(unit === undefined ? {} : { unit, quantity: Number(quantity) }),
        ...(correctionOf === undefined ? {} : { correction: true as const, correctionOf }),
      })),
    notByModelUsd: microsToUsd(notByModel),
  };
}

export async function getKey(accountId: string, hash: string, query: KeyBreakdownQuery, now = new Date()) {
  const { from, to } = breakdownRange(query, now);
  if (!HASH.test(hash)) throw new NotFound('No such key.');
  const [item, days, states] = await Promise.all([repo.getProviderKey(accountId, hash), repo.keyDayModels(accountId, hash, from, to), listStates(accountId, false)]);
  if (!item) throw new NotFound('No such key.');
  // A connection's key: the days its provider's bill settled (ONE Query of the reconciliation days).
  const settled = keySource(item) === 'connection' ? await settledDays(accountId, item.provider as string, from, to) : new Set<string>();
  return { ...toKeyView(item, now, states), breakdown: breakdown(days, from, to, settled) };
}

/** PATCH /keys/{hash}: the label and/or the key's own tags (its effective tags follow). */
export async function labelKey(accountId: string, hash: string, body: LabelBody, now = new Date()) {
  if (!HASH.test(hash)) throw new NotFound('No such key.');
  const statesRead = listStates(accountId, false);
  let item: Item | undefined;
  if (body.label !== undefined) {
    item = await repo.setLabel(accountId, hash, body.label, now);
    if (!item) throw new NotFound('No such key.');
  }
  if (body.tags !== undefined) item = await setKeyTags(accountId, hash, body.tags as Tags, now);
  const states = await statesRead;
  if (!item) throw new NotFound('No such key.');
  return toKeyView(item, now, states);
}
