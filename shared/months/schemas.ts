/** Request schemas of /months (zod/mini, strict objects). */
import * as z from 'zod/mini';

/** GET /months?from=YYYY-MM&to=YYYY-MM (checked as months by the service, with the range's length). */
export const MonthsQuery = z.strictObject({
  from: z.optional(z.string('from must be a month YYYY-MM.')),
  to: z.optional(z.string('to must be a month YYYY-MM.')),
});
export type MonthsQuery = z.infer<typeof MonthsQuery>;

export const MonthParams = z.strictObject({
  month: z.string().check(z.regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'month must be a month YYYY-MM.')),
});

/** POST /months/{month}/close: `force` closes a month whose days are not all settled (their estimates stay). */
export const CloseMonthBody = z.strictObject({
  force: z.optional(z.boolean('force must be true or false.')),
});
export type CloseMonthBody = z.infer<typeof CloseMonthBody>;
