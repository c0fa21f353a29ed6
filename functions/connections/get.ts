import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ConnectionParams } from '#shared/connections/schemas.ts';
import { getConnectionView } from '#shared/connections/service.ts';

/** GET /connections/{id} → the connection (another account's id: 404). */
export const handler = httpHandler({ auth: jwtAuth, params: ConnectionParams }, async ({ auth, params }) => ok(await getConnectionView(auth.accountId, params.id)));
