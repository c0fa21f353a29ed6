/** UTC calendar helpers. Dates are `YYYY-MM-DD`, months `YYYY-MM`; weeks start on Monday (docs/api.md). */
const DAY_MS = 86_400_000;

export const isoDate = (t: Date): string => t.toISOString().slice(0, 10);
export const isoMonth = (t: Date): string => t.toISOString().slice(0, 7);

/** `YYYY-MM-DD` → the Date at 00:00 UTC; undefined when it is not a real calendar date. */
export function parseDate(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const date = new Date(`${value}T00:00:00.000Z`);
  return Number.isNaN(date.getTime()) || isoDate(date) !== value ? undefined : date;
}

export const addDays = (date: string, days: number): string => isoDate(new Date(parseDate(date)!.getTime() + days * DAY_MS));

/** Days from `from` to `to` inclusive. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) days.push(d);
  return days;
}

export const monthStart = (t: Date): string => `${isoMonth(t)}-01`;

/** The Monday of the UTC week holding `t`. */
export function weekStart(t: Date): string {
  const weekday = (t.getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return isoDate(new Date(t.getTime() - weekday * DAY_MS));
}

/** The month before `month` (`YYYY-MM`). */
export function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}
