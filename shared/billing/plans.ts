/** Plans and their limits (API.md "Billing"), and the period a plan's usage counts in. Pure. */
import type { Plan } from '#shared/db/accounts.ts';

export interface PlanLimits {
  /** Tracked requests a period. */
  trackedRequests: number;
  /** Discovered keys. */
  keys: number;
}

export const PLANS: Record<Plan, PlanLimits> = {
  FREE: { trackedRequests: 10_000, keys: 5 },
  GROWTH: { trackedRequests: 1_000_000, keys: 100 },
  SCALE: { trackedRequests: 10_000_000, keys: 1_000 },
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
