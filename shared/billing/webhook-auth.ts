/**
 * The `stripe` auth kind of the route table: the request is Stripe's when its `Stripe-Signature` header signs the
 * RAW body (base64-decoded when API Gateway / the Function URL says so) with our webhook secret, within Stripe's
 * 300 s tolerance. Verified before anything is parsed; the verified event is the handler's principal.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import Stripe from 'stripe';
import * as z from 'zod/mini';
import { safeParse } from 'zod/mini';
import { stripeSecrets } from '#shared/billing/stripe.ts';
import { HttpError, PayloadTooLarge } from '#shared/http/errors.ts';
import { MAX_BODY_BYTES } from '#shared/http/body.ts';

export class InvalidSignature extends HttpError {
  constructor(detail: string) {
    super(400, 'invalid-signature', 'The Stripe signature is not valid.', detail);
  }
}

/** The body exactly as it arrived: bytes for a base64 body, the string otherwise. */
export function rawWebhookBody(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>): string | Buffer {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
}

/**
 * The envelope every Stripe event has. Only Stripe (or whoever holds our signing secret) can get this far, but a
 * signed body that is not shaped like an event is still a 400, never a 500.
 */
const StripeEventEnvelope = z.object({
  id: z.string().check(z.regex(/^evt_[A-Za-z0-9_]{1,250}$/)),
  type: z.string().check(z.minLength(1), z.maxLength(100)),
  created: z.number().check(z.int(), z.minimum(0), z.maximum(32_503_680_000)),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

export async function stripeWebhookAuth(event: APIGatewayProxyEventV2): Promise<Stripe.Event> {
  const header = event.headers?.['stripe-signature'];
  if (!header) throw new InvalidSignature('The Stripe-Signature header is missing.');
  const raw = rawWebhookBody(event);
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw new PayloadTooLarge(MAX_BODY_BYTES);
  const { webhookSecret } = await stripeSecrets();
  let verified: Stripe.Event;
  try {
    // The static helper: verifying needs the signing secret only, not an API client.
    verified = Stripe.webhooks.constructEvent(raw, header, webhookSecret);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw new InvalidSignature('The Stripe-Signature header does not sign this body with our secret within 300 s.');
    }
    // Signed by our secret but not an event (not JSON): refuse it the same way, it changes nothing.
    throw new InvalidSignature('The signed body is not a Stripe event.');
  }
  if (!safeParse(StripeEventEnvelope, verified).success) throw new InvalidSignature('The signed body is not a Stripe event.');
  return verified;
}
