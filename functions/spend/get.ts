import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { SpendQuery } from '#shared/spend/schemas.ts';
import { getSpend } from '#shared/spend/service.ts';

/** GET /spend?from&to&groupBy → 200 the account's spend of the range, grouped, with totals and the forecast */
export const handler = httpHandler({ auth: jwtAuth, query: SpendQuery }, async ({ auth, query }) => ok(await getSpend(auth.accountId, query)));
