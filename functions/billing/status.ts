import { httpHandler, ok } from '#shared/http/handler.ts';
import { billingStatus } from '#shared/billing/status.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /billing/status → 200 {plan, billingStatus, usage: {trackedRequests, limit, keys, keyLimit}, currentPeriodEnd} */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await billingStatus(auth.accountId)));
