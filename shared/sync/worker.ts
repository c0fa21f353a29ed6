/**
 * A connector worker's SQS handler for the providers it carries (their kits): one sync per record
 * `{accountId, connectionId, provider}`. The event source hands one record at a time (batch size 1): a sync that throws
 * fails its record, which comes back after the visibility timeout, then goes to the DLQ. A message of a provider the
 * worker does not carry (a routing mistake) fails the same way, so it is seen, never dropped.
 *
 * Its limits phase is queued for the provider's limits function (shared/sync/hooks.ts `queuedLimitsHooks`), so the
 * worker bundles no lever and no enforcement; the local stack's one worker passes hooks that run it in the same
 * process instead (functions/connections/worker.ts).
 */
import type { Context, SQSEvent } from 'aws-lambda';
import type { ProviderKits, SyncHooks } from '#shared/connections/kit.ts';
import type { Provider } from '#shared/connections/model.ts';
import { parseSyncMessage } from '#shared/connections/queue.ts';
import { syncConnection } from '#shared/connections/sync.ts';
import { queuedLimitsHooks } from '#shared/sync/hooks.ts';
import { logger } from '#shared/http/logger.ts';

export function syncWorker(kits: ProviderKits, hooksFor: (provider: Provider) => SyncHooks = queuedLimitsHooks) {
  return async (event: SQSEvent, context: Context): Promise<void> => {
    logger.addContext(context);
    for (const record of event.Records) {
      const message = parseSyncMessage(record.body);
      if (!message) {
        logger.error('malformed sync message dropped', { messageId: record.messageId, bodyLength: record.body.length });
        continue;
      }
      if (!kits[message.provider]) throw new Error(`This connector worker syncs ${Object.keys(kits).join(', ')}, not ${message.provider}.`);
      const result = await syncConnection(message.accountId, message.connectionId, { kits, hooks: hooksFor(message.provider) });
      logger.info('connection synced', { connectionId: message.connectionId, status: result.status, cells: result.cellsChanged, transactions: result.transactions });
    }
  };
}
