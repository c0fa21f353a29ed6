import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ConnectionParams, ReconciliationQuery } from '#shared/connections/schemas.ts';
import { reconciliation } from '#shared/connections/service.ts';

/** GET /connections/{id}/reconciliation?from&to (≤ 92 days) → per day, computed vs billed. */
export const handler = httpHandler({ auth: jwtAuth, params: ConnectionParams, query: ReconciliationQuery }, async ({ auth, params, query }) =>
  ok(await reconciliation(auth.accountId, params.id, query)),
);
