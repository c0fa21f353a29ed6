import type { Context, SQSEvent } from 'aws-lambda';
import { logger } from '#shared/http/logger.ts';
import { parseSyncMessage } from '#shared/connections/queue.ts';
import { syncConnection } from '#shared/connections/sync.ts';

/**
 * SQS → one sync per record `{accountId, connectionId}`. The event source hands one record at a time (batch size 1):
 * a sync that throws fails its record, which comes back after the visibility timeout, then goes to the DLQ.
 */
export const handler = async (event: SQSEvent, context: Context): Promise<void> => {
  logger.addContext(context);
  for (const record of event.Records) {
    const message = parseSyncMessage(record.body);
    if (!message) {
      logger.error('malformed sync message dropped', { messageId: record.messageId, bodyLength: record.body.length });
      continue;
    }
    const result = await syncConnection(message.accountId, message.connectionId);
    logger.info('connection synced', { connectionId: message.connectionId, status: result.status, cells: result.cellsChanged, transactions: result.transactions });
  }
};
