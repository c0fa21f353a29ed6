import { httpHandler, noContent } from '#shared/http/handler.ts';
import { IngestKeyParams } from '#shared/ingest-keys/schemas.ts';
import { deleteIngestKey } from '#shared/ingest-keys/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** DELETE /ingest-keys/{id} → 204; the key is refused from then on. Unknown or another account's id: 404. */
export const handler = httpHandler({ auth: jwtAuth, params: IngestKeyParams }, async ({ auth, params }) => {
  await deleteIngestKey(auth.accountId, params.id);
  return noContent();
});
