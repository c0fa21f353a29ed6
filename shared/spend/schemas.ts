import * as z from 'zod/mini';
import { queryDate } from '#shared/http/dates.ts';

export const GROUP_BY = ['day', 'model', 'provider', 'key', 'project'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

const name = (field: string) =>
  z.string(`${field} must be text.`).check(z.minLength(1, `${field} must not be empty.`), z.maxLength(200, `${field} must be at most 200 characters.`));

export const SpendQuery = z.strictObject({
  from: z.optional(queryDate('from')),
  to: z.optional(queryDate('to')),
  groupBy: z.optional(z.enum(GROUP_BY, 'groupBy must be one of day, model, provider, key, project.')),
  /** Filters (docs/features/spend-and-exports.md): one provider; one model of it (`model` needs `provider`); one key. */
  provider: z.optional(name('provider')),
  model: z.optional(name('model')),
  keyHash: z.optional(z.string('keyHash must be text.').check(z.regex(/^[0-9a-f]{64}$/, 'keyHash must be a key’s SHA-256 (64 lower-case hex).'))),
  /** The keys of one project (OpenAI project, Anthropic workspace: a key's `project.id`). */
  projectId: z.optional(name('projectId')),
  /** `previous`: also the sums of the range of the same length just before (a month to date: the same days of the previous month). */
  compare: z.optional(z.enum(['previous'], 'compare must be previous.')),
});
export type SpendQuery = z.infer<typeof SpendQuery>;

export const ExportQuery = z.strictObject({ from: z.optional(queryDate('from')), to: z.optional(queryDate('to')) });
export type ExportQuery = z.infer<typeof ExportQuery>;

/** POST /spend/exports: the range, with the rules and defaults of `GET /spend` (at most 366 days). */
export const EXPORT_FORMATS = ['csv', 'focus'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** `format`: `csv` (default, the columns of GET /spend/export) or `focus` (FOCUS 1.2 cost and usage, shared/spend/focus.ts). */
export const CreateExportBody = z.strictObject({
  from: z.optional(queryDate('from')),
  to: z.optional(queryDate('to')),
  format: z.optional(z.enum(EXPORT_FORMATS, 'format must be csv or focus.')),
});
export type CreateExportBody = z.infer<typeof CreateExportBody>;

export const ExportParams = z.strictObject({ id: z.string() });
export type ExportParams = z.infer<typeof ExportParams>;
