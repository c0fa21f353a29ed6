/**
 * A connector worker's SQS handler for the providers it carries (their kits and levers): one sync per record
 * `{accountId, connectionId, provider}`. The event source hands one record at a time (batch size 1): a sync that throws
 * fails its record, which comes back after the visibility timeout, then goes to the DLQ. A message of a provider the
 * worker does not carry (a routing mistake) fails the same way, so it is seen, never dropped.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import type { ProviderKits } from '#shared/connections/kit.ts';
import { parseSyncMessage } from '#shared/connections/queue.ts';
import { syncConnection } from '#shared/connections/sync.ts';
import { syncHooks } from '#shared/sync/hooks.ts';
import type { LeverFactories } from '#shared/sync/levers.ts';
import { logger } from '#shared/http/logger.ts';

export function syncWorker(kits: ProviderKits, levers: LeverFactories) {
  const hooks = syncHooks(levers);
  return async (event: SQSEvent, context: Context): Promise<void> => {
    logger.addContext(context);
    for (const record of event.Records) {
      const message = parseSyncMessage(record.body);
      if (!message) {
        logger.error('malformed sync message dropped', { messageId: record.messageId, bodyLength: record.body.length });
        continue;
      }
      if (!kits[message.provider]) throw new Error(`This connector worker syncs ${Object.keys(kits).join(', ')}, not ${message.provider}.`);
      const result = await syncConnection(message.accountId, message.connectionId, { kits, hooks });
      logger.info('connection synced', { connectionId: message.connectionId, status: result.status, cells: result.cellsChanged, transactions: result.transactions });
    }
  };
}
