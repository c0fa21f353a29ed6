/**
 * POST /billing/checkout and POST /billing/portal: Stripe Checkout (subscription mode) and the customer portal.
 * Neither changes the plan: only verified webhook events do (shared/billing/webhook.ts).
 */
import { config } from '#shared/config.ts';
import { Conflict, NotFound } from '#shared/http/errors.ts';
import { getAccount, linkStripeCustomer, type Account } from '#shared/db/accounts.ts';
import { priceForPlan, type PaidPlan } from '#shared/billing/plans.ts';
import { returnOrigin, returnUrl } from '#shared/billing/return-origin.ts';
import { stripe } from '#shared/billing/stripe.ts';

/** Repeats of the same checkout within this window reuse one Checkout Session (Stripe idempotency key). */
const CHECKOUT_IDEMPOTENCY_WINDOW_MS = 60_000;

/**
 * 409 when the account must not open a checkout for `plan`: it holds a subscription that is not over (billing
 * status other than CANCELED). The same plan is `plan-current`; another paid plan is `subscription-exists` (a second
 * checkout would start a second subscription and bill twice: plan changes go through the portal).
 */
export function assertCanCheckout(account: Pick<Account, 'plan' | 'billingStatus'>, plan: PaidPlan): void {
  if (account.plan === 'FREE' || account.billingStatus === 'CANCELED') return;
  if (account.plan === plan) {
    throw new Conflict(`The account is on the ${plan} plan already.`, 'plan-current');
  }
  throw new Conflict(
    `The account has a ${account.plan} subscription: change plans in the billing portal (POST /billing/portal).`,
    'subscription-exists',
  );
}

/**
 * `origin`: the request's Origin header; Checkout returns there when it is the dashboard's loopback twin
 * (shared/billing/return-origin.ts), else to the configured URLs.
 */
export async function startCheckout(accountId: string, plan: PaidPlan, now = new Date(), origin?: string): Promise<{ url: string; sessionId: string }> {
  const account = await getAccount(accountId);
  if (!account) throw new NotFound('The account does not exist.');
  assertCanCheckout(account, plan);
  const price = priceForPlan(plan);
  const customer = account.stripeCustomerId ?? (await createCustomer(account, now));
  const { successUrl, cancelUrl } = config().billing;
  if (!successUrl || !cancelUrl) throw new Error('BILLING_SUCCESS_URL and BILLING_CANCEL_URL must be configured');
  const bucket = Math.floor(now.getTime() / CHECKOUT_IDEMPOTENCY_WINDOW_MS);
  const session = await (await stripe()).checkout.sessions.create(
    {
      mode: 'subscription',
      customer,
      client_reference_id: accountId,
      line_items: [{ price, quantity: 1 }],
      metadata: { accountId, plan },
      subscription_data: { metadata: { accountId } },
      success_url: returnUrl(successUrl, config().appUrl, returnOrigin(config().appUrl, origin)),
      cancel_url: returnUrl(cancelUrl, config().appUrl, returnOrigin(config().appUrl, origin)),
    },
    { idempotencyKey: `checkout-${accountId}-${plan}-${bucket}` },
  );
  if (!session.url) throw new Error(`Stripe returned checkout session ${session.id} without a url`);
  await expireOtherSessions(customer, session.id);
  return { url: session.url, sessionId: session.id };
}

/**
 * One live subscription: the customer's other open Checkout Sessions are expired, so only the newest checkout can
 * be paid. (Two paid at once anyway — e.g. both pages submitted before this runs — are settled by the webhook:
 * shared/billing/webhook.ts `secondLiveSubscription`.)
 */
async function expireOtherSessions(customer: string, keep: string): Promise<void> {
  const client = await stripe();
  for await (const open of client.checkout.sessions.list({ customer, status: 'open', limit: 100 })) {
    if (open.id === keep) continue;
    // A session completed or expired meanwhile can't be expired: that is the outcome wanted anyway.
    await client.checkout.sessions.expire(open.id).catch((error: unknown) => {
      if ((error as { type?: string }).type !== 'StripeInvalidRequestError') throw error;
    });
  }
}

/** A Stripe customer for the account, linked once; a concurrent request's customer wins if it linked first. */
async function createCustomer(account: Account, now: Date): Promise<string> {
  const customer = await (await stripe()).customers.create(
    { name: account.companyName, metadata: { accountId: account.accountId } },
    // Concurrent first checkouts of one account get the same customer from Stripe.
    { idempotencyKey: `customer-${account.accountId}` },
  );
  return linkStripeCustomer(account.accountId, customer.id, now);
}

/** `origin`: as for `startCheckout`, where the portal returns. */
export async function openPortal(accountId: string, origin?: string): Promise<{ url: string }> {
  const account = await getAccount(accountId);
  if (!account) throw new NotFound('The account does not exist.');
  if (!account.stripeCustomerId) {
    throw new Conflict('The account has no Stripe customer yet: subscribe with POST /billing/checkout first.', 'no-billing-account');
  }
  const session = await (await stripe()).billingPortal.sessions.create({
    customer: account.stripeCustomerId,
    return_url: returnUrl(config().billing.portalReturnUrl, config().appUrl, returnOrigin(config().appUrl, origin)),
  });
  return { url: session.url };
}
