import { httpHandler, ok } from '#shared/http/handler.ts';
import { listIngestKeys } from '#shared/ingest-keys/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /ingest-keys → 200 {items: [{id, name, prefix, createdAt, lastUsedAt}], nextCursor: null}, newest first. */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await listIngestKeys(auth.accountId)));
