/**
 * Spend figures that budgets and rules compare against, read in ONE BatchGetItem: the account's usage items
 * for today and the 7 days before, this month's, and the key items of the keys asked for (their rolling
 * today/month counters, and label and hint: how alert texts name the key). A key's week needs its day items: one
 * Query per such key, only when asked.
 */
import { batchGet, type Item } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { keyDayModels, listProviderKeys } from '#shared/db/discovered-keys.ts';
import { effectiveTagsOf } from '#shared/tags/tags.ts';
import { rollingNames } from '#shared/db/rolling.ts';
import { readInt } from '#shared/db/numbers.ts';
import { addDays, isoDate, isoMonth, weekStart } from '#shared/time/periods.ts';
import { forecastMonthEnd, keyForecastMonthEnd } from '#shared/usage/forecast.ts';
import { keyDisplayName } from '#shared/usage/key-name.ts';

export interface SpendSnapshot {
  today: string;
  month: string;
  /** The Monday of this week. */
  week: string;
  accountDay(date: string): number;
  accountMonth(): number;
  accountWeek(): number;
  keyToday(keyHash: string): number;
  keyMonth(keyHash: string): number;
  keyWeek(keyHash: string): number;
  /** Whether the key exists in the account. */
  hasKey(keyHash: string): boolean;
  /** Month-end forecasts (shared/usage/forecast.ts), µ$. */
  accountForecast(): number;
  keyForecast(keyHash: string): number;
  /** How alert texts name the key: its label, else hint, else hash prefix (from the key item already read). */
  keyName(keyHash: string): string;
  /** This month's spend of the keys whose effective tags hold `name: value` (read only when `tags` was asked). */
  tagMonth(tag: { name: string; value: string }): number;
}

/**
 * Money read exactly (shared/db/numbers.ts: a value of an unexpected kind throws instead of reading as 0) and
 * summed in BigInt. Each figure is at most the money ceiling (< 2^53), so a `number` holds it exactly — except the
 * account's week, which can span two months (then the nearest double, less than 1 µ$ off).
 */
const micros = (v: unknown): bigint => readInt(v, 'an amount of micro-dollars');
const sum = (values: bigint[]): number => Number(values.reduce((a, b) => a + b, 0n));

export async function loadSpend(
  accountId: string,
  now: Date,
  opts: { keyHashes?: Iterable<string>; keyWeeks?: Iterable<string>; tags?: boolean } = {},
): Promise<SpendSnapshot> {
  const today = isoDate(now);
  const month = isoMonth(now);
  const week = weekStart(now);
  const days = Array.from({ length: 8 }, (_, i) => addDays(today, -i));
  const keyHashes = [...new Set(opts.keyHashes ?? [])];
  const weekKeys = [...new Set(opts.keyWeeks ?? [])];

  const [items, tagKeys, ...weekItems] = await Promise.all([
    batchGet([
      keys.account(accountId),
      ...days.map((d) => keys.usageDay(accountId, d)),
      keys.usageMonth(accountId, month),
      ...keyHashes.map((h) => keys.providerKey(accountId, h)),
    ]),
    // TAG budgets: the key index (ONE Query), each key's effective tags and month counter.
    opts.tags ? listProviderKeys(accountId) : Promise.resolve([] as Item[]),
    ...weekKeys.map((h) => keyDayModels(accountId, h, week, today)),
  ]);
  const bySk = new Map<string, Item>();
  const keyItems = new Map<string, Item>();
  for (const item of items) {
    if (item.sk === keys.providerKey(accountId, '').sk) keyItems.set(item.keyHash as string, item);
    else bySk.set(item.sk as string, item);
  }
  const dayMicros = (date: string) => micros(bySk.get(keys.usageDay(accountId, date).sk)?.costMicros);
  const dayCost = (date: string) => Number(dayMicros(date));
  const weekCost = new Map(weekKeys.map((h, i) => [h, sum(weekItems[i]!.map((item) => micros(item.costMicros)))]));
  const rolling = rollingNames(today, month);

  return {
    today,
    month,
    week,
    accountDay: dayCost,
    accountMonth: () => Number(micros(bySk.get(keys.usageMonth(accountId, month).sk)?.costMicros)),
    accountWeek: () => sum(days.filter((d) => d >= week).map(dayMicros)),
    keyToday: (h) => Number(micros(keyItems.get(h)?.[rolling.dayCost])),
    keyMonth: (h) => Number(micros(keyItems.get(h)?.[rolling.monthCost])),
    keyWeek: (h) => weekCost.get(h) ?? 0,
    hasKey: (h) => keyItems.has(h),
    accountForecast: () => {
      const createdAt = bySk.get(keys.account(accountId).sk)?.createdAt;
      return Number(
        forecastMonthEnd({
          today,
          monthToDate: micros(bySk.get(keys.usageMonth(accountId, month).sk)?.costMicros),
          daySpend: dayMicros,
          ...(typeof createdAt === 'string' ? { since: createdAt.slice(0, 10) } : {}),
        }),
      );
    },
    keyForecast: (h) => {
      const item = keyItems.get(h);
      return item ? Number(keyForecastMonthEnd(item, today, { monthCost: rolling.monthCost, dayCost: (d) => rollingNames(d, month).dayCost }, micros)) : 0;
    },
    tagMonth: (tag) =>
      sum(tagKeys.filter((item) => effectiveTagsOf(item)[tag.name] === tag.value).map((item) => micros(item[rolling.monthCost]))),
    keyName: (h) => {
      const item = keyItems.get(h);
      return keyDisplayName({ hash: h, label: item?.label as string | null | undefined, name: item?.name as string | null | undefined, hint: item?.hint as string | null | undefined });
    },
  };
}

/** The month-end forecast of one key from its item (already read): what a PROJECT budget sums over its keys. */
export function keyItemForecast(item: Item, now: Date): number {
  const today = isoDate(now);
  const month = isoMonth(now);
  return Number(keyForecastMonthEnd(item, today, { monthCost: rollingNames(today, month).monthCost, dayCost: (d) => rollingNames(d, month).dayCost }, micros));
}
