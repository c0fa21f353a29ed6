/**
 * Hands created alerts to delivery, which never runs on the ingestion path.
 *
 * - In AWS (`ALERTS_QUEUE_URL` set): SQS SendMessageBatch, 10 messages a call; entries that fail are sent once
 *   more, then logged and dropped — the alert item exists either way and its deliveries stay `pending`.
 * - Locally: the in-process sink the local stack registers with `setLocalAlertSink` (local/alert-queue.ts).
 * - Neither: a warning, nothing else.
 *
 * `publishAlerts` never throws: ingestion must not fail because delivery could not be scheduled.
 */
import { SQSClient, SendMessageBatchCommand, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';
import { logger } from '#shared/http/logger.ts';
import { parseIdMessage } from '#shared/ids.ts';

/** The body of one queue message: which alert to deliver. */
export interface AlertMessage {
  accountId: string;
  alertId: string;
}

/** A queue message's body, or undefined when it is not `{accountId, alertId}` with well-formed ids. */
export const parseAlertMessage = (body: string): AlertMessage | undefined => parseIdMessage(body, { accountId: 'account', alertId: 'alert' });

export type LocalAlertSink = (messages: AlertMessage[]) => void;

/** SendMessageBatch takes at most 10 entries. */
const SQS_BATCH_MAX = 10;

let localSink: LocalAlertSink | undefined;
let sqs: SQSClient | undefined;

/** The local stack registers its in-process queue here (`undefined` unregisters it). */
export function setLocalAlertSink(sink: LocalAlertSink | undefined): void {
  localSink = sink;
}

export async function publishAlerts(messages: readonly AlertMessage[]): Promise<void> {
  if (messages.length === 0) return;
  try {
    const queueUrl = process.env.ALERTS_QUEUE_URL;
    if (queueUrl) {
      const sends: Promise<void>[] = [];
      for (let i = 0; i < messages.length; i += SQS_BATCH_MAX) sends.push(sendBatch(queueUrl, messages.slice(i, i + SQS_BATCH_MAX)));
      await Promise.all(sends);
    } else if (localSink) {
      localSink(messages.map((m) => ({ accountId: m.accountId, alertId: m.alertId })));
    } else {
      logger.warn('no alert queue configured: alerts are not delivered', { alerts: messages.length });
    }
  } catch (error) {
    logger.error('publishing alerts failed', { alerts: messages.length, error: error as Error });
  }
}

async function sendBatch(queueUrl: string, batch: readonly AlertMessage[]): Promise<void> {
  let entries: SendMessageBatchRequestEntry[] = batch.map((m, i) => ({
    Id: String(i),
    MessageBody: JSON.stringify({ accountId: m.accountId, alertId: m.alertId }),
  }));
  let lastError = '';
  for (let attempt = 0; attempt < 2 && entries.length > 0; attempt++) {
    try {
      const res = await client().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      const failed = new Set((res.Failed ?? []).map((f) => f.Id));
      lastError = (res.Failed ?? []).map((f) => f.Code ?? 'failed').join(', ');
      entries = entries.filter((e) => failed.has(e.Id));
    } catch (error) {
      // The whole call failed (after the SDK's own retries): all its entries are tried once more.
      lastError = error instanceof Error ? error.name : 'error';
    }
  }
  if (entries.length > 0) {
    const alertIds = entries.map((e) => batch[Number(e.Id)]?.alertId);
    logger.error('alerts could not be queued; their deliveries stay pending', { alertIds, reason: lastError });
  }
}

function client(): SQSClient {
  sqs ??= new SQSClient({ region: config().region });
  return sqs;
}
