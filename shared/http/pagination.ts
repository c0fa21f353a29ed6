/** `?limit=&cursor=` of paginated lists (API.md: limit 1–100, default 50; the cursor is opaque). */
import * as z from 'zod/mini';

export const DEFAULT_LIMIT = 50;

export const Limit = z.optional(
  z.pipe(
    z.string().check(z.regex(/^\d{1,3}$/, 'limit must be an integer from 1 to 100.')),
    z.pipe(z.transform(Number), z.number().check(z.minimum(1, 'limit must be at least 1.'), z.maximum(100, 'limit must be at most 100.'))),
  ),
);

export const Cursor = z.optional(z.string().check(z.minLength(1), z.maxLength(2048, 'cursor is too long.')));

export const PageQuery = z.strictObject({ limit: Limit, cursor: Cursor });
export type PageQuery = z.infer<typeof PageQuery>;
