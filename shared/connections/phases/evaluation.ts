/**
 * A sync's evaluation phase, after what it imported is written: what alerts may follow from it — plan limits that
 * held usage back (or no longer do), spend that moved, keys discovered, models without a price — queued for the
 * evaluation function (shared/alerting/evaluation-queue.ts), which raises them (shared/alerting/after-sync.ts).
 */
import type { Connection } from '#shared/db/connections.ts';
import type { PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import { queueEvaluation, type SyncEvaluation } from '#shared/alerting/evaluation-queue.ts';
import type { Importer } from '#shared/connections/phases/run.ts';
import { LIMIT_DETAIL } from '#shared/connections/sync-plan.ts';

/** `before`: the connection as the sync read it (its earlier `statusDetail` says whether a limit held usage back). */
export function evaluationOf(before: Connection, importer: Importer, reached: readonly PlanLimitReached[], now: Date): SyncEvaluation {
  const { result } = importer;
  return {
    accountId: before.accountId,
    connectionId: before.id,
    at: now.toISOString(),
    reached: [...reached],
    limitLifted: reached.length === 0 && before.statusDetail !== null && before.statusDetail.startsWith(LIMIT_DETAIL),
    spendMoved: result.cellsChanged > 0 || result.settleCellsChanged > 0 || result.keysCreated > 0,
    discovered: [...importer.discovered],
    unpriced: [...importer.unpriced.values()],
  };
}

export async function queueSyncEvaluation(before: Connection, importer: Importer, reached: readonly PlanLimitReached[], now: Date): Promise<void> {
  await queueEvaluation(evaluationOf(before, importer, reached, now));
}
