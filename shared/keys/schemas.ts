import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';
import { queryDate } from '#shared/http/dates.ts';

/** A key's hash in the path; anything else cannot name a key (→ 404, like an unknown one). */
export const KeyParams = z.strictObject({ hash: z.string() });

export const ListKeysQuery = z.strictObject({ limit: Limit, cursor: Cursor });
export type ListKeysQuery = z.infer<typeof ListKeysQuery>;

export const KeyBreakdownQuery = z.strictObject({ from: z.optional(queryDate('from')), to: z.optional(queryDate('to')) });
export type KeyBreakdownQuery = z.infer<typeof KeyBreakdownQuery>;

export const LabelBody = z.strictObject({
  label: z.nullable(
    z.string('label must be a string or null.').check(z.trim(), z.minLength(1, 'label must not be empty (use null to clear it).'), z.maxLength(100, 'label must be at most 100 characters.')),
  ),
});
export type LabelBody = z.infer<typeof LabelBody>;
