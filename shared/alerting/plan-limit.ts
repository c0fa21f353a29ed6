/** The `plan_limit` alert: raised when ingestion refuses events at a plan limit, once per account and period. */
import { logger } from '#shared/http/logger.ts';
import type { Period } from '#shared/billing/plans.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { makeAlert } from '#shared/alerting/evaluate.ts';
import { publishAlerts } from '#shared/notify/queue.ts';
import type { Account } from '#shared/db/accounts.ts';

export async function raisePlanLimitAlert(
  accountId: string,
  account: Pick<Account, 'plan' | 'billingStatus' | 'graceEndsAt' | 'billingUpdatedAt'>,
  period: Period,
  now = new Date(),
): Promise<void> {
  try {
    const fired = { source: 'plan', level: 'limit', period: period.start };
    if ((await alreadyFired(accountId, [fired])).has(firedPk(accountId, fired))) return;
    const limits = limitsInForce(account, now);
    const plan = account.plan;
    const alert = makeAlert(accountId, now, {
      type: 'plan_limit',
      title: `Plan limit reached on ${plan}`,
      message:
        `Burnrate refused events because the account's limit in force was reached (${limits.trackedRequests.toLocaleString('en-US')} tracked requests ` +
        `and ${limits.keys} keys per period; plan ${plan}, billing status ${account.billingStatus}). The period runs from ${period.start} to ${period.end}. ` +
        `Upgrade the plan, or settle the open invoice, to keep tracking everything.`,
      period: period.start.slice(0, 10),
      thresholdMicros: null,
      observedMicros: null,
      channels: ['email'],
    });
    if (await fireAlert(alert, fired)) await publishAlerts([{ accountId, alertId: alert.id }]);
  } catch (error) {
    logger.error('plan limit alert failed', error as Error);
  }
}
