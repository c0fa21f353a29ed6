import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { listConnections } from '#shared/connections/service.ts';

/** GET /connections → {items, nextCursor: null} (at most one per provider). */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await listConnections(auth.accountId)));
