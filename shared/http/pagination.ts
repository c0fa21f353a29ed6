/** `?limit=&cursor=` of paginated lists (docs/api.md: limit 1–100, default 50; the cursor is opaque). */
import * as z from 'zod/mini';

export const DEFAULT_LIMIT = 50;

export const MAX_LIMIT = 100;

/** A query string is text: the digits are read as a number here. The document calls it an integer (LIMIT_DOCUMENTED). */
export const LimitValue = z.pipe(
  z.string().check(z.regex(/^\d{1,3}$/, 'limit must be an integer from 1 to 100.')),
  z.pipe(z.transform(Number), z.number().check(z.minimum(1, 'limit must be at least 1.'), z.maximum(MAX_LIMIT, 'limit must be at most 100.'))),
);

/** What `limit` is for a client: an integer 1–100, 50 when left out (the OpenAPI document shows this). */
export const LIMIT_DOCUMENTED = { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT } as const;

export const Limit = z.optional(LimitValue);

export const Cursor = z.optional(z.string().check(z.minLength(1), z.maxLength(2048, 'cursor is too long.')));

export const PageQuery = z.strictObject({ limit: Limit, cursor: Cursor });
export type PageQuery = z.infer<typeof PageQuery>;
