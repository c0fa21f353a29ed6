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

/**
 * The key's spend per UTC hour (`h:2026-11-21T14:cost`), kept for the hours of the last day: the spend-anomaly rule's
 * rate (shared/anomaly/rate.ts) and the incident's chart of the key's last 24 hours. Ingestion adds each event to the
 * hour of its time; a sync spreads the growth of a key's today figure evenly over the time since the previous sync.
 */
export const HOURS_KEPT = 25;
const HOUR_MS = 3_600_000;

/** `2026-11-21T14` of an instant. */
export const isoHour = (t: Date | number): string => new Date(typeof t === 'number' ? t : t.getTime()).toISOString().slice(0, 13);

/** The rolling name of an hour (`2026-11-21T14`). */
export const hourCostName = (hour: string): string => `h:${hour}:cost`;

/** The hour names kept at `now`: the current hour and the HOURS_KEPT − 1 before it, most recent first. */
export function keptHours(now: Date): string[] {
  const start = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return Array.from({ length: HOURS_KEPT }, (_, i) => isoHour(start - i * HOUR_MS));
}

/** The hour names removed on every write of the key item: the 24 hours before the kept ones. */
export function staleHourNames(now: Date): string[] {
  const start = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return Array.from({ length: 24 }, (_, i) => hourCostName(isoHour(start - (HOURS_KEPT + i) * HOUR_MS)));
}

/**
 * `micros` spread evenly over (`from`, `to`] by hour: what each kept hour gets (µ$, integers that add up to `micros`
 * over the whole interval; the share of hours no longer kept is dropped).
 */
export function spreadOverHours(micros: bigint, from: number, to: number, now: Date): Map<string, bigint> {
  const out = new Map<string, bigint>();
  if (micros <= 0n) return out;
  const kept = new Set(keptHours(now));
  if (to <= from) {
    const hour = isoHour(Math.min(to, now.getTime()));
    if (kept.has(hour)) out.set(hour, micros);
    return out;
  }
  const span = BigInt(to - from);
  let given = 0n;
  let t = from;
  while (t < to) {
    const next = Math.min(to, (Math.floor(t / HOUR_MS) + 1) * HOUR_MS);
    // Cumulative rounding: the shares add up to `micros` exactly.
    const upTo = (micros * BigInt(next - from)) / span;
    const share = next === to ? micros - given : upTo - given;
    given += share;
    const hour = isoHour(t);
    if (share > 0n && kept.has(hour)) out.set(hour, (out.get(hour) ?? 0n) + share);
    t = next;
  }
  return out;
}
