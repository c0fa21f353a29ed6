/**
 * A local stand-in for the sync evaluation SQS queue and its event source mapping (local/queue.ts): batches of up to
 * 10 messages to the evaluation Lambda handler (functions/connections/evaluate.ts) as a real SQS event. The local
 * stack runs one for the syncs of its worker; a test that syncs in its own process starts its own
 * (test/integration/harness.ts `pointConnectorsAtStack`).
 */
import { setLocalEvaluationSink, type SyncEvaluation } from '#shared/alerting/evaluation-queue.ts';
import { startLocalQueue, type LocalQueue, type QueueOptions } from '#local/queue.ts';

export type EvaluationQueue = LocalQueue<SyncEvaluation>;

/** Starts the queue and registers it as this process's evaluation sink; `stop()` unregisters it. */
export function startEvaluationQueue(options: QueueOptions = {}): EvaluationQueue {
  const queue = startLocalQueue<SyncEvaluation>(
    {
      label: 'evaluation-queue',
      queueName: 'burnrate-local-sync-evaluations',
      functionName: 'burnrate-local-SyncEvaluator',
      // The evaluator's timeout in AWS (infra SYNC_EVALUATOR_TIMEOUT).
      timeoutMs: 60_000,
      workerFile: 'functions/connections/evaluate.ts',
      loadHandler: () => import('#functions/connections/evaluate.ts').then((m) => m.handler),
      toBody: (m) => JSON.stringify(m),
      droppedNote: 'their alerts are raised by the next sync that moves spend',
    },
    options,
  );
  setLocalEvaluationSink((messages) => queue.publish(messages));
  return {
    ...queue,
    get deadLetters() {
      return queue.deadLetters;
    },
    async stop() {
      setLocalEvaluationSink(undefined);
      await queue.stop();
    },
  };
}
