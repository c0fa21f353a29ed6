import { httpHandler, noContent } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ConnectionParams } from '#shared/connections/schemas.ts';
import { deleteConnection } from '#shared/connections/service.ts';

/** DELETE /connections/{id} → 204: the sealed admin key is destroyed; imported spend and keys stay. */
export const handler = httpHandler({ auth: jwtAuth, params: ConnectionParams }, async ({ auth, params }) => {
  await deleteConnection(auth.accountId, params.id);
  return noContent();
});
