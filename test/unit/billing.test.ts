/**
 * Billing's pure decisions: price ↔ plan, Stripe status → billingStatus, the ordering rule, what each Stripe
 * event changes, the checkout 409s, and the webhook signature check over the raw body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { billingStatusFromStripe, planForPrice, priceForPlan, type PriceTable } from '#shared/billing/plans.ts';
import { eventTime, invoicePeriod, invoiceSubscription, shouldApply, subscriptionChange } from '#shared/billing/webhook.ts';
import { assertCanCheckout } from '#shared/billing/checkout.ts';
import { CheckoutBody } from '#shared/billing/schemas.ts';
import { InvalidSignature, stripeWebhookAuth } from '#shared/billing/webhook-auth.ts';
import { resetStripe } from '#shared/billing/stripe.ts';
import { resetConfig } from '#shared/config.ts';
import type { HttpError } from '#shared/http/errors.ts';
import { validate } from '#shared/http/validate.ts';
import { addMonth, parseForm } from '#local/stripe-mock.ts';
import { apiEvent } from './helpers.ts';

const PRICES: PriceTable = { GROWTH: 'price_g', SCALE: 'price_s' };
const T0 = 1_790_000_000; // 2026-09-21T…Z, epoch seconds

function subscription(overrides: Record<string, unknown> = {}, item: Record<string, unknown> = {}): Stripe.Subscription {
  return {
    id: 'sub_1',
    object: 'subscription',
    customer: 'cus_1',
    status: 'active',
    metadata: { accountId: 'br_1' },
    items: {
      object: 'list',
      data: [{ id: 'si_1', object: 'subscription_item', price: { id: 'price_g' }, current_period_start: T0, current_period_end: T0 + 30 * 86400, ...item }],
    },
    ...overrides,
  } as unknown as Stripe.Subscription;
}

describe('price ↔ plan (one place)', () => {
  it('maps the configured prices both ways, and nothing else', () => {
    expect(planForPrice('price_g', PRICES)).toBe('GROWTH');
    expect(planForPrice('price_s', PRICES)).toBe('SCALE');
    expect(planForPrice('price_other', PRICES)).toBeUndefined();
    expect(planForPrice(undefined, PRICES)).toBeUndefined();
    expect(planForPrice('', { GROWTH: '' })).toBeUndefined();
    expect(priceForPlan('GROWTH', PRICES)).toBe('price_g');
    expect(priceForPlan('SCALE', PRICES)).toBe('price_s');
    expect(() => priceForPlan('SCALE', { GROWTH: 'price_g' })).toThrow(/STRIPE_PRICE_SCALE/);
  });
});

describe('Stripe subscription status → billingStatus', () => {
  it.each([
    ['active', 'ACTIVE'],
    ['trialing', 'TRIALING'],
    ['past_due', 'PAST_DUE'],
    ['unpaid', 'PAST_DUE'],
    ['canceled', 'CANCELED'],
    ['incomplete_expired', 'CANCELED'],
    ['incomplete', 'INCOMPLETE'],
    ['paused', 'INCOMPLETE'],
    ['something_new', 'INCOMPLETE'],
  ])('%s → %s', (status, expected) => {
    expect(billingStatusFromStripe(status)).toBe(expected);
  });
});

describe('the ordering rule', () => {
  it('applies a state unless the account holds a newer one (equal times: the later delivery wins)', () => {
    expect(shouldApply(undefined, '2026-11-01T00:00:00.000Z')).toBe(true);
    expect(shouldApply('2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')).toBe(true);
    expect(shouldApply('2026-11-01T00:00:00.000Z', '2026-11-01T00:00:01.000Z')).toBe(true);
    expect(shouldApply('2026-11-01T00:00:01.000Z', '2026-11-01T00:00:00.000Z')).toBe(false);
  });

  it('makes any delivery order end in the newest state', () => {
    const states = Array.from({ length: 8 }, (_, i) => ({ time: eventTime(T0 + i * 7), status: `s${i}` }));
    for (let round = 0; round < 50; round++) {
      const shuffled = [...states].sort(() => Math.random() - 0.5);
      let held: { time: string; status: string } | undefined;
      for (const state of shuffled) if (shouldApply(held?.time, state.time)) held = state;
      expect(held).toEqual(states.at(-1));
    }
  });

  it('uses the event’s created second as an ISO instant with ms', () => {
    expect(eventTime(T0)).toBe(new Date(T0 * 1000).toISOString());
    expect(eventTime(T0)).toMatch(/\.000Z$/);
  });
});

describe('what a subscription state changes', () => {
  const time = eventTime(T0);

  it('a live subscription: its plan (from the item price), status and the ITEM’s period (API 2026)', () => {
    expect(subscriptionChange(subscription(), time, PRICES)).toEqual({
      change: {
        eventTime: time,
        plan: 'GROWTH',
        billingStatus: 'ACTIVE',
        period: { start: new Date(T0 * 1000).toISOString(), end: new Date((T0 + 30 * 86400) * 1000).toISOString() },
        subscriptionId: 'sub_1',
        subscriptionOrder: `${time}#sub_1`,
        customerId: 'cus_1',
        match: 'take-over',
      },
    });
  });

  it('reads the legacy period on the subscription when the item has none', () => {
    const legacy = subscription({ current_period_start: T0, current_period_end: T0 + 100 }, { current_period_start: undefined, current_period_end: undefined });
    const plan = subscriptionChange(legacy, time, PRICES);
    expect('change' in plan && plan.change.period).toEqual({ start: new Date(T0 * 1000).toISOString(), end: new Date((T0 + 100) * 1000).toISOString() });
  });

  it('past_due keeps the plan; canceled drops to FREE, CANCELED, no period, only for the account’s subscription', () => {
    const pastDue = subscriptionChange(subscription({ status: 'past_due' }, { price: { id: 'price_s' } }), time, PRICES);
    expect('change' in pastDue && pastDue.change).toMatchObject({ plan: 'SCALE', billingStatus: 'PAST_DUE' });
    const canceled = subscriptionChange(subscription({ status: 'canceled' }), time, PRICES);
    expect('change' in canceled && canceled.change).toMatchObject({ plan: 'FREE', billingStatus: 'CANCELED', period: null, match: 'current-or-none' });
  });

  it('ignores a subscription that sells none of our prices', () => {
    expect(subscriptionChange(subscription({}, { price: { id: 'price_other' } }), time, PRICES)).toEqual({
      ignore: expect.stringContaining('no price of ours'),
    });
  });

  it('finds an invoice’s subscription and period (API 2026 parent/line shapes, and the legacy field)', () => {
    const invoice = {
      id: 'in_1',
      parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_9', metadata: {} } },
      lines: {
        data: [
          { period: { start: 1, end: 2 }, parent: { type: 'subscription_item_details', subscription_item_details: { subscription: 'sub_9', proration: true } } },
          { period: { start: T0, end: T0 + 10 }, parent: { type: 'subscription_item_details', subscription_item_details: { subscription: 'sub_9', proration: false } } },
        ],
      },
    } as unknown as Stripe.Invoice;
    expect(invoiceSubscription(invoice)).toBe('sub_9');
    expect(invoicePeriod(invoice)).toEqual({ start: new Date(T0 * 1000).toISOString(), end: new Date((T0 + 10) * 1000).toISOString() });
    expect(invoiceSubscription({ subscription: 'sub_old', lines: { data: [] } } as unknown as Stripe.Invoice)).toBe('sub_old');
    expect(invoiceSubscription({ parent: null, lines: { data: [] } } as unknown as Stripe.Invoice)).toBeUndefined();
  });
});

describe('checkout', () => {
  const conflict = (fn: () => void): string | undefined => {
    try {
      fn();
    } catch (error) {
      expect((error as HttpError).status).toBe(409);
      return (error as HttpError).slug;
    }
    return undefined;
  };

  it('allows FREE and CANCELED accounts; refuses the current plan and a second subscription with 409', () => {
    expect(conflict(() => assertCanCheckout({ plan: 'FREE', billingStatus: 'ACTIVE' }, 'GROWTH'))).toBeUndefined();
    expect(conflict(() => assertCanCheckout({ plan: 'FREE', billingStatus: 'CANCELED' }, 'GROWTH'))).toBeUndefined();
    expect(conflict(() => assertCanCheckout({ plan: 'GROWTH', billingStatus: 'CANCELED' }, 'GROWTH'))).toBeUndefined();
    expect(conflict(() => assertCanCheckout({ plan: 'GROWTH', billingStatus: 'ACTIVE' }, 'GROWTH'))).toBe('plan-current');
    expect(conflict(() => assertCanCheckout({ plan: 'GROWTH', billingStatus: 'PAST_DUE' }, 'GROWTH'))).toBe('plan-current');
    expect(conflict(() => assertCanCheckout({ plan: 'GROWTH', billingStatus: 'ACTIVE' }, 'SCALE'))).toBe('subscription-exists');
  });

  it('takes {plan: GROWTH|SCALE} only', () => {
    expect(validate(CheckoutBody, { plan: 'SCALE' }, 'body')).toEqual({ plan: 'SCALE' });
    for (const body of [{ plan: 'FREE' }, { plan: 'growth' }, {}, { plan: 'GROWTH', accountId: 'br_x' }]) {
      expect(() => validate(CheckoutBody, body, 'body')).toThrow();
    }
  });
});

describe('the webhook signature (stripe auth kind)', () => {
  const secret = 'whsec_unit_test';
  const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'invoice.paid', created: T0, data: { object: {} } });
  const sign = (body: string, options: { timestamp?: number; secret?: string } = {}) =>
    Stripe.webhooks.generateTestHeaderString({ payload: body, secret: options.secret ?? secret, ...(options.timestamp ? { timestamp: options.timestamp } : {}) });
  const call = (body: string | undefined, header: string | undefined, base64 = false) =>
    stripeWebhookAuth(
      apiEvent({
        headers: header === undefined ? {} : { 'stripe-signature': header },
        ...(body === undefined ? {} : { body: base64 ? Buffer.from(body).toString('base64') : body }),
        isBase64Encoded: base64,
      }),
    );
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidSignature);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).slug).toBe('invalid-signature');
  };

  beforeAll(() => {
    process.env.STRIPE_SECRET_KEY = 'sk_test_unit';
    process.env.STRIPE_WEBHOOK_SECRET = secret;
    resetConfig();
    resetStripe();
  });
  afterAll(() => {
    delete process.env.STRIPE_SECRET_KEY;
    delete process.env.STRIPE_WEBHOOK_SECRET;
    resetConfig();
    resetStripe();
  });

  it('accepts the raw body it signs, as text or base64', async () => {
    expect((await call(payload, sign(payload))).id).toBe('evt_1');
    expect((await call(payload, sign(payload), true)).id).toBe('evt_1');
  });

  it('refuses a missing, forged, tampered or stale signature, and a re-serialized body', async () => {
    await refusal(call(payload, undefined));
    await refusal(call(payload, ''));
    await refusal(call(payload, sign(payload, { secret: 'whsec_someone_else' })));
    await refusal(call(payload.replace('invoice.paid', 'invoice.voided'), sign(payload)));
    await refusal(call(payload, sign(payload, { timestamp: Math.floor(Date.now() / 1000) - 600 })));
    const pretty = JSON.stringify(JSON.parse(payload), null, 2); // same JSON, other bytes
    await refusal(call(pretty, sign(payload)));
    await refusal(call(undefined, sign(payload)));
  });
});

describe('the Stripe stand-in', () => {
  it('parses the SDK’s form encoding into nested params', () => {
    const body =
      'mode=subscription&line_items[0][price]=price_g&line_items[0][quantity]=1&metadata[accountId]=br_1&subscription_data[metadata][accountId]=br_1';
    expect(parseForm(encodeURI(body))).toEqual({
      mode: 'subscription',
      line_items: [{ price: 'price_g', quantity: '1' }],
      metadata: { accountId: 'br_1' },
      subscription_data: { metadata: { accountId: 'br_1' } },
    });
    expect(parseForm('__proto__[x]=1&a[constructor][y]=2')).toEqual({});
  });

  it('bills a month ahead, clamping the day like Stripe', () => {
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(addMonth(at('2026-01-15T10:00:00Z'))).toBe(at('2026-02-15T10:00:00Z'));
    expect(addMonth(at('2026-01-31T10:00:00Z'))).toBe(at('2026-02-28T10:00:00Z'));
    expect(addMonth(at('2026-12-31T00:00:00Z'))).toBe(at('2027-01-31T00:00:00Z'));
  });
});
