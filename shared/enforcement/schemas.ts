/** The enforcement endpoints' request schemas, apart from their reads (api.ts): the OpenAPI document takes them without the data layer. */
import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';
import { providerId } from '#shared/providers/canonical.ts';

export const ACTION_RESULTS = ['ok', 'failed'] as const;

export const ListActionsQuery = z.strictObject({
  /** One budget's acts (gsi1); another account's or an unknown budget: 404. */
  budgetId: z.optional(z.string()),
  /** One provider's acts: a known provider's any spelling is that provider (`OpenAI` → `openai`), others as sent. */
  provider: z.optional(
    z.string('provider must be text.').check(
      z.overwrite(providerId),
      z.regex(/^[a-z0-9][a-z0-9._-]{0,31}$/, 'provider must be 1–32 characters of a-z, 0-9, ".", "_" or "-".'),
    ),
  ),
  /** Only the acts that went through (`ok`) or that the provider refused (`failed`). */
  result: z.optional(z.enum(ACTION_RESULTS, 'result must be ok or failed.')),
  limit: Limit,
  cursor: Cursor,
});
export type ListActionsQuery = z.infer<typeof ListActionsQuery>;
