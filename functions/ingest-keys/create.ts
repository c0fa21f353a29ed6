import { created, httpHandler } from '#shared/http/handler.ts';
import { CreateIngestKeyBody } from '#shared/ingest-keys/schemas.ts';
import { createIngestKey } from '#shared/ingest-keys/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /ingest-keys {name?} (the body may be left out) → 201 {id, name, key, prefix, createdAt}; `key` is shown only here. */
export const handler = httpHandler({ auth: jwtAuth, body: CreateIngestKeyBody, optionalBody: true }, async ({ auth, body }) =>
  created(await createIngestKey(auth.accountId, body)),
);
