/**
 * The alerts a sync or an ingest calls for, raised by the evaluation function (functions/connections/evaluate.ts) from
 * the message it queued (shared/alerting/evaluation-queue.ts), at its clock: the `plan_limit` alert (raised while
 * a plan limit holds usage back, acknowledged by Burnrate once it no longer does), the budgets and alert rules the new
 * spend and new keys move, and the `unpriced_model` alert for models without a price. What DynamoDB throws is thrown
 * (the message comes back, then goes to the dead-letter queue); each alert is raised once (its fired item), so a
 * message received again raises only what it had not raised yet.
 */
import * as z from 'zod/mini';
import { getAccount } from '#shared/db/accounts.ts';
import { acknowledgeAlerts, triggeredAlertIds } from '#shared/db/alerts.ts';
import { currentPeriod } from '#shared/billing/plans.ts';
import { evaluateSpend } from '#shared/alerting/evaluate.ts';
import { firePlanLimitAlert } from '#shared/alerting/plan-limit.ts';
import { fireUnpricedModelAlerts } from '#shared/alerting/unpriced-model.ts';
import { isId } from '#shared/ids.ts';
import type { Budget, Rule } from '#shared/alerting/model.ts';
import type { Evaluation, SyncEvaluation } from '#shared/alerting/evaluation-queue.ts';

/** Who acknowledges an alert that Burnrate itself closed (`acknowledgedBy`). */
export const BURNRATE_ACTOR = 'burnrate';

const Name = z.string().check(z.minLength(1), z.maxLength(1_000));
// A key's name and hint as the provider gave them (empty too; bounded by the message's size, not cut).
const Text = z.string().check(z.maxLength(65_536));
const KeyHash = z.string().check(z.regex(/^[0-9a-f]{64}$/));
const Common = {
  accountId: z.string().check(z.refine((v) => isId('account', v))),
  at: z.iso.datetime(),
  reached: z.array(z.enum(['trackedRequests', 'keys'])).check(z.maxLength(2)),
  spendMoved: z.boolean(),
  discovered: z.array(z.strictObject({ keyHash: KeyHash, provider: Name, name: z.optional(Text), hint: z.optional(Text) })).check(z.maxLength(10_000)),
  unpriced: z.array(z.strictObject({ provider: Name, model: Name })).check(z.maxLength(10_000)),
};
const SyncMessage = z.strictObject({ ...Common, connectionId: z.string().check(z.refine((v) => isId('connection', v))), limitLifted: z.boolean() });
const IngestMessage = z.strictObject({
  ...Common,
  source: z.literal('ingest'),
  rates: z.array(z.strictObject({ keyHash: KeyHash, rated: z.boolean() })).check(z.maxLength(10_000)),
});

function parseWith<T>(schema: z.ZodMiniType<T>, body: string): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A queue message's body, or undefined when it is not a sync's evaluation. */
export const parseSyncEvaluation = (body: string): SyncEvaluation | undefined => parseWith(SyncMessage, body);

/** A queue message's body (a sync's or an ingest's evaluation), or undefined when it is neither. */
export const parseEvaluation = (body: string): Evaluation | undefined => parseWith(z.union([SyncMessage, IngestMessage]), body);

/** The plan_limit alerts still triggered, acknowledged by Burnrate (`acknowledgedBy: "burnrate"`): their limit no longer applies. */
async function acknowledgeLiftedPlanLimits(accountId: string, now: Date): Promise<void> {
  const ids = await triggeredAlertIds(accountId, { type: 'plan_limit' });
  if (ids.length > 0) await acknowledgeAlerts(accountId, ids, BURNRATE_ACTOR, now);
}

/**
 * The alerts an evaluation calls for, at its writer's clock. `known` is the account's budgets and rules when the caller
 * has read them already (an ingest's evaluation reads them once for its alerts and its anomaly rules).
 */
export async function evaluateAfterSync(evaluation: Evaluation, known?: { budgets: Budget[]; rules: Rule[] }): Promise<void> {
  const { accountId } = evaluation;
  const now = new Date(evaluation.at);
  if (evaluation.reached.length > 0) {
    const account = await getAccount(accountId, true);
    if (!account) return;
    await firePlanLimitAlert(accountId, account, currentPeriod(account, now), evaluation.reached, now);
  } else if ('limitLifted' in evaluation && evaluation.limitLifted) {
    // A limit that held usage back no longer does (an upgrade): its plan_limit alert is acknowledged by Burnrate.
    await acknowledgeLiftedPlanLimits(accountId, now);
  }
  if (evaluation.spendMoved || evaluation.discovered.length > 0) await evaluateSpend(accountId, evaluation.discovered, now, known);
  await fireUnpricedModelAlerts(accountId, evaluation.unpriced, now);
}
