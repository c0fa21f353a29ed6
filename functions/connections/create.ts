import { created, httpHandler } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { CreateConnectionBody } from '#shared/connections/schemas.ts';
import { createConnection } from '#shared/connections/service.ts';

/** POST /connections {provider, adminKey, name?} → 201 the connection (the key checked once with the provider, stored sealed). */
export const handler = httpHandler({ auth: jwtAuth, body: CreateConnectionBody }, async ({ auth, body }) => created(await createConnection(auth.accountId, body)));
