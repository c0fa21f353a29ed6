import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/http/logger.ts';
import { parseExportMessage } from '#shared/spend/export-queue.ts';
import { runSpendExport } from '#shared/spend/exports.ts';

const processor = new BatchProcessor(EventType.SQS);

async function runRecord(record: SQSRecord): Promise<void> {
  const message = parseExportMessage(record.body);
  if (!message) {
    // Retrying cannot fix it: dropped (acknowledged) with a log line, not sent round until the DLQ.
    logger.error('malformed export message dropped', { messageId: record.messageId, bodyLength: record.body.length });
    return;
  }
  const outcome = await runSpendExport(message);
  logger.info('spend export settled', { exportId: message.exportId, outcome });
}

/** SQS → the export worker: each record `{accountId, exportId}` is built into its gzip CSV file and settled. */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  return processPartialResponse(event, runRecord, processor, { context, throwOnFullBatchFailure: false });
};
