/**
 * GET /spend: the account's spend of a range grouped by day, model, provider or key, with totals and the month-end
 * forecast. Each grouping reads the aggregates written for it by ingestion (README "Spend insight" gives the cost).
 */
import { breakdownRange } from '#shared/keys/service.ts';
import type { Item } from '#shared/db/client.ts';
import { readInt } from '#shared/db/numbers.ts';
import * as repo from '#shared/db/spend.ts';
import { microsToUsd } from '#shared/pricing/pricing.ts';
import { addDays, daysBetween, isoDate } from '#shared/time/periods.ts';
import { daysInMonth, FORECAST_METHOD, forecastMonthEnd } from '#shared/spend/forecast.ts';
import { addItem, addTotals, byCost, totalsView, zero, type Totals } from '#shared/spend/sums.ts';
import type { GroupBy, SpendQuery } from '#shared/spend/schemas.ts';

export const TOP_KEYS = 100;
/** Ingestion accepts timestamps up to 5 minutes ahead: no aggregate holds a day after isoDate(now + 5 min). */
const LATEST_DAY_MS = 5 * 60 * 1000;

const micros = (v: unknown) => readInt(v, 'an amount of micro-dollars');

/** The month-end forecast of the account from its figures (shared/spend/forecast.ts). */
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

const sumAll = (groups: { totals: Totals }[]) => {
  const total = zero();
  for (const g of groups) addTotals(total, g.totals);
  return total;
};

export async function getSpend(accountId: string, query: SpendQuery, now = new Date()) {
  const { from, to } = breakdownRange(query, now);
  const groupBy: GroupBy = query.groupBy ?? 'day';
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
      total: totalsView(sumAll(groups)),
      groups: top.map((g) => {
        const key = figures.keyItems.get(g.id);
        return {
          hash: g.id,
          label: (key?.label as string | null | undefined) ?? null,
          hint: (key?.hint as string | undefined) ?? null,
          provider: (key?.provider as string | undefined) ?? null,
          ...totalsView(g.totals),
        };
      }),
      forecast: withForecast ? forecastOf(figures) : null,
    };
  }

  const figuresRead = withForecast ? repo.loadForecastFigures(accountId, today) : Promise.resolve(undefined);
  if (groupBy === 'day') {
    const [items, figures] = await Promise.all([repo.accountDays(accountId, from, to), figuresRead]);
    const days = new Map(daysBetween(from, to).map((d) => [d, zero()]));
    for (const item of items) {
      const day = days.get(item.date as string);
      if (day) addItem(day, item);
    }
    return {
      from,
      to,
      groupBy,
      total: totalsView(sumAll([...days.values()].map((totals) => ({ totals })))),
      groups: [...days].map(([date, t]) => ({ date, ...totalsView(t) })),
      forecast: figures ? forecastOf(figures) : null,
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
    total: totalsView(sumAll(groups)),
    groups: groups.map((g) =>
      byModel ? { provider: g.fields.provider, model: g.fields.model, ...totalsView(g.totals) } : { provider: g.fields.provider, ...totalsView(g.totals) },
    ),
    forecast: figures ? forecastOf(figures) : null,
  };
}
