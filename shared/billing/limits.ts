/**
 * The limits in force: what an account may use now, by its billing status (docs/security.md,
 * docs/features/billing.md). Pure. EVERY place that reads a limit (ingestion, the plan-limit alert, billing status,
 * seats) goes through `limitsInForce`, never through `PLANS[account.plan]` directly.
 *
 * - `ACTIVE`, `TRIALING` → the plan's limits.
 * - `PAST_DUE` → the plan's limits until `graceEndsAt` (7 days after the failed payment), then FREE's.
 * - `INCOMPLETE`, `CANCELED` → FREE's (nothing paid, or nothing paid any more).
 * Keys and users above a lower limit stay; only new ones are refused.
 */
import type { Account } from '#shared/db/accounts.ts';
import { PLANS, type PlanLimits } from '#shared/billing/plans.ts';
import { graceEnd, PAST_DUE_GRACE_MS } from '#shared/db/billing.ts';

/** The grace a failed renewal opens (stored on the account with the change): shared/db/billing.ts. */
export { graceEnd, PAST_DUE_GRACE_MS };

export interface LimitsInForce extends PlanLimits {
  /** While `PAST_DUE`: when the paid limits end (ISO). Else null. */
  graceEndsAt: string | null;
}

export function limitsInForce(account: Pick<Account, 'plan' | 'billingStatus' | 'graceEndsAt' | 'billingUpdatedAt'>, now = new Date()): LimitsInForce {
  switch (account.billingStatus) {
    case 'ACTIVE':
    case 'TRIALING':
      return { ...PLANS[account.plan], graceEndsAt: null };
    case 'PAST_DUE': {
      // An account that went PAST_DUE before grace was stored: the grace runs from its last billing change.
      const graceEndsAt = account.graceEndsAt ?? (account.billingUpdatedAt ? graceEnd(account.billingUpdatedAt) : null);
      const inGrace = graceEndsAt !== null && now.toISOString() < graceEndsAt;
      return { ...PLANS[inGrace ? account.plan : 'FREE'], graceEndsAt };
    }
    case 'INCOMPLETE':
    case 'CANCELED':
    default:
      return { ...PLANS.FREE, graceEndsAt: null };
  }
}
