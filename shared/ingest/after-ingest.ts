/**
 * What follows an ingest, run by the evaluator (functions/connections/evaluate.ts) from the message POST /ingest
 * queued (shared/alerting/evaluation-queue.ts), at the ingest's clock: the alerts it calls for (plan limits, budgets
 * and rules, new keys, unpriced models: shared/alerting/after-sync.ts), the spend-anomaly rules over the keys it wrote
 * spend for (a key past one is blocked at the reporter and alerted once a day: shared/anomaly/), and the stop budgets'
 * pass over the reporter's block list (a connection's levers wait for its sync: shared/enforcement/).
 *
 * Each step runs even when one before it failed (a budget still stops a key when an alert could not be raised); the
 * first failure is then thrown, so the message comes back, and each step does again only what it had not done (an
 * alert is raised once, an act only when its lever is not yet where it should be).
 */
import { evaluateAfterSync } from '#shared/alerting/after-sync.ts';
import type { IngestEvaluation } from '#shared/alerting/evaluation-queue.ts';
import { evaluateAnomalies } from '#shared/anomaly/service.ts';
import { loadAlertConfig } from '#shared/db/alerts.ts';
import { enforceWithoutKeys } from '#shared/enforcement/service.ts';

export async function evaluateAfterIngest(evaluation: IngestEvaluation): Promise<void> {
  const { accountId } = evaluation;
  // The alerts at the ingest's clock (its periods); the rules' and budgets' acts never behind the clock either: a
  // message retried minutes later acts on the lever states as they are now.
  const now = new Date(Math.max(Date.parse(evaluation.at), Date.now()));
  const failures: unknown[] = [];
  const step = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      failures.push(error);
    }
  };
  const config = evaluation.spendMoved || evaluation.discovered.length > 0 || evaluation.rates.length > 0 ? await loadAlertConfig(accountId) : undefined;
  await step(() => evaluateAfterSync(evaluation, config));
  // A key's rate exists from the second ingest that sees it on the day (`rated`, decided by the ingest).
  if (config && evaluation.rates.length > 0) await step(() => evaluateAnomalies(accountId, evaluation.rates, { now, rules: config.rules }));
  if (evaluation.spendMoved) await step(() => enforceWithoutKeys(accountId, now));
  if (failures.length > 0) throw failures[0];
}
