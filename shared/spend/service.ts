/**
 * GET /spend: the account's spend of a range grouped by day, model, provider or key, with totals and the month-end
 * forecast. Each grouping reads the aggregates written for it by ingestion (docs/performance.md "Spend reads" gives
 * the cost).
 */
import { breakdownRange } from '#shared/keys/service.ts';
import type { Item } from '#shared/db/client.ts';
import { readInt } from '#shared/db/numbers.ts';
import * as repo from '#shared/db/spend.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { addDays, daysBetween, isoDate, previousMonth } from '#shared/time/periods.ts';
import { ValidationError } from '#shared/http/errors.ts';
import { daysInMonth, FORECAST_METHOD, forecastMonthEnd } from '#shared/usage/forecast.ts';
import { addItem, addTotals, byCost, totalsView, zero, type Totals } from '#shared/spend/sums.ts';
import type { CustomersQuery, GroupBy, SpendQuery } from '#shared/spend/schemas.ts';
import { keyDayModels, listProviderKeys } from '#shared/db/discovered-keys.ts';
import { coverageOf, coverageScope } from '#shared/spend/coverage.ts';
import { projectSpend } from '#shared/spend/projects.ts';
import { nameSpend, listCustomers } from '#shared/spend/customers.ts';
import type { CoverageNote } from '#shared/spend/coverage.ts';
import { effectiveTagsOf, tagMatches } from '#shared/tags/tags.ts';
import { shownModel } from '#shared/usage/names.ts';

export const TOP_KEYS = 100;
/** Ingestion accepts timestamps up to 5 minutes ahead: no aggregate holds a day after isoDate(now + 5 min). */
const LATEST_DAY_MS = 5 * 60 * 1000;

const micros = (v: unknown) => readInt(v, 'an amount of micro-dollars');

/** The month-end forecast of the account from its figures (shared/usage/forecast.ts). */
export function accountForecast(figures: repo.ForecastFigures, today: string): bigint {
  const createdAt = figures.account?.createdAt;
  return forecastMonthEnd({
    today,
    monthToDate: micros(figures.month?.costMicros),
    daySpend: (date) => micros(figures.days.get(date)?.costMicros),
    ...(typeof createdAt === 'string' ? { since: createdAt.slice(0, 10) } : {}),
  });
}

/**
 * How groupBy=key reads a range (pure): the months it covers whole from the month × key items (one Query of a
 * contiguous run), the rest day by day from the day × key items (at most a head and a tail range). A month
 * counts as whole when the range starts on or before its 1st and ends on or after its last day — or after the
 * latest day any event can have (`latestDay`), so the current month to today is read as one month.
 */
export function keyReadPlan(from: string, to: string, latestDay: string): { months: [string, string] | null; dayRanges: [string, string][] } {
  const whole: string[] = [];
  const dayRanges: [string, string][] = [];
  for (let first = `${from.slice(0, 7)}-01`; first <= to; first = addDays(first, daysInMonth(first))) {
    const last = `${first.slice(0, 7)}-${String(daysInMonth(first)).padStart(2, '0')}`;
    if (from <= first && (to >= last || to >= latestDay)) whole.push(first.slice(0, 7));
    else dayRanges.push([from > first ? from : first, to < last ? to : last]);
  }
  return { months: whole.length > 0 ? [whole[0]!, whole.at(-1)!] : null, dayRanges };
}

type Group = { id: string; totals: Totals; fields: { provider: string; model: string } };

function grouped(items: Item[], idOf: (item: Item) => string, fieldsOf: (item: Item) => Group['fields']): Group[] {
  const groups = new Map<string, Group>();
  for (const item of items) {
    const id = idOf(item);
    if (!groups.has(id)) groups.set(id, { id, totals: zero(), fields: fieldsOf(item) });
    addItem(groups.get(id)!.totals, item);
  }
  return [...groups.values()].sort(byCost);
}

/** The answer's `total`, and the unpriced requests behind it (for the coverage note; not part of the answer). */
const totalOf = (t: Totals) => ({ total: totalsView(t), unpricedRequests: t.unpricedRequests });

const sumAll = (groups: { totals: Totals }[]) => {
  const total = zero();
  for (const g of groups) addTotals(total, g.totals);
  return total;
};

/**
 * GET /spend: the range's sums (filtered when asked), and with `compare=previous` the sums of the previous range.
 * `model` needs `provider` (a model name alone could be two providers' models).
 */
export async function getSpend(accountId: string, query: SpendQuery, now = new Date()) {
  const { from, to } = breakdownRange(query, now);
  const provider = query.provider?.trim().toLowerCase();
  // Project answers carry no unpriced count of their own (the unpriced note then speaks for the account's keys only where known).
  // Coverage answers for the filters asked: the connections whose keys the filters keep (read alongside the sums). A
  // filter that keeps keys (a tag) passes `keeps: (key) => …`; a filter of events only (a customer, a feature) passes
  // `eventsOnly: true` (shared/spend/coverage.ts coverageScope): customers and features come from events only
  // (shared/spend/customers.ts).
  const groupBy = query.groupBy ?? 'day';
  const named = groupBy === 'customer' || groupBy === 'feature' || query.customer !== undefined || query.feature !== undefined;
  if (named && ((query.customer !== undefined && groupBy !== 'customer') || (query.feature !== undefined && groupBy !== 'feature'))) {
    throw new ValidationError('customer= goes with groupBy=customer, feature= with groupBy=feature.', [
      { path: query.customer !== undefined ? 'query.customer' : 'query.feature', message: 'Customers and features are summed per month on their own: filter them with their own grouping.' },
    ]);
  }
  const tagFilter = query.tagFilter;
  const [spend, scope] = await Promise.all([
    named
      ? nameSpend(accountId, { groupBy: groupBy as 'customer' | 'feature', ...(query.customer !== undefined ? { customer: query.customer } : {}), ...(query.feature !== undefined ? { feature: query.feature } : {}) }, { from, to }, now, keyReadPlan)
      : spendOf(accountId, query, from, to, now).then((answer) => ({ answer, notes: [] as CoverageNote[] })),
    coverageScope(accountId, {
      ...(provider ? { provider } : {}),
      ...(query.keyHash !== undefined ? { keyHash: query.keyHash } : {}),
      ...(query.projectId !== undefined ? { projectId: query.projectId } : {}),
      ...(tagFilter !== undefined ? { keeps: (k: Item) => tagMatches(effectiveTagsOf(k), tagFilter) } : {}),
      ...(query.customer !== undefined || query.feature !== undefined ? { eventsOnly: true } : {}),
    }),
  ]);
  const extraNotes = spend.notes;
  const { unpricedRequests = 0n, ...answer } = spend.answer as Awaited<ReturnType<typeof spendOf>> & { unpricedRequests?: bigint };
  const previous = (answer as { previous?: { from: string; to: string } }).previous;
  const { settled, previousNotes, ...coverage } = await coverageOf(
    accountId,
    { from, to, unpricedRequests, ...scope, ...(previous ? { previous: { from: previous.from, to: previous.to } } : {}) },
    now,
  );
  if (extraNotes.length > 0) {
    coverage.notes.push(...extraNotes);
    coverage.complete = false;
  }
  // groupBy=day: each day says whether the providers' bills settled it.
  for (const g of answer.groups as { date?: string; settled?: boolean }[]) if (g.date !== undefined && query.groupBy !== 'project' && (query.groupBy ?? 'day') === 'day') g.settled = settled.has(g.date);
  // The previous range's days no connection could import: a comparison with them is no comparison (never "nothing spent").
  if (previous) Object.assign(previous, { notes: previousNotes });
  return { ...answer, coverage };
}

async function spendOf(accountId: string, query: SpendQuery, from: string, to: string, now: Date) {
  if (query.model !== undefined && query.provider === undefined) {
    throw new ValidationError('model filters need provider.', [{ path: 'query.model', message: 'Give provider with model (e.g. provider=openai&model=gpt-4o).' }]);
  }
  const filter = spendFilter(query);
  const groupBy = query.groupBy ?? 'day';
  if ((groupBy === 'tag') !== (query.tag !== undefined)) {
    throw new ValidationError('groupBy=tag needs tag=<name> (and tag= needs groupBy=tag).', [{ path: 'query.tag', message: groupBy === 'tag' ? 'Name the tag to group by (tag=team).' : 'tag is for groupBy=tag (filter with tagFilter=name:value).' }]);
  }
  if (query.shared !== undefined && groupBy !== 'tag') {
    throw new ValidationError('shared=allocate is for groupBy=tag.', [{ path: 'query.shared', message: 'shared=allocate needs groupBy=tag&tag=<name>.' }]);
  }
  const prev = query.compare === 'previous' ? previousRange(from, to) : undefined;
  if (groupBy === 'project' || groupBy === 'tag' || query.projectId !== undefined || query.tagFilter !== undefined) {
    const keyFilter = {
      ...spendFilter(query),
      ...(query.projectId !== undefined ? { projectId: query.projectId } : {}),
      ...(query.tagFilter !== undefined ? { tagFilter: query.tagFilter } : {}),
    };
    return projectSpend(accountId, keyFilter, { from, to }, groupBy, now, prev, {
      keyReadPlan,
      keyGroup,
      topKeys: TOP_KEYS,
      ...(query.tag !== undefined ? { tag: { name: query.tag, allocate: query.shared === 'allocate' } } : {}),
    });
  }
  if (filter) return filteredSpend(accountId, filter, { from, to }, groupBy, now, prev);
  // groupBy=day reads the account's days of the previous range in its own Query (they lie just before `from`).
  const [current, previous] = await Promise.all([
    accountSpend(accountId, prev && groupBy === 'day' ? prev.from : from, from, to, groupBy, now),
    prev && groupBy !== 'day' ? repo.accountDays(accountId, prev.from, prev.to) : undefined,
  ]);
  const { readDays, ...answer } = current as typeof current & { readDays?: Item[] };
  return prev ? { ...answer, previous: sumOf(previous ?? readDays ?? [], prev) } : answer;
}

/** `previous: {from, to, total}` from day items (of the account, or filtered day × model items): those in the range. */
function sumOf(items: Item[], range: { from: string; to: string }) {
  const total = zero();
  for (const item of items) if ((item.date as string) >= range.from && (item.date as string) <= range.to) addItem(total, item);
  return { ...range, total: totalsView(total) };
}

/** GET /spend without filters; groupBy=day reads its days from `readFrom` (≤ from: the previous range too) and hands them back. */
async function accountSpend(accountId: string, readFrom: string, from: string, to: string, groupBy: GroupBy, now: Date) {
  const today = isoDate(now);
  const withForecast = to.slice(0, 7) === today.slice(0, 7);
  const forecastOf = (figures: repo.ForecastFigures) => ({ monthEnd: microsToUsd(accountForecast(figures, today)), method: FORECAST_METHOD });

  if (groupBy === 'key') {
    const plan = keyReadPlan(from, to, isoDate(new Date(now.getTime() + LATEST_DAY_MS)));
    const reads = await Promise.all([
      plan.months ? repo.accountMonthKeys(accountId, ...plan.months) : [],
      ...plan.dayRanges.map(([f, t]) => repo.accountDayKeys(accountId, f, t)),
    ]);
    const groups = grouped(reads.flat(), (item) => item.keyHash as string, () => ({ provider: '', model: '' }));
    const top = groups.slice(0, TOP_KEYS);
    const figures = await repo.loadForecastFigures(accountId, today, top.map((g) => g.id));
    return {
      from,
      to,
      groupBy,
      ...totalOf(sumAll(groups)),
      groups: top.map((g) => keyGroup(g, figures.keyItems.get(g.id))),
      forecast: withForecast ? forecastOf(figures) : null,
    };
  }

  const figuresRead = withForecast ? repo.loadForecastFigures(accountId, today) : Promise.resolve(undefined);
  if (groupBy === 'day') {
    const [items, figures] = await Promise.all([repo.accountDays(accountId, readFrom, to), figuresRead]);
    const days = new Map(daysBetween(from, to).map((d) => [d, zero()]));
    for (const item of items) {
      const day = days.get(item.date as string);
      if (day) addItem(day, item);
    }
    return {
      from,
      to,
      groupBy,
      ...totalOf(sumAll([...days.values()].map((totals) => ({ totals })))),
      groups: [...days].map(([date, t]) => ({ date, settled: false, ...totalsView(t) })),
      forecast: figures ? forecastOf(figures) : null,
      readDays: items,
    };
  }

  const [items, figures] = await Promise.all([repo.accountDayModels(accountId, from, to), figuresRead]);
  const byModel = groupBy === 'model';
  const groups = grouped(items, (i) => (byModel ? `${i.provider as string}|${i.model as string}` : (i.provider as string)), (i) => ({
    provider: i.provider as string,
    model: i.model as string,
  }));
  return {
    from,
    to,
    groupBy,
    ...totalOf(sumAll(groups)),
    groups: groups.map((g) =>
      byModel ? { provider: g.fields.provider, model: shownModel(g.fields.model), ...totalsView(g.totals) } : { provider: g.fields.provider, ...totalsView(g.totals) },
    ),
    forecast: figures ? forecastOf(figures) : null,
  };
}

// ---- filters and the previous period (docs/features/spend-and-exports.md) -----------------------------------

export interface SpendFilter {
  provider?: string;
  model?: string;
  keyHash?: string;
}

/** The query's filters (provider and model lower-cased, as ingestion stores them), or undefined when there are none. */
function spendFilter(query: SpendQuery): SpendFilter | undefined {
  if (query.provider === undefined && query.keyHash === undefined) return undefined;
  return {
    ...(query.provider !== undefined ? { provider: query.provider.trim().toLowerCase() } : {}),
    ...(query.model !== undefined ? { model: query.model.trim().toLowerCase() } : {}),
    ...(query.keyHash !== undefined ? { keyHash: query.keyHash } : {}),
  };
}

const matches = (filter: SpendFilter) => (item: Item) =>
  (filter.provider === undefined || item.provider === filter.provider) && (filter.model === undefined || item.model === filter.model);

/**
 * The day × model items of a range that pass the filter, ONE Query: the key's own items with `keyHash`, else the
 * account's day × model items; provider and model are checked in memory (they are part of each item's sort key).
 */
async function filteredDayModels(accountId: string, filter: SpendFilter, from: string, to: string): Promise<Item[]> {
  const items = filter.keyHash ? await keyDayModels(accountId, filter.keyHash, from, to) : await repo.accountDayModels(accountId, from, to);
  return items.filter(matches(filter));
}

/**
 * The range before [from, to] that `compare=previous` sums: for a month from its 1st (to date, or whole) the same
 * days of the previous month (a whole month: the whole previous month; days past its end are dropped), else the
 * same number of days just before `from`. Pure.
 */
export function previousRange(from: string, to: string): { from: string; to: string } {
  if (from.endsWith('-01') && from.slice(0, 7) === to.slice(0, 7)) {
    const first = `${previousMonth(from.slice(0, 7))}-01`;
    const length = daysInMonth(first);
    const day = Number(to.slice(8, 10)) === daysInMonth(to) ? length : Math.min(Number(to.slice(8, 10)), length);
    return { from: first, to: `${first.slice(0, 8)}${String(day).padStart(2, '0')}` };
  }
  const days = daysBetween(from, to).length;
  return { from: addDays(from, -days), to: addDays(from, -1) };
}

const earliest = (...dates: (string | undefined)[]) => dates.filter((d): d is string => d !== undefined).sort()[0]!;
const latest = (...dates: string[]) => [...dates].sort().at(-1)!;

/**
 * GET /spend with filters. ONE Query of the filtered day × model items spans the range, the forecast's window (the
 * month to date and the 7 days before today) and the previous range, sliced in memory; with the BatchGetItem of the
 * forecast figures that is the whole answer for day, model and provider (and for key when a key is named).
 * groupBy=key of a provider reads the month × key and day × key aggregates and keeps that provider's keys (the key
 * index says each key's provider); of a model, the export rows of the range (key × day × model).
 */
async function filteredSpend(accountId: string, filter: SpendFilter, range: { from: string; to: string }, groupBy: GroupBy, now: Date, prev?: { from: string; to: string }) {
  const { from, to } = range;
  const today = isoDate(now);
  const monthFirst = `${today.slice(0, 7)}-01`;
  const withForecast = to.slice(0, 7) === today.slice(0, 7);
  const windowFrom = earliest(addDays(today, -7), monthFirst);
  const fromDays = groupBy !== 'key' || filter.keyHash !== undefined;
  const needDays = fromDays || withForecast || prev !== undefined;
  const span = { from: earliest(from, withForecast ? windowFrom : undefined, prev?.from), to: withForecast ? latest(to, today) : to };
  const [days, figures] = await Promise.all([
    needDays ? filteredDayModels(accountId, filter, span.from, span.to) : [],
    repo.loadForecastFigures(accountId, today, filter.keyHash ? [filter.keyHash] : []),
  ]);
  const inRange = days.filter((item) => (item.date as string) >= from && (item.date as string) <= to);
  const result = fromDays ? groupsOfDays(inRange, filter, from, to, groupBy, figures.keyItems) : await keyGroupsOf(accountId, filter, from, to, now);
  let forecast = null;
  if (withForecast) {
    const byDay = new Map<string, bigint>();
    let monthToDate = 0n;
    for (const item of days) {
      const date = item.date as string;
      if (date < windowFrom || date > today) continue;
      byDay.set(date, (byDay.get(date) ?? 0n) + micros(item.costMicros));
      if (date >= monthFirst) monthToDate += micros(item.costMicros);
    }
    const keyItem = filter.keyHash ? figures.keyItems.get(filter.keyHash) : undefined;
    const since = ((keyItem?.firstSeenAt ?? figures.account?.createdAt) as string | undefined)?.slice(0, 10);
    const monthEnd = forecastMonthEnd({ today, monthToDate, daySpend: (d) => byDay.get(d) ?? 0n, ...(since ? { since } : {}) });
    forecast = { monthEnd: microsToUsd(monthEnd), method: FORECAST_METHOD };
  }
  const answer = { from, to, groupBy, ...totalOf(sumAll(result.totals)), groups: result.groups, forecast };
  return prev ? { ...answer, previous: sumOf(days, prev) } : answer;
}

/** Day, model or provider groups of filtered day × model items; a named key's one key group. */
function groupsOfDays(items: Item[], filter: SpendFilter, from: string, to: string, groupBy: GroupBy, keyItems: Map<string, Item>) {
  if (groupBy === 'day') {
    const days = new Map(daysBetween(from, to).map((d) => [d, zero()]));
    for (const item of items) addItem(days.get(item.date as string)!, item);
    return { totals: [...days.values()].map((totals) => ({ totals })), groups: [...days].map(([date, t]) => ({ date, settled: false, ...totalsView(t) })) };
  }
  if (groupBy === 'key') {
    const groups = grouped(items, () => filter.keyHash!, () => ({ provider: '', model: '' }));
    return { totals: groups, groups: groups.map((g) => keyGroup(g, keyItems.get(g.id))) };
  }
  const byModel = groupBy === 'model';
  const groups = grouped(items, (i) => (byModel ? `${i.provider as string}|${i.model as string}` : (i.provider as string)), (i) => ({
    provider: i.provider as string,
    model: i.model as string,
  }));
  return {
    totals: groups,
    groups: groups.map((g) =>
      byModel ? { provider: g.fields.provider, model: shownModel(g.fields.model), ...totalsView(g.totals) } : { provider: g.fields.provider, ...totalsView(g.totals) },
    ),
  };
}

/** groupBy=key of a provider (its keys' month × key and day × key items) or of one of its models (the export rows). */
async function keyGroupsOf(accountId: string, filter: SpendFilter, from: string, to: string, now: Date) {
  let items: Item[];
  if (filter.model !== undefined) items = await repo.modelRows(accountId, from, to, filter.provider!, filter.model);
  else {
    const plan = keyReadPlan(from, to, isoDate(new Date(now.getTime() + LATEST_DAY_MS)));
    const [keyIndex, ...reads] = await Promise.all([
      listProviderKeys(accountId),
      plan.months ? repo.accountMonthKeys(accountId, ...plan.months) : [],
      ...plan.dayRanges.map(([f, t]) => repo.accountDayKeys(accountId, f, t)),
    ]);
    const ofProvider = new Set(keyIndex.filter((key) => key.provider === filter.provider).map((key) => key.keyHash as string));
    items = reads.flat().filter((item) => ofProvider.has(item.keyHash as string));
  }
  const groups = grouped(items, (item) => item.keyHash as string, () => ({ provider: '', model: '' }));
  const top = groups.slice(0, TOP_KEYS);
  const figures = await repo.loadForecastFigures(accountId, isoDate(now), top.map((g) => g.id));
  return { totals: groups, groups: top.map((g) => keyGroup(g, figures.keyItems.get(g.id))) };
}

/** A groupBy=key entry: the key's names from its item (`name`: the provider's name of a connection's key). */
function keyGroup(g: Pick<Group, 'id' | 'totals'>, key: Item | undefined) {
  return {
    hash: g.id,
    label: (key?.label as string | null | undefined) ?? null,
    name: (key?.name as string | null | undefined) ?? null,
    hint: (key?.hint as string | undefined) ?? null,
    provider: (key?.provider as string | undefined) ?? null,
    ...totalsView(g.totals),
  };
}

/** GET /customers (shared/spend/customers.ts): the range as GET /spend's, in whole months. */
export async function getCustomers(accountId: string, query: CustomersQuery, now = new Date()) {
  const range = breakdownRange(query, now);
  return listCustomers(accountId, query, range, now, keyReadPlan);
}
