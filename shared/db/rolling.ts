/**
 * The key item's rolling counters: today's and this month's spend live as attributes NAMED after their period
 * (`d:2026-11-21:cost`, `m:2026-11:cost`), so an atomic ADD works without first resetting a counter when the
 * day turns. Readers use only the current period's names; writers REMOVE the few previous periods' names.
 */
import { addDays, previousMonth } from '#shared/time/periods.ts';

export function rollingNames(today: string, month: string) {
  return {
    dayCost: `d:${today}:cost`,
    dayRequests: `d:${today}:requests`,
    monthCost: `m:${month}:cost`,
    monthRequests: `m:${month}:requests`,
  };
}

/** The 7 UTC days before `today`, most recent first: their counters stay (the key's forecast, shared/usage/forecast.ts). */
export const recentDays = (today: string): string[] => Array.from({ length: 7 }, (_, i) => addDays(today, -(i + 1)));

/** The names of the 7 days before the recent ones and of the 2 previous months: removed on every write of the key item. */
export function staleRollingNames(today: string, month: string): string[] {
  const names: string[] = [];
  for (let i = 8; i <= 14; i++) {
    const day = addDays(today, -i);
    names.push(`d:${day}:cost`, `d:${day}:requests`);
  }
  let m = month;
  for (let i = 1; i <= 2; i++) {
    m = previousMonth(m);
    names.push(`m:${m}:cost`, `m:${m}:requests`);
  }
  return names;
}
