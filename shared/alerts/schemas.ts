import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';

export const ListAlertsQuery = z.strictObject({
  status: z.optional(z.enum(['triggered', 'acknowledged'], 'status must be triggered or acknowledged.')),
  limit: Limit,
  cursor: Cursor,
});
export type ListAlertsQuery = z.infer<typeof ListAlertsQuery>;

export const AlertParams = z.strictObject({ id: z.string() });
