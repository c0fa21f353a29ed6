/**
 * A local stand-in for the alerts SQS queue and its event source mapping (local/queue.ts): batches of up to 10
 * messages to the notifier Lambda handler (functions/notify/worker.ts) as a real SQS event, failures retried with
 * backoff until maxReceiveCount, then "dead-lettered".
 */
import type { AlertMessage } from '#shared/alerting/queue.ts';
import { startLocalQueue, type DeadLetter, type LocalQueue, type QueueHandler, type QueueOptions } from '#local/queue.ts';

export type AlertQueueHandler = QueueHandler;
export type AlertQueueOptions = QueueOptions;
export type AlertQueue = LocalQueue<AlertMessage>;
export type { DeadLetter };

export function startAlertQueue(options: AlertQueueOptions = {}): AlertQueue {
  return startLocalQueue<AlertMessage>(
    {
      label: 'alert-queue',
      queueName: 'burnrate-local-alerts',
      functionName: 'burnrate-local-Notifier',
      // The notifier's timeout in AWS (infra NOTIFIER_TIMEOUT).
      timeoutMs: 30_000,
      workerFile: 'functions/notify/worker.ts',
      loadHandler: () => import('#functions/notify/worker.ts').then((m) => m.handler as QueueHandler),
      toBody: (m) => JSON.stringify({ accountId: m.accountId, alertId: m.alertId }),
      droppedNote: 'their alerts keep deliveries pending',
    },
    options,
  );
}
