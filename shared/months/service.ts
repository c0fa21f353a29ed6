/**
 * Closed months (docs/features/spend-and-exports.md "Closed months"): a past month closes (by an admin, or by itself at the first sync
 * after every connection has settled all of its days) and never changes after: no spend write lands on its days again
 * (shared/db/usage-writes.ts `openMonthGuards`); a later revision of one of its days is booked as a correction on the
 * day it was found (shared/connections/phases/run.ts, through the one writer). Money in µ$ inside, dollars out.
 */
import { Conflict, ValidationError } from '#shared/http/errors.ts';
import { accountWithConnections, type Connection } from '#shared/db/connections.ts';
import { listClosedMonths, putClosedMonth, type ClosedMonth, type SettledThrough } from '#shared/db/months.ts';
import { isSettled } from '#shared/spend/coverage.ts';
import { addDays, isoDate, isoMonth, previousMonth } from '#shared/time/periods.ts';
import { providerName } from '#shared/providers/names.ts';
import type { CloseMonthBody, MonthsQuery } from '#shared/months/schemas.ts';

/** How many months one `GET /months` lists at most. */
export const MAX_MONTHS = 36;
/** The closing user of a month that closed by itself. */
export const CLOSED_BY_BURNRATE = 'burnrate';

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The months `from`…`to` (YYYY-MM), in order. */
export function monthsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let m = to; m >= from; m = previousMonth(m)) out.push(m);
  return out.reverse();
}

/** The first and last day of a month. */
export function monthDays(month: string): { first: string; last: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return { first: `${month}-01`, last: isoDate(new Date(Date.UTC(y, m, 0))) };
}

type SettleFacts = Pick<Connection, 'id' | 'provider' | 'cursor' | 'backfillTo' | 'lastSuccessAt' | 'importedFrom' | 'unsettledDays' | 'untrackedKeys' | 'requestsHeldFrom' | 'requestsHeldTo'>;

/**
 * Whether a plan limit holds usage of the month back (keys not tracked, requests held, days still to read again):
 * the month is not whole yet, so it does not close by itself (an upgrade imports the rest into it).
 */
export function heldBack(c: SettleFacts, month: string, today: string): boolean {
  const { first, last } = monthDays(month);
  if ((c.untrackedKeys ?? 0) > 0 && c.importedFrom <= last) return true;
  if (c.cursor !== null && c.cursor <= last) return true;
  return !!c.requestsHeldFrom && c.requestsHeldFrom <= last && (c.requestsHeldTo ?? today) >= first;
}

/**
 * How far a connection has settled a month (pure): the last day, counted without a gap from the month's first day it
 * could import, that its provider's bill settled (null: none); and whether the month is whole for it: every such day
 * settled (a month whose days all lie before what it could import has nothing left to settle) and nothing of it held
 * back by a plan limit.
 */
export function settlementOf(c: SettleFacts, month: string, today: string): SettledThrough & { complete: boolean } {
  const { first, last } = monthDays(month);
  const start = first > c.importedFrom ? first : c.importedFrom;
  let through: string | null = null;
  let complete = true;
  for (let d = start; d <= last; d = addDays(d, 1)) {
    if (!isSettled(c, d, today)) {
      complete = false;
      break;
    }
    through = d;
  }
  return { connectionId: c.id, provider: c.provider, date: through, complete: complete && !heldBack(c, month, today) };
}

function parseMonth(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (!MONTH.test(value)) throw new ValidationError(`${field} must be a month YYYY-MM.`, [{ path: `query.${field}`, message: `${field} must be a month YYYY-MM.` }]);
  return value;
}

const view = (month: string, closed: ClosedMonth | undefined, connections: readonly SettleFacts[], today: string) => ({
  month,
  status: closed ? ('closed' as const) : ('open' as const),
  closedAt: closed?.closedAt ?? null,
  closedBy: closed?.closedBy ?? null,
  settledThrough: closed
    ? closed.settledThrough
    : connections.map((c) => {
        const { complete: _, ...s } = settlementOf(c, month, today);
        return s;
      }),
});

/** GET /months?from&to: each month of the range (default: the last 12), open or closed, and how far each connection settled it. */
export async function listMonths(accountId: string, query: MonthsQuery, now = new Date()) {
  const current = isoMonth(now);
  const to = parseMonth(query.to, 'to') ?? current;
  let from = parseMonth(query.from, 'from');
  if (from === undefined) {
    from = to;
    for (let i = 1; i < 12; i++) from = previousMonth(from);
  }
  if (from > to) throw new ValidationError('from must not be after to.', [{ path: 'query.from', message: 'from must not be after to.' }]);
  const months = monthsBetween(from, to);
  if (months.length > MAX_MONTHS) {
    throw new ValidationError(`The range may span at most ${MAX_MONTHS} months.`, [{ path: 'query.from', message: `The range spans ${months.length} months.` }]);
  }
  const [closed, { connections }] = await Promise.all([listClosedMonths(accountId, from, to), accountWithConnections(accountId)]);
  const byMonth = new Map(closed.map((c) => [c.month, c]));
  const today = isoDate(now);
  return { items: months.map((m) => view(m, byMonth.get(m), connections, today)) };
}

/**
 * POST /months/{month}/close: closes a past month. 409 for the current (or a later) month, for a month closed
 * already, and (`month-not-settled`) while a connection has days of it its provider has not billed, unless `force`.
 */
export async function closeMonth(accountId: string, month: string, userId: string, body: CloseMonthBody, now = new Date()) {
  if (!MONTH.test(month)) throw new ValidationError('month must be a month YYYY-MM.', [{ path: 'params.month', message: 'month must be a month YYYY-MM.' }]);
  const current = isoMonth(now);
  if (month >= current) throw new Conflict(`${month} is not over yet: only a past month can be closed.`, 'month-open');
  const today = isoDate(now);
  const { connections } = await accountWithConnections(accountId);
  const settlement = connections.map((c) => settlementOf(c, month, today));
  const open = settlement.filter((s) => !s.complete);
  if (open.length > 0 && body.force !== true) {
    const which = open
      .map((s) => {
        const c = connections.find((x) => x.id === s.connectionId)!;
        return `${providerName(s.provider)} (settled ${s.date ? `through ${s.date}` : 'no day yet'}${heldBack(c, month, today) ? '; some usage held back by the plan’s limits' : ''})`;
      })
      .join(', ');
    throw new Conflict(`${month} is not settled yet: ${which}. Close it once it is, or send {"force": true} to close it as it stands (its estimates frozen).`, 'month-not-settled');
  }
  const closed: ClosedMonth = {
    month,
    closedAt: now.toISOString(),
    closedBy: userId,
    settledThrough: settlement.map(({ complete: _, ...s }) => s),
    forced: open.length > 0,
  };
  if (!(await putClosedMonth(accountId, closed))) throw new Conflict(`${month} is closed already.`, 'month-closed');
  return view(month, closed, connections, today);
}

/**
 * After a sync: each past month from the connections' first importable month on (at most {@link MAX_MONTHS} back) that
 * is still open and that every connection has settled closes by itself (closedBy `burnrate`). Reads: the account's
 * connections and closed months (two Queries); writes only a month that closes.
 */
export async function autoCloseMonths(accountId: string, now = new Date()): Promise<string[]> {
  const current = isoMonth(now);
  const last = previousMonth(current);
  const { connections } = await accountWithConnections(accountId);
  if (connections.length === 0) return [];
  let first = connections.map((c) => c.importedFrom.slice(0, 7)).sort()[0]!;
  // The oldest month that may close: MAX_MONTHS back, `last` counted.
  let floor = last;
  for (let i = 1; i < MAX_MONTHS; i++) floor = previousMonth(floor);
  if (first < floor) first = floor;
  if (first > last) return [];
  const closed = new Set((await listClosedMonths(accountId, first, last, true)).map((c) => c.month));
  const today = isoDate(now);
  const done: string[] = [];
  for (const month of monthsBetween(first, last)) {
    if (closed.has(month)) continue;
    const settlement = connections.map((c) => settlementOf(c, month, today));
    if (!settlement.every((s) => s.complete)) continue;
    const ok = await putClosedMonth(accountId, {
      month,
      closedAt: now.toISOString(),
      closedBy: CLOSED_BY_BURNRATE,
      settledThrough: settlement.map(({ complete: _, ...s }) => s),
      forced: false,
    });
    if (ok) done.push(month);
  }
  return done;
}
