import { httpHandler, ok } from '#shared/http/handler.ts';
import { stripeWebhookAuth } from '#shared/billing/webhook-auth.ts';
import { handleStripeEvent } from '#shared/billing/webhook.ts';

/**
 * POST /billing/webhook (Stripe-Signature over the raw body; no JWT) → 200 {received: true, duplicate?, ignored?, stale?};
 * a missing, forged or stale signature → 400. No body schema: the authenticator verifies the raw bytes first.
 */
export const handler = httpHandler({ billing: true, auth: stripeWebhookAuth, rawBody: true }, async ({ auth }) => ok(await handleStripeEvent(auth)));
