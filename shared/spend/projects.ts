/**
 * Projects as a dimension of GET /spend (docs/features/spend-and-exports.md): `groupBy=project` sums the range per
 * (provider, project) — an OpenAI project, an Anthropic workspace; keys without one (events, OpenRouter) under
 * `project: null` of their provider — and `projectId=` narrows any grouping to one project's keys.
 *
 * A key's project is on the key (the key index, ONE Query); spend is read from the aggregates that already exist:
 * the month × key and day × key items for key and project groups (as `groupBy=key` reads them), the export rows
 * (key × day × model, ONE paged Query) when a grouping needs days or models of a subset of keys.
 */
import type { Item } from '#shared/db/client.ts';
import * as repo from '#shared/db/spend.ts';
import { listProviderKeys, projectOf, type ProjectRef } from '#shared/db/discovered-keys.ts';
import { daysBetween, isoDate } from '#shared/time/periods.ts';
import { addItem, byCost, totalsView, zero, type Totals } from '#shared/spend/sums.ts';
import type { GroupBy } from '#shared/spend/schemas.ts';
import { effectiveTagsOf, tagMatches } from '#shared/tags/tags.ts';
import { allocateShared } from '#shared/spend/chargeback.ts';
import { microsToUsd } from '#shared/pricing/money.ts';

/** Ingestion accepts timestamps up to 5 minutes ahead (the same bound as shared/spend/service.ts). */
const LATEST_DAY_MS = 5 * 60 * 1000;

export interface ProjectFilter {
  provider?: string;
  model?: string;
  keyHash?: string;
  projectId?: string;
  /** `name:value`: the keys whose effective tags hold it. */
  tagFilter?: string;
}

export { projectOf, type ProjectRef };

interface Group {
  id: string;
  totals: Totals;
  item: Item;
}

function group(items: Item[], idOf: (item: Item) => string): Group[] {
  const groups = new Map<string, Group>();
  for (const item of items) {
    const id = idOf(item);
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { id, totals: zero(), item }));
    addItem(g.totals, item);
  }
  return [...groups.values()].sort(byCost);
}

/** The keys the filter keeps (the whole index when it names nothing). */
function selectKeys(index: Item[], filter: ProjectFilter): Map<string, Item> {
  return new Map(
    index
      .filter(
        (k) =>
          (filter.provider === undefined || k.provider === filter.provider) &&
          (filter.keyHash === undefined || k.keyHash === filter.keyHash) &&
          (filter.projectId === undefined || projectOf(k)?.id === filter.projectId) &&
          (filter.tagFilter === undefined || tagMatches(effectiveTagsOf(k), filter.tagFilter)),
      )
      .map((k) => [k.keyHash as string, k]),
  );
}

/** The spend items of [from, to] of the selected keys: key items for key/project groups, export rows otherwise. */
async function readItems(accountId: string, from: string, to: string, byKeyItems: boolean, keys: Map<string, Item>, model: string | undefined, now: Date, keyReadPlan: KeyReadPlan): Promise<Item[]> {
  const keep = (item: Item) => keys.has(item.keyHash as string) && (model === undefined || item.model === model);
  if (byKeyItems && model === undefined) {
    const plan = keyReadPlan(from, to, isoDate(new Date(now.getTime() + LATEST_DAY_MS)));
    const reads = await Promise.all([plan.months ? repo.accountMonthKeys(accountId, ...plan.months) : [], ...plan.dayRanges.map(([f, t]) => repo.accountDayKeys(accountId, f, t))]);
    return reads.flat().filter(keep);
  }
  const out: Item[] = [];
  for await (const page of repo.exportRows(accountId, from, to)) for (const item of page) if (keep(item)) out.push(item);
  return out;
}

type KeyReadPlan = (from: string, to: string, latestDay: string) => { months: [string, string] | null; dayRanges: [string, string][] };

type Sums = ReturnType<typeof totalsView>;
type KeyGroupView = { hash: string; label: string | null; name: string | null; hint: string | null; provider: string | null } & Sums;
type TagGroup = { value: string | null } & Sums & { directUsd?: Sums['costUsd']; sharedUsd?: Sums['costUsd'] };
type SpendGroup = TagGroup | ({ date: string; settled: boolean } & Sums) | ({ provider: string; model: string } & Sums) | ({ provider: string; project: ProjectRef } & Sums) | ({ provider: string } & Sums) | KeyGroupView;

export interface ProjectSpendDeps {
  keyReadPlan: KeyReadPlan;
  /** A groupBy=key entry of shared/spend/service.ts (the key's names). */
  keyGroup: (g: { id: string; totals: Totals }, key: Item | undefined) => KeyGroupView;
  topKeys: number;
  /** groupBy=tag: the tag's name, and whether shared spend is allocated to its values. */
  tag?: { name: string; allocate: boolean };
}

/**
 * GET /spend with `groupBy=project` or `projectId=`: the sums of the range grouped as asked, over the keys the filters
 * keep. No forecast (`forecast: null`): the month-end forecast is the account's, or a key's.
 */
export async function projectSpend(
  accountId: string,
  filter: ProjectFilter,
  range: { from: string; to: string },
  groupBy: GroupBy,
  now: Date,
  prev: { from: string; to: string } | undefined,
  deps: ProjectSpendDeps,
) {
  const { from, to } = range;
  const index = await listProviderKeys(accountId);
  const keys = selectKeys(index, filter);
  const byKeyItems = groupBy === 'key' || groupBy === 'project' || groupBy === 'tag';
  const [items, previousItems] = await Promise.all([
    readItems(accountId, from, to, byKeyItems, keys, filter.model, now, deps.keyReadPlan),
    prev ? readItems(accountId, prev.from, prev.to, byKeyItems, keys, filter.model, now, deps.keyReadPlan) : undefined,
  ]);
  const total = zero();
  for (const item of items) addItem(total, item);
  let groups: SpendGroup[];
  if (groupBy === 'tag') {
    groups = tagGroups(items, keys, deps.tag!);
  } else if (groupBy === 'project') {
    const keyOf = (item: Item) => keys.get(item.keyHash as string);
    groups = group(items, (item) => `${(keyOf(item)?.provider as string | undefined) ?? ''}|${projectOf(keyOf(item))?.id ?? ''}`).map((g) => ({
      provider: (keyOf(g.item)?.provider as string | undefined) ?? '',
      project: projectOf(keyOf(g.item)),
      ...totalsView(g.totals),
    }));
  } else if (groupBy === 'key') {
    groups = group(items, (item) => item.keyHash as string)
      .slice(0, deps.topKeys)
      .map((g) => deps.keyGroup(g, keys.get(g.id)));
  } else if (groupBy === 'day') {
    const days = new Map(daysBetween(from, to).map((d) => [d, zero()]));
    for (const item of items) {
      const day = days.get(item.date as string);
      if (day) addItem(day, item);
    }
    groups = [...days].map(([date, t]) => ({ date, settled: false, ...totalsView(t) }));
  } else {
    const byModel = groupBy === 'model';
    groups = group(items, (i) => (byModel ? `${i.provider as string}|${i.model as string}` : (i.provider as string))).map((g) =>
      byModel ? { provider: g.item.provider as string, model: g.item.model as string, ...totalsView(g.totals) } : { provider: g.item.provider as string, ...totalsView(g.totals) },
    );
  }
  const answer = { from, to, groupBy, total: totalsView(total), groups, forecast: null as { monthEnd: number; method: 'trailing-7-day-average' } | null };
  if (!prev) return answer;
  const previous = zero();
  for (const item of previousItems ?? []) addItem(previous, item);
  return { ...answer, previous: { ...prev, total: totalsView(previous) } };
}

/**
 * groupBy=tag: the range's spend per effective value of the tag (null: keys without it, usage without a key), most
 * cost first. With `allocate`, the null group's spend is spread over the values in proportion to their own
 * (shared/spend/chargeback.ts): each group then carries `directUsd`, `sharedUsd` and `costUsd` = their sum, and the
 * groups still sum to the total; the null group stays only when there is no value to carry it. Requests and tokens
 * are each group's own.
 */
function tagGroups(items: Item[], keys: Map<string, Item>, tag: { name: string; allocate: boolean }): TagGroup[] {
  const valueOf = (item: Item): string | null => {
    const tags = effectiveTagsOf(keys.get(item.keyHash as string));
    return Object.hasOwn(tags, tag.name) ? tags[tag.name]! : null;
  };
  const groups = group(items, (item) => {
    const value = valueOf(item);
    return value === null ? '\u0000' : `v${value}`;
  }).map((g) => ({ value: valueOf(g.item), totals: g.totals }));
  if (!tag.allocate) return groups.map((g) => ({ value: g.value, ...totalsView(g.totals) }));
  const untagged = groups.find((g) => g.value === null);
  const tagged = groups.filter((g) => g.value !== null);
  const shared = untagged?.totals.costMicros ?? 0n;
  const parts = allocateShared(
    tagged.map((g) => ({ value: g.value!, directMicros: g.totals.costMicros })),
    shared,
  );
  const out = tagged.map((g) => {
    const part = parts?.get(g.value!) ?? 0n;
    return { value: g.value, cost: g.totals.costMicros + part, view: { ...totalsView(g.totals), directUsd: microsToUsd(g.totals.costMicros), sharedUsd: microsToUsd(part), costUsd: microsToUsd(g.totals.costMicros + part) } };
  });
  if (untagged && !parts) {
    out.push({ value: null, cost: shared, view: { ...totalsView(untagged.totals), directUsd: microsToUsd(0n), sharedUsd: microsToUsd(shared), costUsd: microsToUsd(shared) } });
  }
  return out
    .sort((a, b) => (a.cost !== b.cost ? (b.cost > a.cost ? 1 : -1) : (a.value ?? '') < (b.value ?? '') ? -1 : 1))
    .map((g) => ({ value: g.value, ...g.view }));
}
