import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/http/logger.ts';
import { evaluateAfterSync, parseEvaluation } from '#shared/alerting/after-sync.ts';
import { isIngestEvaluation } from '#shared/alerting/evaluation-queue.ts';
import { evaluateAfterIngest } from '#shared/ingest/after-ingest.ts';

const processor = new BatchProcessor(EventType.SQS);

async function evaluateRecord(record: SQSRecord): Promise<void> {
  const evaluation = parseEvaluation(record.body);
  if (!evaluation) {
    // Retrying cannot fix it: dropped (acknowledged) with a log line, not sent round until the DLQ.
    logger.error('malformed evaluation dropped', { messageId: record.messageId, bodyLength: record.body.length });
    return;
  }
  await (isIngestEvaluation(evaluation) ? evaluateAfterIngest(evaluation) : evaluateAfterSync(evaluation));
}

/**
 * SQS → what new spend calls for: each record one sync's or one ingest's evaluation (shared/alerting/evaluation-queue.ts;
 * a record that throws comes back, then goes to the DLQ).
 */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  return processPartialResponse(event, evaluateRecord, processor, { context, throwOnFullBatchFailure: false });
};
