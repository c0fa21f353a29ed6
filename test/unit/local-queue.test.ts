/**
 * The local stand-in of an SQS queue (local/queue.ts): `publishAndWait`, which the local stack's ingest uses to hand
 * its evaluation over before it answers, resolves once each message left the queue: handled, dead-lettered or
 * dropped at stop — never before its handler ran, never hanging.
 */
import { describe, expect, it } from 'vitest';
import type { SQSEvent } from 'aws-lambda';
import { startLocalQueue, type QueueHandler } from '#local/queue.ts';

const spec = (handler: QueueHandler) => ({
  spec: {
    label: 'test-queue',
    queueName: 'q',
    functionName: 'f',
    timeoutMs: 1_000,
    workerFile: 'none',
    loadHandler: () => Promise.resolve(handler),
    toBody: (m: string) => m,
    droppedNote: 'dropped',
  },
  options: { baseDelayMs: 5, maxReceiveCount: 3, log: () => {} },
});

describe('publishAndWait', () => {
  it('resolves after the handler took every message of the call, not before', async () => {
    const seen: string[] = [];
    const { spec: s, options } = spec(async (event: SQSEvent) => {
      await new Promise((r) => setTimeout(r, 20));
      seen.push(...event.Records.map((r) => r.body));
    });
    const queue = startLocalQueue<string>(s, options);
    await queue.publishAndWait(['a', 'b']);
    expect(seen.sort()).toEqual(['a', 'b']);
    await queue.stop();
  });

  it('a message that fails comes back and, once dead-lettered, no longer holds its producer', async () => {
    let receives = 0;
    const { spec: s, options } = spec(async (event: SQSEvent) => {
      receives += 1;
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    const queue = startLocalQueue<string>(s, options);
    await queue.publishAndWait(['x']);
    expect(receives).toBe(3);
    expect(queue.deadLetters.map((d) => d.body)).toEqual(['x']);
    await queue.stop();
  });

  it('stop lets go of a producer whose message waits for its retry', async () => {
    const { spec: s, options } = spec(async () => {
      throw new Error('down');
    });
    const queue = startLocalQueue<string>(s, { ...options, baseDelayMs: 60_000 });
    const waiting = queue.publishAndWait(['y']);
    await new Promise((r) => setTimeout(r, 30));
    await queue.stop();
    await expect(waiting).resolves.toBeUndefined();
  });
});
