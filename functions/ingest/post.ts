import { httpHandler, ok } from '#shared/http/handler.ts';
import { ingestKeyAuth } from '#shared/ingest-keys/auth.ts';
import { IngestBody } from '#shared/ingest/schemas.ts';
import { ingest } from '#shared/ingest/service.ts';

/** POST /ingest (x-api-key) → 200 {accepted, duplicates, rejected: [{index, code, message}]} */
export const handler = httpHandler({ auth: ingestKeyAuth, body: IngestBody }, async ({ auth, body }) =>
  ok(await ingest(auth.accountId, body.events)),
);
