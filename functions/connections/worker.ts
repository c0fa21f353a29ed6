import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/http/logger.ts';
import { parseSyncMessage } from '#shared/connections/queue.ts';
import { syncConnection } from '#shared/connections/sync.ts';

const processor = new BatchProcessor(EventType.SQS);

async function syncRecord(record: SQSRecord): Promise<void> {
  const message = parseSyncMessage(record.body);
  if (!message) {
    logger.error('malformed sync message dropped', { messageId: record.messageId, bodyLength: record.body.length });
    return;
  }
  const result = await syncConnection(message.accountId, message.connectionId);
  logger.info('connection synced', { connectionId: message.connectionId, status: result.status, cells: result.cellsChanged, transactions: result.transactions });
}

/** SQS → one sync per record `{accountId, connectionId}` (a record that throws comes back, then goes to the DLQ). */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  return processPartialResponse(event, syncRecord, processor, { context, throwOnFullBatchFailure: false });
};
