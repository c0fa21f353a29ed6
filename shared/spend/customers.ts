/**
 * Customers and features (docs/features/tags-and-chargeback.md): `GET /spend?groupBy=customer|feature` (the 100 that
 * spent most, then `others`; `null`: spend that names none), the `customer=` / `feature=` filters, and
 * `GET /customers`. They read the month × customer and month × feature items the one writer keeps (ONE Query per
 * month) and the account's month items (ONE BatchGetItem), so a range is whole calendar months (the current one to
 * date counts as whole).
 */
import { batchGet, type Item } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { customerCounts, getItems, monthCustomers, monthFeatures, pageByCost, pageByName } from '#shared/db/customers.ts';
import { ValidationError } from '#shared/http/errors.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { OTHER_CUSTOMERS } from '#shared/ingest/schemas.ts';
import { addItem, totalsView, zero, type Totals } from '#shared/spend/sums.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { isoDate } from '#shared/time/periods.ts';
import type { CoverageNote } from '#shared/spend/coverage.ts';

export const TOP_NAMES = 100;
const LATEST_DAY_MS = 5 * 60 * 1000;

type KeyReadPlan = (from: string, to: string, latestDay: string) => { months: [string, string] | null; dayRanges: [string, string][] };

/** The months of a whole-month range; 400 naming the rule otherwise. */
export function wholeMonths(from: string, to: string, now: Date, plan: KeyReadPlan, field: string): string[] {
  const p = plan(from, to, isoDate(new Date(now.getTime() + LATEST_DAY_MS)));
  if (p.dayRanges.length > 0 || !p.months) {
    throw new ValidationError(`${field} sums whole calendar months: from the 1st of a month to the last day of a month (or today).`, [
      { path: 'query.from', message: `Give a range of whole months for ${field} (e.g. from=2026-10-01&to=2026-10-31).` },
    ]);
  }
  const out: string[] = [];
  for (let m = p.months[0]; m <= p.months[1]; m = nextMonth(m)) out.push(m);
  return out;
}

const nextMonth = (m: string) => {
  const [y, mo] = m.split('-').map(Number) as [number, number];
  return mo === 12 ? `${y + 1}-01` : `${y}-${String(mo + 1).padStart(2, '0')}`;
};

interface Named {
  name: string;
  totals: Totals;
  firstSeenAt: string;
  lastSeenAt: string;
}

/** The months' items merged by name (a customer or feature across months). */
function merge(itemsByMonth: Item[][], field: 'customerId' | 'feature'): Map<string, Named> {
  const out = new Map<string, Named>();
  for (const items of itemsByMonth) {
    for (const item of items) {
      const name = item[field] as string;
      let n = out.get(name);
      if (!n) out.set(name, (n = { name, totals: zero(), firstSeenAt: item.firstSeenAt as string, lastSeenAt: item.lastSeenAt as string }));
      addItem(n.totals, item);
      if ((item.firstSeenAt as string) < n.firstSeenAt) n.firstSeenAt = item.firstSeenAt as string;
      if ((item.lastSeenAt as string) > n.lastSeenAt) n.lastSeenAt = item.lastSeenAt as string;
    }
  }
  return out;
}

const byCostThenName = (a: Named, b: Named) =>
  a.totals.costMicros !== b.totals.costMicros ? (b.totals.costMicros > a.totals.costMicros ? 1 : -1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/** GET /spend with groupBy=customer|feature (or the customer= / feature= filters). */
export async function nameSpend(
  accountId: string,
  query: { groupBy: 'customer' | 'feature'; customer?: string; feature?: string },
  range: { from: string; to: string },
  now: Date,
  plan: KeyReadPlan,
) {
  const field = query.groupBy === 'customer' ? 'customerId' : 'feature';
  const months = wholeMonths(range.from, range.to, now, plan, `groupBy=${query.groupBy}`);
  if (months.length === 1) return oneMonth(accountId, query, range, months[0]!);
  const [reads, accountMonths, counts] = await Promise.all([
    Promise.all(months.map((m) => (query.groupBy === 'customer' ? monthCustomers(accountId, m) : monthFeatures(accountId, m)))),
    batchGet(months.map((m) => keys.usageMonth(accountId, m))),
    query.groupBy === 'customer' ? customerCounts(accountId, months) : Promise.resolve(new Map<string, number>()),
  ]);
  const named = merge(reads, field);
  const only = query.groupBy === 'customer' ? query.customer : query.feature;
  const label = query.groupBy;
  const notes: CoverageNote[] = [];
  const others = named.get(OTHER_CUSTOMERS);
  if (query.groupBy === 'customer' && others) {
    const past = months.filter((m, i) => reads[i]!.some((item) => item.customerId === OTHER_CUSTOMERS));
    notes.push({
      code: 'plan_customer_limit',
      message: `The plan counts ${(Math.max(...past.map((m) => counts.get(m) ?? 0))).toLocaleString('en-US')} distinct customers a month; the spend of customers past that limit is under "${OTHER_CUSTOMERS}". A larger plan counts more.`,
      from: `${past[0]}-01`,
      to: range.to,
    });
  }
  if (only !== undefined) {
    const n = named.get(only);
    const totals = n?.totals ?? zero();
    return { answer: { from: range.from, to: range.to, groupBy: query.groupBy, total: totalsView(totals), groups: n ? [{ [label]: only, ...totalsView(totals) }] : [], forecast: null }, notes };
  }
  const total = zero();
  for (const item of accountMonths) addItem(total, item);
  const ranked = [...named.values()].sort(byCostThenName);
  const top = ranked.slice(0, TOP_NAMES);
  const rest = zero();
  for (const n of ranked.slice(TOP_NAMES)) for (const [k, v] of Object.entries(n.totals)) (rest as unknown as Record<string, bigint>)[k]! += v;
  const namedTotal = zero();
  for (const n of ranked) for (const [k, v] of Object.entries(n.totals)) (namedTotal as unknown as Record<string, bigint>)[k]! += v;
  const unnamed = zero();
  for (const k of Object.keys(total) as (keyof Totals)[]) unnamed[k] = total[k] - namedTotal[k];
  const groups: Record<string, unknown>[] = top.map((n) => ({ [label]: n.name, ...totalsView(n.totals) }));
  if (ranked.length > TOP_NAMES) groups.push({ [label]: 'others', count: ranked.length - TOP_NAMES, ...totalsView(rest) });
  if (unnamed.costMicros !== 0n || unnamed.requests !== 0n) groups.push({ [label]: null, ...totalsView(unnamed) });
  return { answer: { from: range.from, to: range.to, groupBy: query.groupBy, total: totalsView(total), groups, forecast: null }, notes };
}

/**
 * One month (what the dashboard asks): the top 100 by cost from gsi3 (ONE Query of 101 items), the month's sums of
 * named events, its customer count and `(other customers)` (ONE BatchGetItem) — `others` is the month's named sums
 * less the top's. Constant in the number of customers.
 */
async function oneMonth(accountId: string, query: { groupBy: 'customer' | 'feature'; customer?: string; feature?: string }, range: { from: string; to: string }, month: string) {
  const customers = query.groupBy === 'customer';
  const field = customers ? 'customerId' : 'feature';
  const label = query.groupBy;
  const only = customers ? query.customer : query.feature;
  const totalKey = customers ? keys.customerTotal(accountId, month) : keys.featureTotal(accountId, month);
  const named = (name: string) => (customers ? keys.spendMonthCustomer(accountId, month, name) : keys.spendMonthFeature(accountId, month, name));
  const [top, items] = await Promise.all([
    only === undefined ? pageByCost(totalKey.pk, TOP_NAMES) : Promise.resolve<{ items: Item[]; next?: Record<string, unknown> }>({ items: [] }),
    getItems([keys.usageMonth(accountId, month), totalKey, ...(customers ? [keys.customerCount(accountId, month), named(OTHER_CUSTOMERS)] : []), ...(only !== undefined ? [named(only)] : [])]),
  ]);
  const find = (k: { pk: string; sk: string }) => items.find((i) => i.pk === k.pk && i.sk === k.sk);
  const notes: CoverageNote[] = [];
  const otherItem = customers ? find(named(OTHER_CUSTOMERS)) : undefined;
  if (otherItem) {
    const count = Number(find(keys.customerCount(accountId, month))?.customers ?? 0);
    notes.push({
      code: 'plan_customer_limit',
      message: `The plan counts ${count.toLocaleString('en-US')} distinct customers a month; the spend of customers past that limit is under "${OTHER_CUSTOMERS}". A larger plan counts more.`,
      from: range.from,
      to: range.to,
    });
  }
  if (only !== undefined) {
    const t = zero();
    const it = find(named(only));
    if (it) addItem(t, it);
    return { answer: { from: range.from, to: range.to, groupBy: query.groupBy, total: totalsView(t), groups: it ? [{ [label]: only, ...totalsView(t) }] : [], forecast: null }, notes };
  }
  const total = zero();
  const monthItem = find(keys.usageMonth(accountId, month));
  if (monthItem) addItem(total, monthItem);
  const namedTotal = zero();
  const totalItem = find(totalKey);
  if (totalItem) addItem(namedTotal, totalItem);
  const shown = top.items.slice(0, TOP_NAMES);
  const groups: Record<string, unknown>[] = [];
  const shownTotal = zero();
  for (const item of shown) {
    const t = zero();
    addItem(t, item);
    for (const k of Object.keys(t) as (keyof Totals)[]) shownTotal[k] += t[k];
    groups.push({ [label]: item[field] as string, ...totalsView(t) });
  }
  const minus = (a: Totals, b: Totals) => {
    const out = zero();
    for (const k of Object.keys(out) as (keyof Totals)[]) out[k] = a[k] - b[k];
    return out;
  };
  if (top.next) {
    const rest = minus(namedTotal, shownTotal);
    const count = customers ? Number(find(keys.customerCount(accountId, month))?.customers ?? 0) + (otherItem ? 1 : 0) - TOP_NAMES : undefined;
    groups.push({ [label]: 'others', ...(count !== undefined && count > 0 ? { count } : {}), ...totalsView(rest) });
  }
  const unnamed = minus(total, namedTotal);
  if (unnamed.costMicros !== 0n || unnamed.requests !== 0n) groups.push({ [label]: null, ...totalsView(unnamed) });
  return { answer: { from: range.from, to: range.to, groupBy: query.groupBy, total: totalsView(total), groups, forecast: null }, notes };
}

/** GET /customers?from&to&sort&limit&cursor: every customer of the months, with its sums and when it was first and last seen. */
export async function listCustomers(
  accountId: string,
  query: { from?: string; to?: string; sort?: 'cost' | 'name'; limit?: number; cursor?: string },
  range: { from: string; to: string },
  now: Date,
  plan: KeyReadPlan,
) {
  const months = wholeMonths(range.from, range.to, now, plan, 'GET /customers');
  if (months.length === 1) return customersOfMonth(accountId, query, range, months[0]!);
  const named = merge(await Promise.all(months.map((m) => monthCustomers(accountId, m))), 'customerId');
  const sort = query.sort ?? 'cost';
  const ranked = [...named.values()].sort(sort === 'cost' ? byCostThenName : (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const list = `customers:${sort}:${range.from}:${range.to}`;
  let start = 0;
  if (query.cursor) {
    const p = decodeCursor(query.cursor, accountId, list) as { o?: unknown } | null;
    if (typeof p?.o !== 'number' || !Number.isInteger(p.o) || p.o < 0) throw new ValidationError('The cursor is not valid for this list.', [{ path: 'query.cursor', message: 'Invalid cursor.' }]);
    start = p.o;
  }
  const limit = query.limit ?? DEFAULT_LIMIT;
  const page = ranked.slice(start, start + limit);
  return {
    items: page.map((n) => ({
      customerId: n.name,
      costUsd: microsToUsd(n.totals.costMicros),
      requests: Number(n.totals.requests),
      inputTokens: Number(n.totals.inputTokens),
      outputTokens: Number(n.totals.outputTokens),
      firstSeenAt: n.firstSeenAt,
      lastSeenAt: n.lastSeenAt,
    })),
    nextCursor: start + limit < ranked.length ? encodeCursor(accountId, list, { o: start + limit }) : null,
  };
}

/** GET /customers of one month: a page by cost (gsi3) or by name (the base table), ONE Query; the cursor is where it stopped. */
async function customersOfMonth(accountId: string, query: { sort?: 'cost' | 'name'; limit?: number; cursor?: string }, range: { from: string; to: string }, month: string) {
  const sort = query.sort ?? 'cost';
  const list = `customers:${sort}:${range.from}:${range.to}`;
  let start: Record<string, unknown> | undefined;
  if (query.cursor) {
    const p = decodeCursor(query.cursor, accountId, list) as { k?: unknown } | null;
    if (!p || typeof p.k !== 'object' || p.k === null) throw new ValidationError('The cursor is not valid for this list.', [{ path: 'query.cursor', message: 'Invalid cursor.' }]);
    start = p.k as Record<string, unknown>;
  }
  const limit = query.limit ?? DEFAULT_LIMIT;
  const pk = keys.customerTotal(accountId, month).pk;
  const page = sort === 'cost' ? await pageByCost(pk, limit, start) : await pageByName(pk, 'C#', limit, start);
  return {
    items: page.items.map((item) => {
      const t = zero();
      addItem(t, item);
      return {
        customerId: item.customerId as string,
        costUsd: microsToUsd(t.costMicros),
        requests: Number(t.requests),
        inputTokens: Number(t.inputTokens),
        outputTokens: Number(t.outputTokens),
        firstSeenAt: item.firstSeenAt as string,
        lastSeenAt: item.lastSeenAt as string,
      };
    }),
    nextCursor: page.next ? encodeCursor(accountId, list, { k: page.next }) : null,
  };
}
