import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';

/** A key's hash in the path; anything else cannot name a key (→ 404, like an unknown one). */
export const KeyParams = z.strictObject({ hash: z.string() });

export const ListKeysQuery = z.strictObject({ limit: Limit, cursor: Cursor });
export type ListKeysQuery = z.infer<typeof ListKeysQuery>;

const Day = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD.'));
export const KeyBreakdownQuery = z.strictObject({ from: z.optional(Day), to: z.optional(Day) });
export type KeyBreakdownQuery = z.infer<typeof KeyBreakdownQuery>;

export const LabelBody = z.strictObject({
  label: z.nullable(
    z.string('label must be a string or null.').check(z.trim(), z.minLength(1, 'label must not be empty (use null to clear it).'), z.maxLength(100, 'label must be at most 100 characters.')),
  ),
});
export type LabelBody = z.infer<typeof LabelBody>;
