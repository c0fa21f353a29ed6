/**
 * What a sync reads, day by day (pure): the recent days it reads again, the backfill's slices, the days a provider
 * keeps, and the sentence a connection carries when a plan limit held usage back.
 */
import type { Connection } from '#shared/db/connections.ts';
import type { PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import { addDays } from '#shared/time/periods.ts';

/** Days a later sync reads again before today (providers revise recent buckets). */
export const REREAD_DAYS = 3;

export const LIMIT_DETAIL = 'Not everything was imported:';

/**
 * What a sync reads, in order (pure). Without a backfill: the recent days (firstDayToRead) to today, oldest first.
 * With one (`cursor`…`backfillTo ?? today` still to import): the recent days after it first, then the backfill
 * newest first — the current month before the months before it, slices of at most `sliceDays` within a month.
 */
export function readPlan(conn: Pick<Connection, 'cursor' | 'backfillTo' | 'lastSuccessAt' | 'importedFrom'>, today: string, sliceDays: number): { recent: [string, string][]; backfill: [string, string][] } {
  const forward = (from: string, to: string) => {
    const out: [string, string][] = [];
    for (let f = from; f <= to; ) {
      const t = addDays(f, sliceDays - 1) < to ? addDays(f, sliceDays - 1) : to;
      out.push([f, t]);
      f = addDays(t, 1);
    }
    return out;
  };
  if (conn.cursor === null) return { recent: forward(firstDayToRead(conn, today), today), backfill: [] };
  const backTo = conn.backfillTo ?? today;
  const recentFrom = firstDayToRead({ ...conn, cursor: null }, today);
  const recent = backTo < today ? forward(recentFrom > backTo ? recentFrom : addDays(backTo, 1), today) : [];
  const backfill: [string, string][] = [];
  for (let to = backTo; to >= conn.cursor; ) {
    const monthStart = `${to.slice(0, 7)}-01`;
    let from = addDays(to, -(sliceDays - 1));
    if (from < monthStart) from = monthStart;
    if (from < conn.cursor) from = conn.cursor;
    backfill.push([from, to]);
    to = addDays(from, -1);
  }
  return { recent, backfill };
}

/** The plan without the days before `oldest` (a provider that keeps only recent days: they would read as empty). */
export function clampPlan(plan: ReturnType<typeof readPlan>, oldest: string | undefined): ReturnType<typeof readPlan> {
  if (oldest === undefined) return plan;
  const clamp = (slices: [string, string][]) => slices.filter(([, to]) => to >= oldest).map(([from, to]): [string, string] => [from < oldest ? oldest : from, to]);
  return { recent: clamp(plan.recent), backfill: clamp(plan.backfill) };
}

/** The sentence `statusDetail` carries when a plan limit held usage back. */
export function limitDetail(reached: readonly PlanLimitReached[], limits: { trackedRequests: number; keys: number }): string {
  const names = reached.map((r) =>
    r === 'keys' ? `the plan's key limit (${limits.keys.toLocaleString('en-US')} keys)` : `the plan's tracked requests (${limits.trackedRequests.toLocaleString('en-US')} this period)`,
  );
  return `${LIMIT_DETAIL} ${names.join(' and ')} reached. The rest is imported by a later sync once there is room (upgrade the plan).`;
}

/** The first day a sync reads: the backfill cursor, else the 3 days before today (and any days missed since the last success). */
export function firstDayToRead(conn: Pick<Connection, 'cursor' | 'lastSuccessAt' | 'importedFrom'>, today: string): string {
  if (conn.cursor) return conn.cursor;
  let from = addDays(today, -REREAD_DAYS);
  if (conn.lastSuccessAt) {
    const missed = addDays(conn.lastSuccessAt.slice(0, 10), -REREAD_DAYS);
    if (missed < from) from = missed;
  }
  return from < conn.importedFrom ? conn.importedFrom : from;
}