import { created, httpHandler } from '#shared/http/handler.ts';
import { openPortal } from '#shared/billing/checkout.ts';

/** POST /billing/portal (no body) → 201 {url}; an account without a Stripe customer → 409 */
export const handler = httpHandler({ auth: 'jwt' }, async ({ auth }) => created(await openPortal(auth.accountId)));
