import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ConnectionParams, PatchConnectionBody } from '#shared/connections/schemas.ts';
import { updateConnection } from '#shared/connections/service.ts';

/** PATCH /connections/{id} {name?, adminKey?, status?} → 200 (a new admin key is checked as on create). */
export const handler = httpHandler({ auth: jwtAuth, params: ConnectionParams, body: PatchConnectionBody }, async ({ auth, params, body }) =>
  ok(await updateConnection(auth.accountId, params.id, body)),
);
