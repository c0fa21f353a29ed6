/** The `plan_limit` alert: raised when ingestion refuses events at a plan limit, once per account and period. */
import { logger } from '#shared/http/logger.ts';
import type { Period } from '#shared/billing/plans.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { makeAlert } from '#shared/alerting/evaluate.ts';
import { publishAlerts } from '#shared/alerting/queue.ts';
import type { Account } from '#shared/db/accounts.ts';

/** Which limit refused events: the period's tracked requests, or new keys. */
export type PlanLimitReached = 'trackedRequests' | 'keys';

type LimitAccount = Pick<Account, 'plan' | 'billingStatus' | 'graceEndsAt' | 'billingUpdatedAt'>;

/** The alert's title and message: which limit was reached, its size, the plan and period, what to do. Pure. */
export function planLimitText(account: LimitAccount, period: Period, reached: readonly PlanLimitReached[], now: Date): { title: string; message: string } {
  const limits = limitsInForce(account, now);
  const names = reached.map((r) =>
    r === 'trackedRequests' ? `the ${limits.trackedRequests.toLocaleString('en-US')} tracked requests of the period` : `the ${limits.keys.toLocaleString('en-US')} keys`,
  );
  const which = reached.map((r) => (r === 'trackedRequests' ? 'tracked requests' : 'keys')).join(' and ');
  return {
    title: `Plan limit reached: ${which} (${account.plan})`,
    message:
      `Burnrate refused events: the account reached ${names.join(' and ')} its limits allow ` +
      `(plan ${account.plan}, billing status ${account.billingStatus}). The period runs from ${period.start} to ${period.end}. ` +
      `Upgrade the plan, or settle the open invoice, to keep tracking everything.`,
  };
}

/** Raises the period's one plan_limit alert; throws what DynamoDB throws (a sync's evaluator retries its message). */
export async function firePlanLimitAlert(accountId: string, account: LimitAccount, period: Period, reached: readonly PlanLimitReached[], now = new Date()): Promise<void> {
  const fired = { source: 'plan', level: 'limit', period: period.start };
  if ((await alreadyFired(accountId, [fired])).has(firedPk(accountId, fired))) return;
  const alert = makeAlert(accountId, now, {
    type: 'plan_limit',
    ...planLimitText(account, period, reached, now),
    period: period.start.slice(0, 10),
    thresholdMicros: null,
    observedMicros: null,
    channels: ['email'],
  });
  if (await fireAlert(alert, fired)) await publishAlerts([{ accountId, alertId: alert.id }]);
}

/** `firePlanLimitAlert` for ingestion: never throws, a failure is logged. */
export async function raisePlanLimitAlert(accountId: string, account: LimitAccount, period: Period, reached: readonly PlanLimitReached[], now = new Date()): Promise<void> {
  try {
    await firePlanLimitAlert(accountId, account, period, reached, now);
  } catch (error) {
    logger.error('plan limit alert failed', error as Error);
  }
}
