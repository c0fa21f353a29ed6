/**
 * Hands a connection to the sync worker, off the request path:
 * - in AWS (`CONNECTOR_QUEUE_URL` set): one SQS message `{accountId, connectionId}` (the worker's queue, with a DLQ);
 * - locally: the in-process sink the local stack registers (local/stack.ts), which runs the worker's handler.
 * A message that cannot be queued is logged: the dispatcher queues the connection when it is due anyway.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';
import { logger } from '#shared/http/logger.ts';

export interface SyncMessage {
  accountId: string;
  connectionId: string;
}

export function parseSyncMessage(body: string): SyncMessage | undefined {
  try {
    const v = JSON.parse(body) as Record<string, unknown>;
    if (typeof v.accountId === 'string' && /^br_[0-9A-Z]{26}$/.test(v.accountId) && typeof v.connectionId === 'string' && /^con_[0-9A-Z]{26}$/.test(v.connectionId)) {
      return { accountId: v.accountId, connectionId: v.connectionId };
    }
  } catch {
    // not JSON
  }
  return undefined;
}

let localSink: ((messages: SyncMessage[]) => void) | undefined;
let sqs: SQSClient | undefined;

export function setLocalSyncSink(sink: ((messages: SyncMessage[]) => void) | undefined): void {
  localSink = sink;
}

export async function queueSyncs(messages: readonly SyncMessage[]): Promise<number> {
  if (messages.length === 0) return 0;
  const queueUrl = process.env.CONNECTOR_QUEUE_URL;
  if (queueUrl) {
    sqs ??= new SQSClient({ region: config().region });
    let sent = 0;
    for (let i = 0; i < messages.length; i += 10) {
      const batch = messages.slice(i, i + 10);
      try {
        const res = await sqs.send(
          new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch.map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify({ accountId: m.accountId, connectionId: m.connectionId }) })) }),
        );
        sent += res.Successful?.length ?? 0;
        if (res.Failed?.length) logger.error('sync messages not queued', { failed: res.Failed.length });
      } catch (error) {
        logger.error('sync messages not queued', { count: batch.length, reason: error instanceof Error ? error.name : 'error' });
      }
    }
    return sent;
  }
  if (localSink) {
    localSink(messages.map((m) => ({ accountId: m.accountId, connectionId: m.connectionId })));
    return messages.length;
  }
  logger.warn('no sync queue configured: connections are synced by the schedule only', { count: messages.length });
  return 0;
}

export const queueSync = (m: SyncMessage) => queueSyncs([m]).then(() => undefined);
