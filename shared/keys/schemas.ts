import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';
import { queryDate } from '#shared/http/dates.ts';
import { tagFilterField, TagsField } from '#shared/tags/schemas.ts';

/** A key's hash in the path; anything else cannot name a key (→ 404, like an unknown one). */
export const KeyParams = z.strictObject({ hash: z.string() });

export const KEY_SORTS = ['monthToDate', 'today', 'total', 'forecastMonthEnd', 'lastSeenAt', 'name', 'month'] as const;
export type KeySort = (typeof KEY_SORTS)[number];
export const KEY_SOURCES = ['ingest', 'connection'] as const;
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** GET /keys (docs/features/spend-and-exports.md): search, filters, sort and order across the whole account. */
export const ListKeysQuery = z.strictObject({
  q: z.optional(z.string('q must be text.').check(z.minLength(1, 'q must not be empty.'), z.maxLength(100, 'q must be at most 100 characters.'))),
  provider: z.optional(z.string('provider must be text.').check(z.minLength(1, 'provider must not be empty.'), z.maxLength(100, 'provider must be at most 100 characters.'))),
  source: z.optional(z.enum(KEY_SOURCES, 'source must be ingest or connection.')),
  tracked: z.optional(z.enum(['true', 'false'], 'tracked must be true or false.')),
  /** The keys of one project (an OpenAI project's or Anthropic workspace's id, as `project.id` of a key). */
  projectId: z.optional(z.string('projectId must be text.').check(z.minLength(1, 'projectId must not be empty.'), z.maxLength(200, 'projectId must be at most 200 characters.'))),
  /** Keys whose effective tags hold `name:value` (a name alone: keys that have the tag). */
  tag: z.optional(tagFilterField('tag')),
  /** A month (YYYY-MM): each key gains `spend.month` and `requests.month`, and `sort=month` is the default. */
  month: z.optional(z.string('month must be a month YYYY-MM.').check(z.regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'month must be a month YYYY-MM.'))),
  sort: z.optional(z.enum(KEY_SORTS, `sort must be one of ${KEY_SORTS.join(', ')}.`)),
  order: z.optional(z.enum(SORT_ORDERS, 'order must be asc or desc.')),
  limit: Limit,
  cursor: Cursor,
});
export type ListKeysQuery = z.infer<typeof ListKeysQuery>;

export const KeyBreakdownQuery = z.strictObject({ from: z.optional(queryDate('from')), to: z.optional(queryDate('to')) });
export type KeyBreakdownQuery = z.infer<typeof KeyBreakdownQuery>;

/** PATCH /keys/{hash}: the label (null clears it) and/or the key's own tags (replaced as a whole; `{}` clears them). */
export const LabelBody = z
  .strictObject({
    label: z.optional(
      z.nullable(
        z.string('label must be a string or null.').check(z.trim(), z.minLength(1, 'label must not be empty (use null to clear it).'), z.maxLength(100, 'label must be at most 100 characters.')),
      ),
    ),
    tags: z.optional(TagsField),
  })
  .check(
    z.refine((patch) => patch.label !== undefined || patch.tags !== undefined, {
      error: 'Send label, tags or both.',
      when: (payload) => payload.issues.length === 0,
    }),
  );
export type LabelBody = z.infer<typeof LabelBody>;
