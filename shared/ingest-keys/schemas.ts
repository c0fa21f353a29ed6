/** Request schemas of the /ingest-keys endpoints (zod/mini). */
import * as z from 'zod/mini';

export const INGEST_KEY_NAME_MAX = 100;

export const CreateIngestKeyBody = z.strictObject({
  name: z.optional(
    z.string().check(
      z.trim(),
      z.minLength(1, 'name must not be empty.'),
      z.maxLength(INGEST_KEY_NAME_MAX, `name must be at most ${INGEST_KEY_NAME_MAX} characters.`),
    ),
  ),
});
export type CreateIngestKeyBody = z.infer<typeof CreateIngestKeyBody>;

/** The id is checked by the domain: a malformed id is an unknown id (404), not a 400. */
export const IngestKeyParams = z.strictObject({
  id: z.string(),
});
export type IngestKeyParams = z.infer<typeof IngestKeyParams>;
