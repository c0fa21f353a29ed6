/** A `from`/`to` range of UTC days as the API takes it (a key's breakdown, the exports, a reconciliation). */
import { ValidationError } from '#shared/http/errors.ts';
import { isQueryDate, MAX_QUERY_DATE, MIN_QUERY_DATE } from '#shared/http/dates.ts';
import { isoDate, parseDate } from '#shared/time/periods.ts';

/** The longest range, in days, a breakdown covers. */
export const MAX_RANGE_DAYS = 366;

/**
 * The range of `?from&to` (default: the current month to today), checked: real dates, `from` ≤ `to`, at most
 * {@link MAX_RANGE_DAYS} days. `where` names the request part in `errors[].path`: `query.from`, or `from` of a body.
 */
export function breakdownRange(query: { from?: string; to?: string }, now: Date, where: 'query' | 'body' = 'query'): { from: string; to: string } {
  const path = (field: string) => (where === 'query' ? `query.${field}` : field);
  const to = query.to ?? isoDate(now);
  const from = query.from ?? `${to.slice(0, 7)}-01`;
  const errors = [];
  if (!isQueryDate(from)) errors.push({ path: path('from'), message: `from must be a date YYYY-MM-DD from ${MIN_QUERY_DATE} to ${MAX_QUERY_DATE}.` });
  if (!isQueryDate(to)) errors.push({ path: path('to'), message: `to must be a date YYYY-MM-DD from ${MIN_QUERY_DATE} to ${MAX_QUERY_DATE}.` });
  if (errors.length) throw new ValidationError('The date range is not valid.', errors);
  if (from > to) throw new ValidationError('from must not be after to.', [{ path: path('from'), message: 'from must not be after to.' }]);
  const days = (parseDate(to)!.getTime() - parseDate(from)!.getTime()) / 86_400_000 + 1;
  if (days > MAX_RANGE_DAYS) {
    throw new ValidationError(`The range may span at most ${MAX_RANGE_DAYS} days.`, [{ path: path('from'), message: `The range spans ${days} days.` }]);
  }
  return { from, to };
}
