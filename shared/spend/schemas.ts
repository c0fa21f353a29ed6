import * as z from 'zod/mini';
import { queryDate } from '#shared/http/dates.ts';

export const GROUP_BY = ['day', 'model', 'provider', 'key'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const SpendQuery = z.strictObject({
  from: z.optional(queryDate('from')),
  to: z.optional(queryDate('to')),
  groupBy: z.optional(z.enum(GROUP_BY, 'groupBy must be one of day, model, provider, key.')),
});
export type SpendQuery = z.infer<typeof SpendQuery>;

export const ExportQuery = z.strictObject({ from: z.optional(queryDate('from')), to: z.optional(queryDate('to')) });
export type ExportQuery = z.infer<typeof ExportQuery>;

/** POST /spend/exports: the range, with the rules and defaults of `GET /spend` (at most 366 days). */
export const CreateExportBody = z.strictObject({ from: z.optional(queryDate('from')), to: z.optional(queryDate('to')) });
export type CreateExportBody = z.infer<typeof CreateExportBody>;

export const ExportParams = z.strictObject({ id: z.string() });
export type ExportParams = z.infer<typeof ExportParams>;
