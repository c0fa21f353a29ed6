/** Plans and their limits (docs/features/billing.md), and the period a plan's usage counts in. Pure. */
import type { BillingStatus, Plan } from '#shared/db/accounts.ts';
import { config } from '#shared/config.ts';

export interface PlanLimits {
  /** Tracked requests a period. */
  trackedRequests: number;
  /** Discovered keys. */
  keys: number;
  /** Seats: users plus pending invitations (docs/features/billing.md). */
  users: number;
  /** Distinct customers (`customerId` of events) a calendar month; past it, usage counts under `(other customers)`. */
  customers: number;
}

export const PLANS: Record<Plan, PlanLimits> = {
  FREE: { trackedRequests: 10_000, keys: 5, users: 3, customers: 100 },
  GROWTH: { trackedRequests: 1_000_000, keys: 100, users: 25, customers: 10_000 },
  SCALE: { trackedRequests: 10_000_000, keys: 1_000, users: 250, customers: 100_000 },
};

export interface Period {
  /** ISO 8601 UTC instants; `start` ≤ t < `end`. */
  start: string;
  end: string;
}

/**
 * The usage period at `now`: the Stripe subscription's current period for a paid plan (when the account holds one
 * that contains `now`), else the UTC calendar month.
 */
export function currentPeriod(account: { plan: Plan; periodStart?: string; periodEnd?: string }, now: Date): Period {
  const t = now.toISOString();
  if (account.plan !== 'FREE' && account.periodStart && account.periodEnd && account.periodStart <= t && t < account.periodEnd) {
    return { start: account.periodStart, end: account.periodEnd };
  }
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start: start.toISOString(), end: end.toISOString() };
}

// ---------------------------------------------------------------------------------------------------------------
// Stripe: the ONE place where Stripe price ids and subscription statuses become plans and billing statuses.

export type PaidPlan = Exclude<Plan, 'FREE'>;
export const PAID_PLANS: readonly PaidPlan[] = ['GROWTH', 'SCALE'];

/** Price id of each paid plan (from configuration: env `STRIPE_PRICE_GROWTH` / `STRIPE_PRICE_SCALE`). */
export type PriceTable = Partial<Record<PaidPlan, string>>;

const configuredPrices = (): PriceTable => config().billing.prices;

/** The plan a Stripe price id sells, or undefined for a price that is not one of ours. */
export function planForPrice(priceId: string | undefined | null, prices: PriceTable = configuredPrices()): PaidPlan | undefined {
  if (!priceId) return undefined;
  return PAID_PLANS.find((plan) => prices[plan] === priceId);
}

/** The Stripe price id of a paid plan; throws (a 500: a deployment error) when it is not configured. */
export function priceForPlan(plan: PaidPlan, prices: PriceTable = configuredPrices()): string {
  const price = prices[plan];
  if (!price) throw new Error(`no Stripe price is configured for plan ${plan} (STRIPE_PRICE_${plan})`);
  return price;
}

/**
 * Stripe subscription status → billingStatus.
 * - `active` → ACTIVE; `trialing` → TRIALING.
 * - `past_due` and `unpaid` → PAST_DUE: a renewal payment failed; Stripe is retrying (past_due) or has given up
 *   retrying but keeps the subscription open (unpaid). Both are "the customer owes money".
 * - `canceled` and `incomplete_expired` → CANCELED: the subscription is over (the account drops to FREE).
 * - `incomplete` → INCOMPLETE: the first payment has not gone through yet.
 * - `paused` → INCOMPLETE (our decision): a trial ended without a payment method, so Stripe stopped invoicing
 *   until the customer adds one. Like `incomplete`, the plan is chosen but payment is still needed before it is in
 *   force; it is neither a failed renewal (PAST_DUE) nor over (CANCELED: Stripe can resume it).
 * - Anything newer that we do not know → INCOMPLETE (never grants more than a status we understand).
 */
export function billingStatusFromStripe(status: string): BillingStatus {
  switch (status) {
    case 'active':
      return 'ACTIVE';
    case 'trialing':
      return 'TRIALING';
    case 'past_due':
    case 'unpaid':
      return 'PAST_DUE';
    case 'canceled':
    case 'incomplete_expired':
      return 'CANCELED';
    case 'incomplete':
    case 'paused':
    default:
      return 'INCOMPLETE';
  }
}

/** The tie-break of billing states (stored with each change): shared/db/billing.ts. */
export { statusRank } from '#shared/db/billing.ts';
