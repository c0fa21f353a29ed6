/**
 * Hands a connection to its provider's sync worker, off the request path:
 * - in AWS (`CONNECTOR_QUEUE_URLS` set: `{"<provider>": "<queue URL>"}`): one SQS message
 *   `{accountId, connectionId, provider}` on the queue of the connection's provider, which only that provider's worker
 *   reads (each worker bundles one provider's client: shared/sync/); the queues share one DLQ;
 * - locally: the in-process sink the local stack registers (local/stack.ts), which runs the worker's handler.
 * A message that cannot be queued is logged: the dispatcher queues the connection when it is due anyway.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';
import { logger } from '#shared/http/logger.ts';
import { PROVIDERS, type Provider } from '#shared/connections/model.ts';

export interface SyncMessage {
  accountId: string;
  connectionId: string;
  /** The connection's provider: which queue, and so which worker, the message goes to. */
  provider: Provider;
}

/** A parsed body's account, connection and provider, when it names them (the sync's message, and those built on it). */
export function syncMessageIn(v: Record<string, unknown>): SyncMessage | undefined {
  if (
    typeof v.accountId === 'string' &&
    /^br_[0-9A-Z]{26}$/.test(v.accountId) &&
    typeof v.connectionId === 'string' &&
    /^con_[0-9A-Z]{26}$/.test(v.connectionId) &&
    (PROVIDERS as readonly unknown[]).includes(v.provider)
  ) {
    return { accountId: v.accountId, connectionId: v.connectionId, provider: v.provider as Provider };
  }
  return undefined;
}

export function parseSyncMessage(body: string): SyncMessage | undefined {
  try {
    const v: unknown = JSON.parse(body);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? syncMessageIn(v as Record<string, unknown>) : undefined;
  } catch {
    // not JSON
  }
  return undefined;
}

const messageOf = (m: SyncMessage): SyncMessage => ({ accountId: m.accountId, connectionId: m.connectionId, provider: m.provider });

/** Each provider's sync queue (`CONNECTOR_QUEUE_URLS`, JSON); undefined when none is configured (locally). */
function connectorQueueUrls(): Partial<Record<Provider, string>> | undefined {
  const raw = process.env.CONNECTOR_QUEUE_URLS;
  if (!raw) return undefined;
  return JSON.parse(raw) as Partial<Record<Provider, string>>;
}

let localSink: ((messages: SyncMessage[]) => void) | undefined;
let sqs: SQSClient | undefined;

export function setLocalSyncSink(sink: ((messages: SyncMessage[]) => void) | undefined): void {
  localSink = sink;
}

export async function queueSyncs(messages: readonly SyncMessage[]): Promise<number> {
  if (messages.length === 0) return 0;
  const queueUrls = connectorQueueUrls();
  if (queueUrls) {
    sqs ??= new SQSClient({ region: config().region });
    let sent = 0;
    for (const provider of PROVIDERS) {
      const mine = messages.filter((m) => m.provider === provider);
      const queueUrl = queueUrls[provider];
      if (mine.length === 0) continue;
      if (!queueUrl) {
        logger.error('no sync queue for this provider', { provider, count: mine.length });
        continue;
      }
      for (let i = 0; i < mine.length; i += 10) {
        const batch = mine.slice(i, i + 10);
        try {
          const res = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch.map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify(messageOf(m)) })) }));
          sent += res.Successful?.length ?? 0;
          if (res.Failed?.length) logger.error('sync messages not queued', { failed: res.Failed.length });
        } catch (error) {
          logger.error('sync messages not queued', { count: batch.length, reason: error instanceof Error ? error.name : 'error' });
        }
      }
    }
    return sent;
  }
  if (localSink) {
    localSink(messages.map(messageOf));
    return messages.length;
  }
  logger.warn('no sync queue configured: connections are synced by the schedule only', { count: messages.length });
  return 0;
}

export const queueSync = (m: SyncMessage) => queueSyncs([m]).then(() => undefined);
