/**
 * A provider's limits function (functions/connections/limits-<provider>.ts): the limits pass of each message its sync
 * worker queued (shared/sync/limits-queue.ts), with that provider's lever alone. Per message, the connection read
 * strongly consistent:
 * - deleted or paused: every lever Burnrate still holds there goes back (a deleted one's with the admin key sealed in
 *   its release job; shared/sync/levers.ts `releaseConnectionLevers`);
 * - else: its admin key opened (KMS Decrypt with the connection's encryption context, as the worker does) and the
 *   anomaly rules, the budgets' pass and the levers run at the sync's clock or later (`enforceLimits`), which also brings the
 *   next sync forward for a budget near its limit or a rule that stops keys.
 *
 * The records of an event run in order; one that throws comes back (`batchItemFailures`) with every later record of
 * its connection (its FIFO message group) so that none overtakes it, then goes to the DLQ. A body retrying cannot fix
 * is dropped with a log line.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { getConnection } from '#shared/db/connections.ts';
import { openSecret } from '#shared/connections/secrets.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { logger } from '#shared/http/logger.ts';
import { parseLimitsMessage, type LimitsMessage } from '#shared/sync/limits-queue.ts';
import { enforceLimits, releaseConnectionLevers, type LeverFactories } from '#shared/sync/levers.ts';

export type LimitsOutcome = 'released' | 'enforced';

/** One message's pass. */
export async function runLimits(levers: LeverFactories, message: LimitsMessage, http?: ProviderHttpOptions): Promise<LimitsOutcome> {
  const { accountId, connectionId } = message;
  // Never behind the sync that queued it, nor behind the clock: a pass retried minutes later acts on the states as they
  // are now (a pass dated before the states an earlier pass wrote would read them from its future).
  const at = new Date(Math.max(Date.parse(message.at), Date.now()));
  const conn = await getConnection(accountId, connectionId, true);
  if (!conn || conn.status === 'paused') {
    await releaseConnectionLevers(levers, accountId, connectionId, conn, at, http);
    return 'released';
  }
  const adminKey = await openSecret(conn.secret, { accountId, connectionId });
  await enforceLimits(levers, conn, adminKey, at, http, new Map(message.grown));
  return 'enforced';
}

/** The SQS handler of a limits function carrying these providers' levers (its own provider's). */
export function limitsWorker(levers: LeverFactories) {
  const carried = Object.keys(levers).join(', ');
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    const failedGroups = new Set<string>();
    for (const record of event.Records) {
      const group = record.attributes?.MessageGroupId ?? '';
      if (failedGroups.has(group)) {
        failures.push({ itemIdentifier: record.messageId });
        continue;
      }
      const message = parseLimitsMessage(record.body);
      if (!message) {
        logger.error('malformed limits message dropped', { messageId: record.messageId, bodyLength: record.body.length });
        continue;
      }
      try {
        if (!Object.hasOwn(levers, message.provider)) throw new Error(`This limits function pulls the levers of ${carried}, not ${message.provider}.`);
        const outcome = await runLimits(levers, message);
        logger.info('limits pass done', { connectionId: message.connectionId, outcome, grown: message.grown.length });
      } catch (error) {
        logger.error('limits pass failed', { connectionId: message.connectionId, messageId: record.messageId, reason: error instanceof Error ? error.message : String(error) });
        failures.push({ itemIdentifier: record.messageId });
        failedGroups.add(group);
      }
    }
    return { batchItemFailures: failures };
  };
}
