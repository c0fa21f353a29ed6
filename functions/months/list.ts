import { httpHandler, ok } from '#shared/http/handler.ts';
import { MonthsQuery } from '#shared/months/schemas.ts';
import { listMonths } from '#shared/months/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /months?from=YYYY-MM&to=YYYY-MM (at most 36) → 200 {items: [{month, status, closedAt, closedBy, settledThrough}]} */
export const handler = httpHandler({ auth: jwtAuth, query: MonthsQuery }, async ({ auth, query }) => ok(await listMonths(auth.accountId, query)));
