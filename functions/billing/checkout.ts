import { created, httpHandler } from '#shared/http/handler.ts';
import { CheckoutBody } from '#shared/billing/schemas.ts';
import { startCheckout } from '#shared/billing/checkout.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /billing/checkout {plan: GROWTH|SCALE} → 201 {url, sessionId}; FREE/unknown → 400, the current plan → 409 */
export const handler = httpHandler({ billing: true, auth: jwtAuth, body: CheckoutBody }, async ({ auth, body, event }) =>
  created(await startCheckout(auth.accountId, body.plan, new Date(), event.headers?.origin)),
);
