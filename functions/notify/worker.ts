import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/http/logger.ts';
import { deliverAlert } from '#shared/notify/deliver.ts';
import { parseAlertMessage } from '#shared/alerting/queue.ts';

const processor = new BatchProcessor(EventType.SQS);

/** A channel is still pending: this record goes back to the queue and comes again after the visibility timeout. */
class DeliveryPending extends Error {
  override name = 'DeliveryPending';
}

async function deliverRecord(record: SQSRecord): Promise<void> {
  const message = parseAlertMessage(record.body);
  if (!message) {
    // Retrying cannot fix it: dropped (acknowledged) with a log line, not sent round until the DLQ.
    logger.error('malformed alert message dropped', { messageId: record.messageId, bodyLength: record.body.length });
    return;
  }
  const { done } = await deliverAlert(message.accountId, message.alertId);
  if (!done) throw new DeliveryPending(`alert ${message.alertId} has deliveries pending`);
}

/** SQS → notifier: each record `{accountId, alertId}` is delivered; records still pending are reported as failures. */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  return processPartialResponse(event, deliverRecord, processor, { context, throwOnFullBatchFailure: false });
};
