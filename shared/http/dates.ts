/**
 * The ONE date schema of query strings (`?from=&to=` of every endpoint that takes dates): a real calendar date
 * `YYYY-MM-DD` within 2000-01-01…2099-12-31 (docs/api.md). Anything else is a 400 naming the field, so no
 * date arithmetic downstream ever leaves the four-digit years.
 */
import * as z from 'zod/mini';
import { parseDate } from '#shared/time/periods.ts';

export const MIN_QUERY_DATE = '2000-01-01';
export const MAX_QUERY_DATE = '2099-12-31';

export const isQueryDate = (value: string): boolean =>
  parseDate(value) !== undefined && value >= MIN_QUERY_DATE && value <= MAX_QUERY_DATE;

/** `field` names the parameter in the message: `to must be a date YYYY-MM-DD from 2000-01-01 to 2099-12-31.` */
export const queryDate = (field: string) => {
  const message = `${field} must be a date YYYY-MM-DD from ${MIN_QUERY_DATE} to ${MAX_QUERY_DATE}.`;
  return z.string(message).check(z.refine(isQueryDate, message));
};
