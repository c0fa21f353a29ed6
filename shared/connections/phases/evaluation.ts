/**
 * A sync's evaluation phase, after what it imported is written: the plan_limit alert (raised while a plan limit holds
 * usage back, acknowledged by Burnrate once it no longer does), the budgets and alert rules the new spend and new
 * keys move, and the `unpriced_model` alert for models without a price.
 */
import type { Account } from '#shared/db/accounts.ts';
import type { Connection } from '#shared/db/connections.ts';
import { acknowledgeAlerts, triggeredAlertIds } from '#shared/db/alerts.ts';
import type { Period } from '#shared/billing/plans.ts';
import { evaluateAfterIngest } from '#shared/alerting/evaluate.ts';
import { raisePlanLimitAlert, type PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import { raiseUnpricedModelAlerts } from '#shared/alerting/unpriced-model.ts';
import type { Importer } from '#shared/connections/phases/run.ts';
import { LIMIT_DETAIL } from '#shared/connections/sync-plan.ts';

/** Who acknowledges an alert that Burnrate itself closed (`acknowledgedBy`). */
export const BURNRATE_ACTOR = 'burnrate';

/** The plan_limit alerts still triggered, acknowledged by Burnrate (`acknowledgedBy: "burnrate"`): their limit no longer applies. */
async function acknowledgeLiftedPlanLimits(accountId: string, now: Date): Promise<void> {
  const ids = await triggeredAlertIds(accountId, { type: 'plan_limit' });
  if (ids.length > 0) await acknowledgeAlerts(accountId, ids, BURNRATE_ACTOR, now);
}

/** `before`: the connection as the sync read it (its earlier `statusDetail` says whether a limit held usage back). */
export async function evaluateAfterSync(before: Connection, account: Account, period: Period, importer: Importer, reached: readonly PlanLimitReached[], now: Date): Promise<void> {
  const { accountId } = before;
  if (reached.length > 0) await raisePlanLimitAlert(accountId, account, period, [...reached], now);
  // A limit that held usage back no longer does (an upgrade): its plan_limit alert is acknowledged by Burnrate.
  else if (before.statusDetail !== null && before.statusDetail.startsWith(LIMIT_DETAIL)) await acknowledgeLiftedPlanLimits(accountId, now);
  if (importer.result.cellsChanged > 0 || importer.result.keysCreated > 0) await evaluateAfterIngest(accountId, importer.discovered, now);
  await raiseUnpricedModelAlerts(accountId, [...importer.unpriced.values()], now);
}
