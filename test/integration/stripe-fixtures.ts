/** Stripe-shaped events and subscriptions for the integration tests, signed like Stripe signs (the stand-in's secret). */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { expect } from 'vitest';
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

/**
 * Submits a form of a stand-in page (checkout, portal) as a browser without JavaScript would: the form holding the
 * button labelled `button` (default: the page's first form). Returns the response without following it.
 */
export async function submitForm(pageUrl: string, button?: string): Promise<Response> {
  const page = await fetch(pageUrl);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await page.text();
  expect(html).not.toMatch(/<script/i);
  const forms = [...html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
  const form = button === undefined ? forms[0] : forms.find((f) => f[2]!.includes(`<button type="submit">${button}</button>`));
  expect(form, `the page has a POST form${button ? ` with the button "${button}"` : ''}`).toBeDefined();
  const fields = [...form![2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]+)">/g)].map((m): [string, string] => [m[1]!, m[2]!]);
  return fetch(new URL(form![1]!.replaceAll('&amp;', '&'), pageUrl).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}
