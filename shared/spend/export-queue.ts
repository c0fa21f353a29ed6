/**
 * Hands an asynchronous export to its worker, off the request path: in AWS (`EXPORTS_QUEUE_URL` set) one SQS message
 * per export, consumed by functions/spend/export-worker.ts; locally the in-process queue the local stack registers
 * with `setLocalExportQueue` (local/stack.ts, as it does the alerts queue).
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';
import { parseIdMessage } from '#shared/ids.ts';

/** The body of one queue message: which export to run. */
export interface ExportMessage {
  accountId: string;
  exportId: string;
}

/** A queue message's body, or undefined when it is not `{accountId, exportId}` with well-formed ids. */
export const parseExportMessage = (body: string): ExportMessage | undefined => parseIdMessage(body, { accountId: 'account', exportId: 'export' });

let localQueue: ((message: ExportMessage) => void) | undefined;
let sqs: SQSClient | undefined;

/** The local stack registers its in-process queue here (`undefined` unregisters it). */
export function setLocalExportQueue(queue: ((message: ExportMessage) => void) | undefined): void {
  localQueue = queue;
}

/** Queues the export. Throws when it cannot (the caller then settles the export as failed). */
export async function queueExport(message: ExportMessage): Promise<void> {
  const body: ExportMessage = { accountId: message.accountId, exportId: message.exportId };
  const queueUrl = process.env.EXPORTS_QUEUE_URL;
  if (queueUrl) {
    sqs ??= new SQSClient({ region: config().region });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body) }));
  } else if (localQueue) {
    localQueue(body);
  } else {
    throw new Error('no export queue is configured (EXPORTS_QUEUE_URL)');
  }
}
