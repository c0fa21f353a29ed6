/**
 * Billing against the local stack, which runs the Stripe stand-in (local/stripe-mock.ts): the handlers use the real
 * Stripe SDK against it, its Pay and Cancel forms send Stripe-signed webhooks to /api/billing/webhook.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { createStripe } from '#shared/billing/stripe.ts';
import { LOCAL_STRIPE_PRICES, LOCAL_STRIPE_SECRET_KEY } from '#local/stripe-mock.ts';
import { api, dynamo, registerUser, stack, type RegisteredUser } from './harness.ts';
import { nowSeconds, signStripe, stripeEvent, submitForm, subscriptionObject } from './stripe-fixtures.ts';

const PROBLEM = 'application/problem+json';

/** The stand-in through the real SDK, like the handlers see it. */
const stripeClient = () => createStripe(LOCAL_STRIPE_SECRET_KEY, stack().stripeUrl);

async function accountItem(accountId: string): Promise<Record<string, any>> {
  const res = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.account(accountId), ConsistentRead: true }));
  return res.Item!;
}

async function dedupeItem(eventId: string): Promise<Record<string, any> | undefined> {
  const res = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.stripeEvent(eventId), ConsistentRead: true }));
  return res.Item;
}

async function status(user: RegisteredUser) {
  const res = await api('/billing/status', { token: user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function checkout(user: RegisteredUser, plan: string) {
  return api('/billing/checkout', { method: 'POST', token: user.token, body: { plan } });
}

async function subscribe(user: RegisteredUser, plan: 'GROWTH' | 'SCALE' = 'GROWTH') {
  const res = await checkout(user, plan);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const paid = await submitForm(res.body.url);
  expect(paid.status, await paid.clone().text()).toBe(303);
  return { session: res.body as { url: string; sessionId: string }, redirect: paid.headers.get('location')! };
}

// ---------------------------------------------------------------------------------------------------------------
// Signed events



const sign = signStripe;

async function deliver(event: object, header?: string | null, contentType = 'application/json') {
  const payload = JSON.stringify(event);
  const signature = header === undefined ? sign(payload) : header;
  return api('/billing/webhook', {
    method: 'POST',
    rawBody: payload,
    headers: { 'content-type': contentType, ...(signature === null ? {} : { 'stripe-signature': signature }) },
  });
}

// ---------------------------------------------------------------------------------------------------------------

describe('checkout → Pay → webhook → plan', () => {
  it('GROWTH after paying on the checkout page: status, limits and the subscription’s period end', async () => {
    const user = await registerUser();
    expect(await status(user)).toMatchObject({ plan: 'FREE', billingStatus: 'ACTIVE', usage: { limit: 10_000, keyLimit: 5 } });

    const res = await checkout(user, 'GROWTH');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/checkout\/cs_test_/), sessionId: expect.stringMatching(/^cs_test_/) });
    expect(res.body.url).toBe(`${stack().stripeUrl}/checkout/${res.body.sessionId}`);

    // What Stripe got: subscription mode, our price, the account as client_reference_id, a linked customer.
    const session = await stripeClient().checkout.sessions.retrieve(res.body.sessionId);
    expect(session).toMatchObject({ mode: 'subscription', status: 'open', client_reference_id: user.accountId, metadata: { accountId: user.accountId } });
    const account = await accountItem(user.accountId);
    expect(session.customer).toBe(account.stripeCustomerId);
    const customer = await stripeClient().customers.retrieve(account.stripeCustomerId);
    expect((customer as Stripe.Customer).metadata).toEqual({ accountId: user.accountId });
    const lookup = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.stripeCustomer(account.stripeCustomerId) }));
    expect(lookup.Item).toMatchObject({ accountId: user.accountId });

    const paid = await submitForm(res.body.url);
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${stack().stripeUrl}/app/billing/success?session_id=${res.body.sessionId}`);

    const after = await accountItem(user.accountId);
    expect(after.stripeSubscriptionId).toMatch(/^sub_/);
    const subscription = await stripeClient().subscriptions.retrieve(after.stripeSubscriptionId);
    expect(subscription.status).toBe('active');
    const periodEnd = new Date(subscription.items.data[0]!.current_period_end * 1000).toISOString();
    const periodStart = new Date(subscription.items.data[0]!.current_period_start * 1000).toISOString();
    expect(await status(user)).toMatchObject({
      plan: 'GROWTH',
      billingStatus: 'ACTIVE',
      usage: { trackedRequests: 0, limit: 1_000_000, keys: 0, keyLimit: 100 },
      currentPeriodEnd: periodEnd,
    });
    expect(after).toMatchObject({ periodStart, periodEnd, billingStatus: 'ACTIVE', plan: 'GROWTH' });
    const me = await api('/auth/me', { token: user.token });
    expect(me.body.account).toMatchObject({ plan: 'GROWTH', billingStatus: 'ACTIVE' });

    // The same plan again: 409; another plan while subscribed: 409 too (plan changes go through the portal).
    const again = await checkout(user, 'GROWTH');
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toBe(PROBLEM);
    expect(again.body.type).toBe('/problems/plan-current');
    const other = await checkout(user, 'SCALE');
    expect(other.status).toBe(409);
    expect(other.body.type).toBe('/problems/subscription-exists');
    // A second Pay on the completed session changes nothing.
    const payAgain = await fetch(`${res.body.url}/pay`, { method: 'POST', redirect: 'manual' });
    expect(payAgain.status).toBe(409);
  });

  it('portal → Cancel → FREE (CANCELED), and a new checkout is allowed again', async () => {
    const user = await registerUser();
    await subscribe(user, 'SCALE');
    expect(await status(user)).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE', usage: { limit: 10_000_000, keyLimit: 1_000 } });

    const portal = await api('/billing/portal', { method: 'POST', token: user.token });
    expect(portal.status, JSON.stringify(portal.body)).toBe(201);
    expect(portal.body).toEqual({ url: expect.stringMatching(/\/portal\/bps_/) });
    const canceled = await submitForm(portal.body.url, 'Cancel subscription');
    expect(canceled.status).toBe(303);
    expect(canceled.headers.get('location')).toBe(`${stack().stripeUrl}/app/billing`);

    const now = new Date();
    const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(await status(user)).toMatchObject({ plan: 'FREE', billingStatus: 'CANCELED', usage: { limit: 10_000, keyLimit: 5 }, currentPeriodEnd: monthEnd });
    const account = await accountItem(user.accountId);
    expect(account.periodStart).toBeUndefined();
    expect((await stripeClient().subscriptions.retrieve(account.stripeSubscriptionId)).status).toBe('canceled');

    // Subscribing again reuses the customer.
    const again = await checkout(user, 'GROWTH');
    expect(again.status).toBe(201);
    const session = await stripeClient().checkout.sessions.retrieve(again.body.sessionId);
    expect(session.customer).toBe(account.stripeCustomerId);
  });

  it('the checkout redirect alone changes nothing: only the webhook grants a plan', async () => {
    const user = await registerUser();
    const res = await checkout(user, 'GROWTH');
    expect(res.status).toBe(201);
    const before = await accountItem(user.accountId);
    const session = await stripeClient().checkout.sessions.retrieve(res.body.sessionId);
    const successUrl = session.success_url!.replace('{CHECKOUT_SESSION_ID}', res.body.sessionId);
    expect((await fetch(successUrl)).status).toBe(200);
    expect((await fetch(session.cancel_url!)).status).toBe(200);
    expect(await status(user)).toMatchObject({ plan: 'FREE', billingStatus: 'ACTIVE' });
    expect(await accountItem(user.accountId)).toEqual(before);
  });

  it('repeats of one checkout within a minute reuse the Checkout Session, and the customer', async () => {
    const user = await registerUser();
    const [a, b] = await Promise.all([checkout(user, 'GROWTH'), checkout(user, 'GROWTH')]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const sa = await stripeClient().checkout.sessions.retrieve(a.body.sessionId);
    const sb = await stripeClient().checkout.sessions.retrieve(b.body.sessionId);
    expect(sa.customer).toBe(sb.customer);
    expect(sa.customer).toBe((await accountItem(user.accountId)).stripeCustomerId);
  });
});

describe('POST /billing/checkout and /billing/portal refusals', () => {
  it('400 for FREE, an unknown plan, an extra field or no body; 401 without a token', async () => {
    const user = await registerUser();
    for (const body of [{ plan: 'FREE' }, { plan: 'ENTERPRISE' }, { plan: 'growth' }, {}]) {
      const res = await api('/billing/checkout', { method: 'POST', token: user.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
      expect(res.body.errors).toEqual([{ path: 'plan', message: expect.any(String) }]);
    }
    const extra = await api('/billing/checkout', { method: 'POST', token: user.token, body: { plan: 'GROWTH', accountId: 'br_someone' } });
    expect(extra.status).toBe(400);
    expect(extra.body.errors).toEqual([{ path: 'accountId', message: 'accountId is not a field of this request; leave it out.' }]);
    expect((await api('/billing/checkout', { method: 'POST', token: user.token })).status).toBe(400);
    expect((await api('/billing/checkout', { method: 'POST', body: { plan: 'GROWTH' } })).status).toBe(401);
    // Nothing was created at Stripe for these.
    expect((await accountItem(user.accountId)).stripeCustomerId).toBeUndefined();
  });

  it('portal: 409 for an account without a Stripe customer', async () => {
    const user = await registerUser();
    const res = await api('/billing/portal', { method: 'POST', token: user.token });
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect(res.body.type).toBe('/problems/no-billing-account');
    expect((await api('/billing/portal', { method: 'POST' })).status).toBe(401);
  });
});

describe('POST /billing/webhook', () => {
  it('answers 400, never 500, to signed bodies that are not Stripe events (found by the fuzzer)', async () => {
    const bad: unknown[] = [
      null,
      [],
      { id: null, type: 'checkout.session.completed', created: 1_600_000_000, data: { object: null } },
      { id: 'evt_1', type: 'checkout.session.completed', created: 1_600_000_000, data: {} },
      { id: 'evt_1', type: 'customer.subscription.updated', created: 'yesterday', data: { object: {} } },
      { id: `evt_${'x'.repeat(3000)}`, type: 'invoice.paid', created: 1_600_000_000, data: { object: {} } },
    ];
    for (const body of bad) {
      const payload = JSON.stringify(body);
      const res = await api('/billing/webhook', { method: 'POST', rawBody: payload, headers: { 'stripe-signature': sign(payload) } });
      expect(res.status, payload.slice(0, 80)).toBe(400);
      expect(res.body.type).toBe('/problems/invalid-signature');
    }
    const odd = {
      id: 'evt_odd_items',
      type: 'customer.subscription.updated',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'sub_x', status: 'active', customer: `cus_${'y'.repeat(3000)}`, metadata: { accountId: 'x'.repeat(3000) }, items: { data: [null] } } },
    };
    const res = await deliver(odd);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, ignored: true });
  });

  it('refuses missing, forged, tampered and stale signatures with 400: nothing changes', async () => {
    const user = await registerUser();
    const before = await accountItem(user.accountId);
    const event = stripeEvent('customer.subscription.updated', subscriptionObject({ accountId: user.accountId, price: LOCAL_STRIPE_PRICES.SCALE }));
    const payload = JSON.stringify(event);
    const tenMinutesAgo = nowSeconds() - 600;
    const attempts = {
      missing: await deliver(event, null),
      empty: await deliver(event, ''),
      garbage: await deliver(event, 't=1,v1=abc'),
      forged: await deliver(event, sign(payload, { secret: 'whsec_not_ours' })),
      tampered: await deliver({ ...event, type: 'customer.subscription.deleted' }, sign(payload)),
      stale: await deliver(event, sign(payload, { timestamp: tenMinutesAgo })),
    };
    for (const [name, res] of Object.entries(attempts)) {
      expect(res.status, name).toBe(400);
      expect(res.headers.get('content-type'), name).toBe(PROBLEM);
      expect(res.body.type, name).toBe('/problems/invalid-signature');
    }
    expect(await accountItem(user.accountId)).toEqual(before);
    expect(await dedupeItem(event.id)).toBeUndefined();

    // The same event, signed now: applied (the raw bytes were verified, even sent as a base64 body).
    const ok = await deliver(event, undefined, 'application/octet-stream');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ received: true });
    expect(await status(user)).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE' });
  });

  it('applies the same event once, however often (and concurrently) it is delivered', async () => {
    const user = await registerUser();
    const end = nowSeconds() + 40 * 86400;
    const event = stripeEvent('customer.subscription.updated', subscriptionObject({ accountId: user.accountId, end }));
    const payload = JSON.stringify(event);
    const header = sign(payload);
    const bodies: any[] = [];
    for (let round = 0; round < 10; round++) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, () =>
          api('/billing/webhook', { method: 'POST', rawBody: payload, headers: { 'content-type': 'application/json', 'stripe-signature': header } }),
        ),
      );
      for (const res of batch) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        bodies.push(res.body);
      }
    }
    expect(bodies).toHaveLength(100);
    expect(bodies.filter((b) => b.duplicate !== true)).toEqual([{ received: true }]);
    expect(bodies.filter((b) => b.duplicate === true)).toHaveLength(99);

    const account = await accountItem(user.accountId);
    expect(account.billingRevision).toBe(1); // one change, not 100
    expect(account).toMatchObject({ plan: 'GROWTH', billingStatus: 'ACTIVE', billingEventId: event.id, periodEnd: new Date(end * 1000).toISOString() });
    expect(await dedupeItem(event.id)).toMatchObject({ eventId: event.id, eventType: event.type, accountId: user.accountId, outcome: 'applied' });
  });

  it('subscription.updated events delivered shuffled: the newest state wins', async () => {
    const user = await registerUser();
    const sub = `sub_test_${randomBytes(8).toString('hex')}`;
    const customer = `cus_test_${randomBytes(8).toString('hex')}`;
    const base = nowSeconds() - 3600;
    const states = [
      { status: 'incomplete', price: LOCAL_STRIPE_PRICES.GROWTH },
      { status: 'active', price: LOCAL_STRIPE_PRICES.GROWTH },
      { status: 'past_due', price: LOCAL_STRIPE_PRICES.GROWTH },
      { status: 'active', price: LOCAL_STRIPE_PRICES.SCALE },
      { status: 'trialing', price: LOCAL_STRIPE_PRICES.GROWTH },
      { status: 'past_due', price: LOCAL_STRIPE_PRICES.SCALE },
    ];
    const events = states.map((s, i) =>
      stripeEvent(
        'customer.subscription.updated',
        subscriptionObject({ id: sub, customer, accountId: user.accountId, status: s.status, price: s.price, start: base + i * 60, end: base + i * 60 + 86400 }),
        base + i * 60,
      ),
    );
    const newest = events.at(-1)!;
    // Newest in the middle, oldest last: [2, 0, 5, 3, 1, 4].
    const order = [2, 0, 5, 3, 1, 4];
    const replies = [];
    for (const i of order) {
      const res = await deliver(events[i]!);
      expect(res.status).toBe(200);
      replies.push(res.body);
    }
    // Before the newest: 2 applies, 0 is older (stale); after it, everything is older.
    expect(replies).toEqual([{ received: true }, { received: true, stale: true }, { received: true }, ...Array(3).fill({ received: true, stale: true })]);
    const account = await accountItem(user.accountId);
    expect(account).toMatchObject({
      plan: 'SCALE',
      billingStatus: 'PAST_DUE',
      billingEventId: newest.id,
      billingUpdatedAt: new Date(newest.created * 1000).toISOString(),
      periodEnd: new Date((base + 5 * 60 + 86400) * 1000).toISOString(),
      stripeSubscriptionId: sub,
    });
    // Every event is recorded, so none is retried forever; the stale ones changed nothing.
    for (const [i, event] of events.entries()) {
      const expected = i === 2 || i === 5 ? 'applied' : 'skipped';
      expect((await dedupeItem(event.id))?.outcome, `event ${i}`).toBe(expected);
    }
  });

  it('invoice events touch only the account’s own subscription; deletion of another subscription changes nothing', async () => {
    const user = await registerUser();
    const sub = subscriptionObject({ accountId: user.accountId });
    const created = await deliver(stripeEvent('customer.subscription.created', sub, nowSeconds() - 30));
    expect(created.body).toEqual({ received: true });

    const invoice = (subscription: string, type: 'invoice.paid' | 'invoice.payment_failed', at: number) =>
      stripeEvent(
        type,
        {
          id: `in_${randomBytes(6).toString('hex')}`,
          object: 'invoice',
          customer: sub.customer,
          parent: { type: 'subscription_details', subscription_details: { subscription, metadata: { accountId: user.accountId } } },
          lines: { object: 'list', data: [{ id: 'il_1', object: 'line_item', period: { start: at, end: at + 86400 }, parent: { type: 'subscription_item_details', subscription_item_details: { subscription, proration: false } } }] },
        },
        at,
      );
    const failed = await deliver(invoice(sub.id, 'invoice.payment_failed', nowSeconds() - 20));
    expect(failed.body).toEqual({ received: true });
    expect(await status(user)).toMatchObject({ plan: 'GROWTH', billingStatus: 'PAST_DUE' });

    const foreign = await deliver(invoice('sub_not_this_accounts', 'invoice.paid', nowSeconds() - 10));
    expect(foreign.body).toEqual({ received: true, stale: true });
    expect(await status(user)).toMatchObject({ billingStatus: 'PAST_DUE' });

    const deletedOther = await deliver(stripeEvent('customer.subscription.deleted', { ...subscriptionObject({ accountId: user.accountId }), status: 'canceled' }, nowSeconds() - 5));
    expect(deletedOther.body).toEqual({ received: true, stale: true });

    const paidAt = nowSeconds();
    const paid = await deliver(invoice(sub.id, 'invoice.paid', paidAt));
    expect(paid.body).toEqual({ received: true });
    expect(await status(user)).toMatchObject({ plan: 'GROWTH', billingStatus: 'ACTIVE', currentPeriodEnd: new Date((paidAt + 86400) * 1000).toISOString() });

    // Once the subscription has ended, a late invoice of it leaves the FREE account alone.
    const deleted = await deliver(stripeEvent('customer.subscription.deleted', { ...sub, status: 'canceled' }, paidAt + 1));
    expect(deleted.body).toEqual({ received: true });
    const late = await deliver(invoice(sub.id, 'invoice.payment_failed', paidAt + 2));
    expect(late.body).toEqual({ received: true, stale: true });
    expect(await status(user)).toMatchObject({ plan: 'FREE', billingStatus: 'CANCELED' });
  });

  it('a signed event without a customer: 200 ignored, never a 500, and nothing changes', async () => {
    const user = await registerUser();
    const subscription = subscriptionObject({ accountId: user.accountId, price: LOCAL_STRIPE_PRICES.SCALE });
    const before = await accountItem(user.accountId);
    const events = [
      stripeEvent('customer.subscription.updated', { ...subscription, customer: null }),
      stripeEvent('customer.subscription.created', (({ customer: _c, ...rest }) => rest)(subscription)),
      stripeEvent('customer.subscription.deleted', { ...subscription, status: 'canceled', customer: null }),
      stripeEvent('invoice.paid', { id: 'in_nocus', object: 'invoice', customer: null, parent: { subscription_details: { subscription: subscription.id, metadata: { accountId: user.accountId } } } }),
    ];
    for (const event of events) {
      const res = await deliver(event);
      expect(res.status, `${event.type}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body).toEqual({ received: true, ignored: true });
    }
    expect(await accountItem(user.accountId)).toEqual(before);
  });

  it('an event created more than 5 minutes in the future: 400, nothing changes, later genuine events apply', async () => {
    const user = await registerUser();
    const before = await accountItem(user.accountId);
    const subscription = subscriptionObject({ accountId: user.accountId, price: LOCAL_STRIPE_PRICES.SCALE });
    const year3000 = Date.UTC(3000, 0, 1) / 1000;
    for (const created of [year3000, nowSeconds() + 6 * 60]) {
      const event = stripeEvent('customer.subscription.updated', subscription, created);
      const res = await deliver(event);
      expect(res.status, new Date(created * 1000).toISOString()).toBe(400);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
      expect(res.body.type).toBe('/problems/invalid-event');
      expect(await dedupeItem(event.id)).toBeUndefined();
    }
    expect(await accountItem(user.accountId)).toEqual(before);
    // The genuine event that follows is not "stale": billing is not frozen.
    const genuine = await deliver(stripeEvent('customer.subscription.updated', subscription));
    expect(genuine.status).toBe(200);
    expect(genuine.body).toEqual({ received: true });
    expect(await status(user)).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE' });
  });

  it('answers 200 to events it does not act on: other types, unknown accounts, foreign prices', async () => {
    const user = await registerUser();
    const before = await accountItem(user.accountId);
    const replies = [
      await deliver(stripeEvent('charge.succeeded', { id: 'ch_1', object: 'charge', metadata: { accountId: user.accountId } })),
      await deliver(stripeEvent('customer.subscription.updated', { ...subscriptionObject({ accountId: '' }), customer: 'cus_nobody_knows' })),
      await deliver(stripeEvent('customer.subscription.updated', subscriptionObject({ accountId: user.accountId, price: 'price_not_ours' }))),
    ];
    for (const res of replies) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, ignored: true });
    }
    expect(await accountItem(user.accountId)).toEqual(before);
  });
});
