/** Stripe-shaped events and subscriptions for the integration tests, signed like Stripe signs (the stand-in's secret). */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { LOCAL_STRIPE_PRICES } from '#local/stripe-mock.ts';
import { stack } from './harness.ts';

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export function stripeEvent(type: string, object: Record<string, unknown>, created = nowSeconds()) {
  return {
    id: `evt_test_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created,
    type,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
  };
}

export interface SubscriptionShape {
  id?: string;
  accountId: string;
  customer?: string;
  status?: string;
  price?: string;
  start?: number;
  end?: number;
}

export function subscriptionObject(s: SubscriptionShape) {
  const id = s.id ?? `sub_test_${randomBytes(8).toString('hex')}`;
  const start = s.start ?? nowSeconds();
  return {
    id,
    object: 'subscription',
    customer: s.customer ?? `cus_test_${randomBytes(8).toString('hex')}`,
    status: s.status ?? 'active',
    metadata: { accountId: s.accountId },
    created: start,
    items: {
      object: 'list',
      data: [
        {
          id: `si_${randomBytes(6).toString('hex')}`,
          object: 'subscription_item',
          price: { id: s.price ?? LOCAL_STRIPE_PRICES.GROWTH, object: 'price' },
          quantity: 1,
          current_period_start: start,
          current_period_end: s.end ?? start + 30 * 86400,
        },
      ],
    },
  };
}

/** A `Stripe-Signature` header for `payload` (the stack's webhook secret unless another is given). */
export function signStripe(payload: string, options: { timestamp?: number; secret?: string } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? stack().stripeWebhookSecret,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  });
}
