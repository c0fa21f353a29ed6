import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/http/logger.ts';
import { evaluateAfterSync, parseSyncEvaluation } from '#shared/alerting/after-sync.ts';

const processor = new BatchProcessor(EventType.SQS);

async function evaluateRecord(record: SQSRecord): Promise<void> {
  const evaluation = parseSyncEvaluation(record.body);
  if (!evaluation) {
    // Retrying cannot fix it: dropped (acknowledged) with a log line, not sent round until the DLQ.
    logger.error('malformed sync evaluation dropped', { messageId: record.messageId, bodyLength: record.body.length });
    return;
  }
  await evaluateAfterSync(evaluation);
}

/** SQS → the alerts a sync calls for: each record one sync's evaluation (a record that throws comes back, then goes to the DLQ). */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  return processPartialResponse(event, evaluateRecord, processor, { context, throwOnFullBatchFailure: false });
};
