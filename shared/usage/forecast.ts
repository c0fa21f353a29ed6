/**
 * The month-end forecast (docs/features/spend-and-exports.md), the ONE function every forecast comes from (GET /spend,
 * keys' `spend.forecastMonthEnd`, budgets' `forecast`, the `budget_forecast` alert). Pure, exact (BigInt µ$):
 *
 *   monthEnd = month-to-date + (average daily spend of the 7 complete UTC days before today) × (days of the month
 * after today)
 *
 * A new subject (an account or key younger than 7 days) has fewer complete days: the average is over the days
 * since it began (`since`, a UTC date), plus any earlier day that has spend (events may be dated before the key was
 * first seen: then the days from the first with spend count). With no such day (created today) the forecast is the
 * month-to-date. The product is rounded half-up to the micro-dollar once, at the end.
 */
import { addDays, parseDate } from '#shared/time/periods.ts';

export const FORECAST_METHOD = 'trailing-7-day-average' as const;

export interface ForecastInput {
  /** Today, YYYY-MM-DD (UTC). */
  today: string;
  /** Spend from the 1st of today's month through now, µ$. */
  monthToDate: bigint;
  /** Spend of a complete UTC day before today, µ$ (0 for a day without spend). */
  daySpend: (date: string) => bigint;
  /** The first UTC day of the account or key (YYYY-MM-DD); days before it count only if they have spend. */
  since?: string;
}

/** Days in the month of `date` (YYYY-MM-DD): 28–31, leap years included. */
export function daysInMonth(date: string): number {
  const [y, m] = date.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/** Days of the month after `date` (0 on the last day). */
export const daysLeftAfter = (date: string): number => daysInMonth(date) - Number(date.slice(8, 10));

export function forecastMonthEnd(input: ForecastInput): bigint {
  if (!parseDate(input.today)) throw new RangeError(`today must be a date YYYY-MM-DD, got ${input.today}`);
  const left = BigInt(daysLeftAfter(input.today));
  const days = Array.from({ length: 7 }, (_, i) => addDays(input.today, -(7 - i))); // oldest first
  const spends = days.map((day) => input.daySpend(day));
  // The subject began on `since`, or on an earlier day that has spend: the days from then on count.
  const firstSpend = days.find((_, i) => spends[i]! > 0n);
  const start = input.since === undefined ? days[0]! : firstSpend !== undefined && firstSpend < input.since ? firstSpend : input.since;
  let sum = 0n;
  let counted = 0n;
  days.forEach((day, i) => {
    if (day < start) return;
    sum += spends[i]!;
    counted += 1n;
  });
  if (counted === 0n || left === 0n) return input.monthToDate;
  // monthToDate + sum / counted × left, rounded half-up once: (2 × sum × left + counted) / (2 × counted)
  return input.monthToDate + (2n * sum * left + counted) / (2n * counted);
}

/**
 * A key's forecast from its item alone (the rolling counters of shared/db/rolling.ts: this month's spend and each of
 * the 7 days before today; `firstSeenAt` as its first day). `rolling` maps a date to its day-cost attribute name.
 */
export function keyForecastMonthEnd(
  item: Record<string, unknown>,
  today: string,
  names: { monthCost: string; dayCost: (date: string) => string },
  read: (value: unknown) => bigint,
): bigint {
  const firstSeenAt = item.firstSeenAt;
  return forecastMonthEnd({
    today,
    monthToDate: read(item[names.monthCost]),
    daySpend: (date) => read(item[names.dayCost(date)]),
    ...(typeof firstSeenAt === 'string' ? { since: firstSeenAt.slice(0, 10) } : {}),
  });
}
