/** GET /billing/status: the subscribed plan, the limits in force (by billing status) and this period's exact usage (two GetItems). */
import { NotFound } from '#shared/http/errors.ts';
import { getAccount, seatsInUse } from '#shared/db/accounts.ts';
import { trackedRequests } from '#shared/db/usage.ts';
import { currentPeriod } from '#shared/billing/plans.ts';
import { limitsInForce } from '#shared/billing/limits.ts';

export async function billingStatus(accountId: string, now = new Date()) {
  const account = await getAccount(accountId);
  if (!account) throw new NotFound('The account does not exist.');
  const period = currentPeriod(account, now);
  const limits = limitsInForce(account, now);
  return {
    plan: account.plan,
    billingStatus: account.billingStatus,
    usage: {
      trackedRequests: await trackedRequests(accountId, period.start),
      limit: limits.trackedRequests,
      keys: account.keyCount ?? 0,
      keyLimit: limits.keys,
      // Users and pending invitations; an expired invitation stops counting at its expiry.
      users: seatsInUse(account, now),
      userLimit: limits.users,
    },
    graceEndsAt: limits.graceEndsAt,
    currentPeriodStart: period.start,
    currentPeriodEnd: period.end,
  };
}
