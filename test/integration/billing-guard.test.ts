/**
 * Billing that can't be gamed (docs/security.md), against the local stack and its Stripe stand-in. Each test replays a
 * defect an independent review reproduced on the earlier code:
 * - a subscription moved to `unpaid`, `paused` or `incomplete` kept the paid plan's limits;
 * - two checkouts opened at once and both paid left two live subscriptions;
 * - a signed event whose metadata named another account moved the plan to that account;
 * - a `deleted` and an `updated(active)` of the same second brought a canceled subscription back.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { createStripe } from '#shared/billing/stripe.ts';
import { LOCAL_STRIPE_PRICES, LOCAL_STRIPE_SECRET_KEY } from '#local/stripe-mock.ts';
import { api, dynamo, registerUser, stack, type RegisteredUser } from './harness.ts';
import { nowSeconds, signStripe, stripeEvent, submitForm, subscriptionObject } from './stripe-fixtures.ts';

const stripeClient = () => createStripe(LOCAL_STRIPE_SECRET_KEY, stack().stripeUrl);
const DAY = 86_400;

async function accountItem(accountId: string): Promise<Record<string, any>> {
  const res = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.account(accountId), ConsistentRead: true }));
  return res.Item!;
}

async function status(user: RegisteredUser) {
  const res = await api('/billing/status', { token: user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function deliver(event: object) {
  const payload = JSON.stringify(event);
  const res = await api('/billing/webhook', { method: 'POST', rawBody: payload, headers: { 'stripe-signature': signStripe(payload), 'content-type': 'application/json' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function subscribe(user: RegisteredUser, plan: 'GROWTH' | 'SCALE' = 'GROWTH') {
  const res = await api('/billing/checkout', { method: 'POST', token: user.token, body: { plan } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const paid = await submitForm(res.body.url);
  expect(paid.status, await paid.clone().text()).toBe(303);
  return res.body as { url: string; sessionId: string };
}

async function portal(user: RegisteredUser): Promise<string> {
  const res = await api('/billing/portal', { method: 'POST', token: user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.url;
}

/** Waits until `check` holds (events the stand-in sends after answering arrive a moment later). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > end) return value;
    await sleep(100);
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
async function ingestNewKeys(user: RegisteredUser, n: number) {
  const key = await api('/ingest-keys', { method: 'POST', token: user.token, body: {} });
  const events = Array.from({ length: n }, () => ({
    requestId: randomUUID(),
    keyHash: sha256(randomUUID()),
    provider: 'openai',
    model: 'gpt-4o',
    inputTokens: 1,
    outputTokens: 1,
  }));
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': key.body.key }, body: { events } });
  expect(res.status).toBe(200);
  return res.body as { accepted: number; rejected: { index: number; code: string }[] };
}

describe('limits follow payment', () => {
  it.each([
    ['unpaid', 'PAST_DUE'],
    ['paused', 'INCOMPLETE'],
    ['incomplete', 'INCOMPLETE'],
  ])('a GROWTH subscription moved to %s (its payment failed 8 days ago): FREE’s limits, the plan still shown', async (stripeStatus, billingStatus) => {
    const user = await registerUser();
    const customer = `cus_test_${randomBytes(8).toString('hex')}`;
    const sub = `sub_test_${randomBytes(8).toString('hex')}`;
    const start = nowSeconds() - 20 * DAY;
    await deliver(stripeEvent('customer.subscription.created', subscriptionObject({ id: sub, customer, accountId: user.accountId, start }), start));
    expect((await status(user)).usage).toMatchObject({ limit: 1_000_000, keyLimit: 100, userLimit: 25 });
    const failedAt = nowSeconds() - 8 * DAY;
    await deliver(
      stripeEvent('customer.subscription.updated', subscriptionObject({ id: sub, customer, accountId: user.accountId, start, status: stripeStatus }), failedAt),
    );
    const body = await status(user);
    expect(body).toMatchObject({ plan: 'GROWTH', billingStatus, usage: { limit: 10_000, keyLimit: 5, userLimit: 3 } });
    expect(body.graceEndsAt).toBe(billingStatus === 'PAST_DUE' ? new Date((failedAt + 7 * DAY) * 1000).toISOString() : null);
    // Ingestion follows the limits in force: the sixth new key is refused.
    const ingested = await ingestNewKeys(user, 6);
    expect(ingested.accepted).toBe(5);
    expect(ingested.rejected).toEqual([expect.objectContaining({ index: 5, code: 'key_limit_reached' })]);
  });

  it('portal: "Fail the next payment" → PAST_DUE with 7 days of grace on the paid limits; "Pay the open invoice" → ACTIVE', async () => {
    const user = await registerUser();
    await subscribe(user, 'GROWTH');
    const before = Date.now();
    const failed = await submitForm(await portal(user), 'Fail the next payment');
    expect(failed.status, await failed.clone().text()).toBe(303);
    const pastDue = await status(user);
    expect(pastDue).toMatchObject({ plan: 'GROWTH', billingStatus: 'PAST_DUE', usage: { limit: 1_000_000, keyLimit: 100 } });
    const grace = Date.parse(pastDue.graceEndsAt);
    expect(grace).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 7 * DAY * 1000);
    expect(grace).toBeLessThanOrEqual(Date.now() + 7 * DAY * 1000);

    const paid = await submitForm(await portal(user), 'Pay the open invoice');
    expect(paid.status, await paid.clone().text()).toBe(303);
    expect(await status(user)).toMatchObject({ plan: 'GROWTH', billingStatus: 'ACTIVE', graceEndsAt: null, usage: { limit: 1_000_000 } });
    expect((await accountItem(user.accountId)).graceEndsAt).toBeUndefined();
  });

  it('portal: switch GROWTH → SCALE → GROWTH', async () => {
    const user = await registerUser();
    await subscribe(user, 'GROWTH');
    expect((await submitForm(await portal(user), 'Switch to Burnrate Scale')).status).toBe(303);
    expect(await status(user)).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE', usage: { limit: 10_000_000, keyLimit: 1_000, userLimit: 250 } });
    expect((await submitForm(await portal(user), 'Switch to Burnrate Growth')).status).toBe(303);
    expect(await status(user)).toMatchObject({ plan: 'GROWTH', billingStatus: 'ACTIVE' });
  });
});

describe('one live subscription', () => {
  it('a new checkout expires the account’s other open sessions: the first page can no longer be paid', async () => {
    const user = await registerUser();
    const first = await api('/billing/checkout', { method: 'POST', token: user.token, body: { plan: 'GROWTH' } });
    const second = await api('/billing/checkout', { method: 'POST', token: user.token, body: { plan: 'SCALE' } });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect((await stripeClient().checkout.sessions.retrieve(first.body.sessionId)).status).toBe('expired');
    expect((await stripeClient().checkout.sessions.retrieve(second.body.sessionId)).status).toBe('open');
    const payFirst = await fetch(`${first.body.url}/pay`, { method: 'POST', redirect: 'manual' });
    expect(payFirst.status).toBe(409);
    expect((await submitForm(second.body.url)).status).toBe(303);
    expect(await status(user)).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE' });
  });

  it('two sessions paid anyway: the newer subscription is kept, the older canceled in Stripe, and its deletion changes nothing', async () => {
    const user = await registerUser();
    // A first checkout links the account's customer; a second session is opened behind the API's back (as if both
    // pages had been open before the expiry ran), then both are paid.
    const first = await api('/billing/checkout', { method: 'POST', token: user.token, body: { plan: 'GROWTH' } });
    const firstSession = await stripeClient().checkout.sessions.retrieve(first.body.sessionId);
    const secondSession = await stripeClient().checkout.sessions.create({
      mode: 'subscription',
      customer: firstSession.customer as string,
      client_reference_id: user.accountId,
      line_items: [{ price: LOCAL_STRIPE_PRICES.SCALE, quantity: 1 }],
      subscription_data: { metadata: { accountId: user.accountId } },
      success_url: `${stack().stripeUrl}/app/billing/success`,
    });
    expect((await submitForm(first.body.url)).status).toBe(303);
    await sleep(1100); // the second subscription is created in a later second: it is the newer
    expect((await submitForm(secondSession.url!)).status).toBe(303);

    const firstSub = (await stripeClient().checkout.sessions.retrieve(first.body.sessionId)).subscription as string;
    const secondSub = (await stripeClient().checkout.sessions.retrieve(secondSession.id)).subscription as string;
    const older = await eventually(
      () => stripeClient().subscriptions.retrieve(firstSub),
      (s) => s.status === 'canceled',
    );
    expect(older.status).toBe('canceled');
    expect((await stripeClient().subscriptions.retrieve(secondSub)).status).toBe('active');
    // The older one's customer.subscription.deleted arrives and changes nothing.
    const account = await eventually(
      () => accountItem(user.accountId),
      (a) => a.billingRevision >= 4,
    );
    await sleep(500);
    expect(await accountItem(user.accountId)).toMatchObject({ stripeSubscriptionId: secondSub, plan: 'SCALE', billingStatus: 'ACTIVE' });
    expect(account.stripeSubscriptionId).toBe(secondSub);
    expect(await status(user)).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE', usage: { limit: 10_000_000 } });
  });

  it('an older live subscription arriving after a newer one changes nothing (its cancel is asked of Stripe)', async () => {
    const user = await registerUser();
    await subscribe(user, 'SCALE');
    const account = await accountItem(user.accountId);
    // A live subscription of the same customer, created a day before the account's: Stripe must cancel it.
    const stale = await stripeClient().subscriptions.retrieve(account.stripeSubscriptionId);
    const older = subscriptionObject({
      id: `sub_test_${randomBytes(8).toString('hex')}`,
      customer: account.stripeCustomerId,
      accountId: user.accountId,
      start: stale.created - DAY,
      price: LOCAL_STRIPE_PRICES.GROWTH,
    });
    const reply = await deliver(stripeEvent('customer.subscription.updated', older));
    expect(reply).toEqual({ received: true, stale: true });
    expect(await accountItem(user.accountId)).toMatchObject({ stripeSubscriptionId: account.stripeSubscriptionId, plan: 'SCALE' });
  });
});

describe('webhook routing and order', () => {
  it('an event whose customer is account A’s but whose metadata names account B is ignored: B keeps FREE', async () => {
    const a = await registerUser();
    const b = await registerUser();
    await subscribe(a, 'GROWTH');
    const customer = (await accountItem(a.accountId)).stripeCustomerId;
    const forged = subscriptionObject({ customer, accountId: b.accountId, price: LOCAL_STRIPE_PRICES.SCALE });
    expect(await deliver(stripeEvent('customer.subscription.updated', forged))).toEqual({ received: true, ignored: true });
    expect(await status(b)).toMatchObject({ plan: 'FREE', billingStatus: 'ACTIVE' });
    expect(await status(a)).toMatchObject({ plan: 'GROWTH', billingStatus: 'ACTIVE' });
  });

  it('an unknown customer cannot take over an account that has its own customer', async () => {
    const a = await registerUser();
    await subscribe(a, 'GROWTH');
    const stranger = subscriptionObject({ accountId: a.accountId, price: LOCAL_STRIPE_PRICES.SCALE, start: nowSeconds() + 5 });
    expect(await deliver(stripeEvent('customer.subscription.created', stranger, nowSeconds() + 5))).toEqual({ received: true, stale: true });
    expect(await status(a)).toMatchObject({ plan: 'GROWTH', billingStatus: 'ACTIVE' });
  });

  it.each([
    ['deleted first', ['customer.subscription.deleted', 'customer.subscription.updated']],
    ['updated first', ['customer.subscription.updated', 'customer.subscription.deleted']],
  ])('a deleted and an updated(active) of the same second: canceled stays canceled (%s)', async (_name, order) => {
    const user = await registerUser();
    const customer = `cus_test_${randomBytes(8).toString('hex')}`;
    const sub = `sub_test_${randomBytes(8).toString('hex')}`;
    const start = nowSeconds() - 3600;
    await deliver(stripeEvent('customer.subscription.created', subscriptionObject({ id: sub, customer, accountId: user.accountId, start }), start));
    const second = nowSeconds();
    for (const type of order) {
      const status = type === 'customer.subscription.deleted' ? 'canceled' : 'active';
      await deliver(stripeEvent(type, subscriptionObject({ id: sub, customer, accountId: user.accountId, start, status }), second));
    }
    expect(await status(user)).toMatchObject({ plan: 'FREE', billingStatus: 'CANCELED', usage: { limit: 10_000 } });
  });
});
