/**
 * A local stand-in for the evaluation SQS queue and its event source mapping (local/queue.ts): batches of up to
 * 10 messages to the evaluation Lambda handler (functions/connections/evaluate.ts) as a real SQS event. The local
 * stack runs one for the syncs of its worker and its ingests; a test that syncs or ingests in its own process starts
 * its own (test/integration/harness.ts `pointConnectorsAtStack`).
 */
import { isIngestEvaluation, setLocalEvaluationSink, type Evaluation } from '#shared/alerting/evaluation-queue.ts';
import { startLocalQueue, type LocalQueue, type QueueOptions } from '#local/queue.ts';

export type EvaluationQueue = LocalQueue<Evaluation>;

/** Starts the queue and registers it as this process's evaluation sink; `stop()` unregisters it. */
export function startEvaluationQueue(options: QueueOptions = {}): EvaluationQueue {
  const queue = startLocalQueue<Evaluation>(
    {
      label: 'evaluation-queue',
      queueName: 'burnrate-local-sync-evaluations',
      functionName: 'burnrate-local-SyncEvaluator',
      // The evaluator's timeout in AWS (infra SYNC_EVALUATOR_TIMEOUT).
      timeoutMs: 60_000,
      workerFile: 'functions/connections/evaluate.ts',
      loadHandler: () => import('#functions/connections/evaluate.ts').then((m) => m.handler),
      toBody: (m) => JSON.stringify(m),
      droppedNote: 'their alerts are raised by the next sync or ingest that moves spend',
    },
    options,
  );
  // An ingest's evaluation is handed over before the ingest answers (its alerts, anomaly blocks and budget blocks show
  // with the answer locally; in AWS one queue hop later); a sync's follows it, as in AWS.
  setLocalEvaluationSink((messages) => (messages.some(isIngestEvaluation) ? queue.publishAndWait(messages) : queue.publish(messages)));
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
