import { httpHandler, noContent } from '#shared/http/handler.ts';
import { IngestKeyParams } from '#shared/ingest-keys/schemas.ts';
import { deleteIngestKey } from '#shared/ingest-keys/service.ts';

/** DELETE /ingest-keys/{id} → 204; the key is refused from then on. Unknown or another account's id: 404. */
export const handler = httpHandler({ auth: 'jwt', params: IngestKeyParams }, async ({ auth, params }) => {
  await deleteIngestKey(auth.accountId, params.id);
  return noContent();
});
