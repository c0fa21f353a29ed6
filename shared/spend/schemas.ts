import * as z from 'zod/mini';
import { queryDate } from '#shared/http/dates.ts';
import { Cursor, Limit } from '#shared/http/pagination.ts';
import { tagFilterField } from '#shared/tags/schemas.ts';

export const GROUP_BY = ['day', 'model', 'provider', 'key', 'project', 'tag', 'customer', 'feature'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

const name = (field: string) =>
  z.string(`${field} must be text.`).check(z.minLength(1, `${field} must not be empty.`), z.maxLength(200, `${field} must be at most 200 characters.`));

export const SpendQuery = z.strictObject({
  from: z.optional(queryDate('from')),
  to: z.optional(queryDate('to')),
  groupBy: z.optional(z.enum(GROUP_BY, `groupBy must be one of ${GROUP_BY.join(', ')}.`)),
  /** groupBy=tag: the tag's name whose effective values group the keys (required there, refused elsewhere). */
  tag: z.optional(
    z.string('tag must be text.').check(z.regex(/^[a-z0-9_.\-:/]{1,64}$/, 'tag must be a tag name: 1–64 characters of a-z 0-9 _ . - : / (lower case).')),
  ),
  /** groupBy=tag: `allocate` spreads the spend of untagged keys and usage without a key over the tag's values. */
  shared: z.optional(z.enum(['allocate'], 'shared must be allocate.')),
  /** Only the keys whose effective tags hold `name:value`: every figure is theirs. */
  tagFilter: z.optional(tagFilterField('tagFilter')),
  /** One customer (with groupBy=customer) or feature (with groupBy=feature) of the events. */
  customer: z.optional(z.string('customer must be text.').check(z.minLength(1, 'customer must not be empty.'), z.maxLength(128, 'customer must be at most 128 characters.'))),
  feature: z.optional(z.string('feature must be text.').check(z.minLength(1, 'feature must not be empty.'), z.maxLength(64, 'feature must be at most 64 characters.'))),
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

/** GET /customers: the range (whole months), the order, a page. */
export const CustomersQuery = z.strictObject({
  from: z.optional(queryDate('from')),
  to: z.optional(queryDate('to')),
  sort: z.optional(z.enum(['cost', 'name'], 'sort must be cost or name.')),
  limit: Limit,
  cursor: Cursor,
});
export type CustomersQuery = z.infer<typeof CustomersQuery>;
