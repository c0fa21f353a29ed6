import { httpHandler, ok } from '#shared/http/handler.ts';
import { ListAlertsQuery } from '#shared/alerts/schemas.ts';
import { listAlertsView } from '#shared/alerts/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /alerts?status&limit&cursor → 200 {items, nextCursor}, newest first */
export const handler = httpHandler({ auth: jwtAuth, query: ListAlertsQuery }, async ({ auth, query }) => ok(await listAlertsView(auth.accountId, query)));
