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

/**
 * After an ingest: whether the key's rate exists, from its item as read before the ingest (undefined: the ingest
 * creates it). A key's rate exists from the SECOND ingest that sees it on the day: an earlier ingest today wrote its
 * `lastSeenAt` (an ingest's own time; a key last seen yesterday is seen for the first time today by this one).
 */
export function ratedAfterIngest(before: { lastSeenAt?: unknown } | undefined, now: Date): boolean {
  return typeof before?.lastSeenAt === 'string' && before.lastSeenAt.slice(0, 10) === now.toISOString().slice(0, 10) && Date.parse(before.lastSeenAt) <= now.getTime();
}

/**
 * After a sync that saw a key's today figure grow: where the growth is spread from (the figure's last read: the later
 * of the connection's previous complete sync, if the key existed then, and the last sync that wrote the key's today
 * figure; never before midnight) and whether the key's rate exists: from the SECOND sync that sees it on the day, i.e.
 * when an earlier sync today wrote its today figure (`rateAt`). A connection's first sync, the day's first sync, and a
 * sync that sees a key idle until now all only start the count. `previousSyncAt`: the connection's previous complete
 * sync; `keyFirstSeenAt`: when the key was found.
 */
export function syncRead(input: { now: Date; previousSyncAt: number | undefined; keyFirstSeenAt: number | undefined; rateAt: unknown }): { from: number; rated: boolean } {
  const now = input.now.getTime();
  const midnight = Date.parse(`${input.now.toISOString().slice(0, 10)}T00:00:00.000Z`);
  const today = (t: number) => t >= midnight && t < now;
  const previous = input.previousSyncAt ?? NaN;
  const firstSeen = input.keyFirstSeenAt ?? NaN;
  const rateAt = typeof input.rateAt === 'string' ? Date.parse(input.rateAt) : NaN;
  const reads = [midnight, ...(today(previous) && firstSeen <= previous ? [previous] : []), ...(today(rateAt) ? [rateAt] : [])];
  return { from: Math.max(...reads), rated: today(rateAt) };
}
