import { created, httpHandler } from '#shared/http/handler.ts';
import { openPortal } from '#shared/billing/checkout.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /billing/portal (no body) → 201 {url}; an account without a Stripe customer → 409 */
export const handler = httpHandler({ billing: true, auth: jwtAuth }, async ({ auth, event }) =>
  created(await openPortal(auth.accountId, event.headers?.origin)),
);
