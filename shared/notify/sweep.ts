/**
 * The sweeper: "never silence" even when handing an alert to the queue failed (SQS down at that moment) or a
 * local queue was stopped with work in it. Alerts whose channels are not all settled sit on a sparse index
 * (gsi2); those older than a grace period are published again. Delivery claims each channel, so a re-published
 * alert that is in flight anyway is never sent twice.
 */
import { logger } from '#shared/http/logger.ts';
import { undeliveredAlerts } from '#shared/db/alerts.ts';
import { publishAlerts } from '#shared/alerting/queue.ts';

/** Younger alerts are still on their first way through the queue (retries included). */
export const SWEEP_GRACE_MS = 10 * 60 * 1000;
const SWEEP_LIMIT = 500;

export async function sweepUndelivered(now = new Date(), graceMs = SWEEP_GRACE_MS): Promise<number> {
  const before = new Date(now.getTime() - graceMs).toISOString();
  const stuck = await undeliveredAlerts(before, SWEEP_LIMIT);
  if (stuck.length > 0) {
    logger.warn('re-queueing alerts with undelivered channels', { count: stuck.length });
    await publishAlerts(stuck);
  }
  return stuck.length;
}
