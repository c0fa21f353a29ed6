/** What a daily chart's legend says (pure: unit-tested without a browser). */
import { money, utcDay } from './format.ts';

export interface DailySeries {
  name: string;
  /** One value per day of `days`. */
  values: number[];
}

export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The legend: the range's totals before hovering, the hovered day's values and total after. */
export function legendValues(days: string[], series: DailySeries[], idx: number | null): { day: string; values: string[] } {
  if (idx == null || days[idx] === undefined) {
    const total = sum(series.map((s) => sum(s.values)));
    const span = days.length ? `${utcDay(days[0]!)} – ${utcDay(days.at(-1)!)}` : '';
    return { day: `${span} · total ${money(total)}`, values: series.map((s) => money(sum(s.values))) };
  }
  const dayTotal = sum(series.map((s) => s.values[idx] ?? 0));
  return { day: `${utcDay(days[idx])} · total ${money(dayTotal)}`, values: series.map((s) => money(s.values[idx] ?? 0)) };
}

