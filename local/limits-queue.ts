/**
 * A local stand-in for a provider's limits queue (SQS FIFO, one message group per connection) and its event source
 * mapping (local/queue.ts): the messages a connector worker queues after its sync (shared/sync/limits-queue.ts) go, one
 * record per invocation, to a limits function's Lambda handler (functions/connections/limits-<provider>.ts) as a real
 * SQS event. The local stack runs the limits phase in its worker's process instead (shared/sync/all.ts); a test of the
 * AWS path starts this one beside the provider's worker handler.
 */
import { setLocalLimitsSink, type LimitsMessage } from '#shared/sync/limits-queue.ts';
import type { Provider } from '#shared/connections/model.ts';
import { startLocalQueue, type LocalQueue, type QueueHandler, type QueueOptions } from '#local/queue.ts';

export type LimitsQueue = LocalQueue<LimitsMessage>;

const HANDLERS: Record<Provider, () => Promise<{ handler: unknown }>> = {
  openai: () => import('#functions/connections/limits-openai.ts'),
  anthropic: () => import('#functions/connections/limits-anthropic.ts'),
  openrouter: () => import('#functions/connections/limits-openrouter.ts'),
};

/** Starts the queue of `provider`'s limits function and registers it as this process's limits sink; `stop()` unregisters it. */
export function startLimitsQueue(provider: Provider, options: QueueOptions = {}): LimitsQueue {
  const queue = startLocalQueue<LimitsMessage>(
    {
      label: `limits-queue-${provider}`,
      queueName: `burnrate-local-limits-${provider}.fifo`,
      functionName: `burnrate-local-ConnectorLimits-${provider}`,
      // The limits function's timeout in AWS (infra/connector-limits.ts CONNECTOR_LIMITS_TIMEOUT).
      timeoutMs: 120_000,
      workerFile: `functions/connections/limits-${provider}.ts`,
      loadHandler: () => HANDLERS[provider]().then((m) => m.handler as QueueHandler),
      toBody: (m) => JSON.stringify(m),
      groupOf: (m) => m.connectionId,
      droppedNote: 'the next sync of each connection queues its limits pass again',
    },
    // One pass per invocation, as the event source in AWS (batch size 1); the infra's 3 receives before the DLQ.
    { batchSize: 1, maxReceiveCount: 3, ...options },
  );
  setLocalLimitsSink((messages) => queue.publish(messages));
  return {
    ...queue,
    get deadLetters() {
      return queue.deadLetters;
    },
    async stop() {
      setLocalLimitsSink(undefined);
      await queue.stop();
    },
  };
}
