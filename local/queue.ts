/**
 * A local stand-in for an SQS queue and its event source mapping (the alerts queue: local/alert-queue.ts; the export
 * jobs: local/stack.ts): `publish` enqueues (never blocking the caller), one worker loop hands batches of messages to
 * the consumer's Lambda handler as a real SQS event, and the records it reports in `batchItemFailures` (or every
 * record, when the handler throws) come back after a backoff — until maxReceiveCount, after which they are
 * "dead-lettered": kept in `deadLetters` and logged.
 *
 * One batch runs at a time, like one Lambda container: the handler's module-scope batch processor is not shared.
 * `concurrency` runs more at once, like as many containers, for a handler that keeps no batch state at module scope
 * (the sync worker: one record per invocation, many syncs at once).
 *
 * A FIFO queue (the spec's `groupOf`: the limits queues, local/limits-queue.ts) hands out a message group's messages
 * in the order they were sent, and none of a group while one of it is in flight or waiting for its retry (SQS FIFO:
 * a failed message comes back before the later ones of its group); each record names its `MessageGroupId`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void> | SQSBatchResponse | void;

/** What one queue is: its consumer and names (fixed per queue), besides the tunable {@link QueueOptions}. */
export interface QueueSpec<M> {
  /** `[alert-queue]` in log lines. */
  label: string;
  queueName: string;
  functionName: string;
  /** The consumer's timeout in AWS (infra): what getRemainingTimeInMillis counts down from. */
  timeoutMs: number;
  /** The consumer's module (for the log line when it cannot be loaded) and its handler. */
  workerFile: string;
  loadHandler: () => Promise<QueueHandler>;
  /** One message's body. */
  toBody: (message: M) => string;
  /** What it means that messages are dropped at stop (`their alerts keep deliveries pending`). */
  droppedNote: string;
  /** A FIFO queue: the message group of each message. */
  groupOf?: (message: M) => string;
}

export interface QueueOptions {
  /** @default the spec's handler */
  handler?: QueueHandler;
  /** Delay before the n-th retry is `baseDelayMs × 2^(n-1)`. @default 200 */
  baseDelayMs?: number;
  /** Receives before a message is dead-lettered (the CDK DLQ's maxReceiveCount). @default 6 */
  maxReceiveCount?: number;
  /** @default 10 (the event source's batch size) */
  batchSize?: number;
  /** Batches in flight at once (Lambda containers). @default 1 */
  concurrency?: number;
  region?: string;
  /** Where dead letters and handler crashes are reported. @default console.error */
  log?: (line: string) => void;
}

export interface DeadLetter {
  messageId: string;
  body: string;
  receiveCount: number;
  deadLetteredAt: string;
}

export interface LocalQueue<M> {
  publish(messages: readonly M[]): void;
  /**
   * Publishes, and resolves once each of these messages was handled (or dead-lettered, or dropped at stop): for a
   * producer the local stack lets wait for its consumer (an ingest for its evaluation, local/evaluation-queue.ts).
   */
  publishAndWait(messages: readonly M[]): Promise<void>;
  /** Resolves once nothing is queued, running or waiting for a retry (dead letters aside). */
  drain(): Promise<void>;
  /** Stops the loop: waits for the running batch; messages still queued or waiting are dropped (and counted). */
  stop(): Promise<void>;
  readonly deadLetters: readonly DeadLetter[];
}

interface Message {
  messageId: string;
  body: string;
  md5OfBody: string;
  sentTimestamp: number;
  firstReceiveTimestamp?: number;
  receiveCount: number;
  /** Called once the message leaves the queue: handled, dead-lettered or dropped (`publishAndWait`). */
  done?: () => void;
  /** FIFO: its message group. */
  groupId?: string;
}

export function startLocalQueue<M>(spec: QueueSpec<M>, options: QueueOptions = {}): LocalQueue<M> {
  const baseDelayMs = options.baseDelayMs ?? 200;
  const maxReceiveCount = options.maxReceiveCount ?? 6;
  const batchSize = options.batchSize ?? 10;
  const concurrency = options.concurrency ?? 1;
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const log = options.log ?? ((line: string) => console.error(line));
  const handler: Promise<QueueHandler> = options.handler ? Promise.resolve(options.handler) : spec.loadHandler();
  // An unusable worker module shows at start-up, not with the first message.
  handler.catch((error: unknown) => log(`[${spec.label}] cannot load ${spec.workerFile}: ${errorText(error)}`));

  const ready: Message[] = [];
  /** Messages waiting for their retry, by their timer. */
  const retryTimers = new Map<NodeJS.Timeout, Message>();
  const deadLetters: DeadLetter[] = [];
  /** setImmediate callbacks still to run (publishes and retries on their way into `ready`). */
  let pendingTurns = 0;
  const running = new Set<Promise<void>>();
  let stopped = false;
  let idleWaiters: Array<() => void> = [];
  /** FIFO: the groups with a message in flight or waiting for its retry. */
  const busyGroups = new Set<string>();

  /** Up to batchSize ready messages, in order; in a FIFO queue none of a busy group (and one message per group). */
  function take(): Message[] {
    if (!spec.groupOf) return ready.splice(0, batchSize);
    const batch: Message[] = [];
    for (let i = 0; i < ready.length && batch.length < batchSize; ) {
      const m = ready[i]!;
      if (busyGroups.has(m.groupId!)) {
        i += 1;
        continue;
      }
      busyGroups.add(m.groupId!);
      batch.push(m);
      ready.splice(i, 1);
    }
    return batch;
  }

  const idle = () => pendingTurns === 0 && ready.length === 0 && retryTimers.size === 0 && running.size === 0;
  const notifyIdle = () => {
    if (!idle()) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  function pump(): void {
    if (stopped || ready.length === 0) return notifyIdle();
    while (running.size < concurrency && ready.length > 0) {
      const batch = take();
      if (batch.length === 0) break;
      const run: Promise<void> = runBatch(batch).finally(() => {
        running.delete(run);
        pump();
      });
      running.add(run);
    }
  }

  async function runBatch(batch: Message[]): Promise<void> {
    const now = Date.now();
    for (const m of batch) {
      m.receiveCount += 1;
      m.firstReceiveTimestamp ??= now;
    }
    let failed: Set<string>;
    try {
      const fn = await handler;
      const response = await fn({ Records: batch.map((m) => toRecord(m, region, spec.queueName)) }, lambdaContext(region, spec));
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // A thrown handler (or a timeout) fails the whole batch, as with an SQS event source.
      log(`[${spec.label}] ${spec.workerFile} failed a batch of ${batch.length}: ${errorText(error)}`);
      failed = new Set(batch.map((m) => m.messageId));
    }
    for (const m of batch) {
      if (!failed.has(m.messageId) || m.receiveCount >= maxReceiveCount) busyGroups.delete(m.groupId!);
      if (!failed.has(m.messageId)) {
        m.done?.();
        continue;
      }
      if (m.receiveCount >= maxReceiveCount) {
        deadLetters.push({ messageId: m.messageId, body: m.body, receiveCount: m.receiveCount, deadLetteredAt: new Date().toISOString() });
        log(`[${spec.label}] dead letter after ${m.receiveCount} receives: ${m.body}`);
        m.done?.();
        continue;
      }
      const timer = setTimeout(() => {
        retryTimers.delete(timer);
        if (stopped) {
          m.done?.();
          return notifyIdle();
        }
        if (m.groupId !== undefined) {
          // FIFO: first again, before the later messages of its group.
          busyGroups.delete(m.groupId);
          ready.unshift(m);
        } else ready.push(m);
        // On the next turn: retries falling due together go out in one batch.
        pendingTurns += 1;
        setImmediate(() => {
          pendingTurns -= 1;
          pump();
        });
      }, baseDelayMs * 2 ** (m.receiveCount - 1));
      retryTimers.set(timer, m);
    }
  }

  /** Messages on their way in (a turn later, so the producer's request answers first), each with its `done`. */
  const enqueue = (messages: readonly M[], done?: () => void): void => {
    const bodies = messages.map((m) => ({ body: spec.toBody(m), groupId: spec.groupOf?.(m) }));
    pendingTurns += 1;
    setImmediate(() => {
      pendingTurns -= 1;
      if (stopped) {
        for (let i = 0; i < bodies.length; i++) done?.();
        return notifyIdle();
      }
      const sentTimestamp = Date.now();
      for (const { body, groupId } of bodies) {
        ready.push({
          messageId: randomUUID(),
          body,
          md5OfBody: createHash('md5').update(body).digest('hex'),
          sentTimestamp,
          receiveCount: 0,
          ...(done ? { done } : {}),
          ...(groupId === undefined ? {} : { groupId }),
        });
      }
      pump();
    });
  };

  return {
    deadLetters,
    publish(messages) {
      if (stopped || messages.length === 0) return;
      enqueue(messages);
    },
    publishAndWait(messages) {
      if (stopped || messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        let left = messages.length;
        enqueue(messages, () => {
          left -= 1;
          if (left === 0) resolve();
        });
      });
    },
    drain() {
      if (idle()) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const waiting = retryTimers.size + ready.length;
      for (const [timer, m] of retryTimers) {
        clearTimeout(timer);
        m.done?.();
      }
      retryTimers.clear();
      for (const m of ready) m.done?.();
      ready.length = 0;
      await Promise.all(running);
      if (waiting > 0) log(`[${spec.label}] stopped with ${waiting} message(s) undelivered; ${spec.droppedNote}`);
      notifyIdle();
    },
  };
}

function toRecord(m: Message, region: string, queueName: string): SQSRecord {
  return {
    messageId: m.messageId,
    receiptHandle: `${m.messageId}#${m.receiveCount}`,
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount),
      SentTimestamp: String(m.sentTimestamp),
      SenderId: 'LOCAL',
      ApproximateFirstReceiveTimestamp: String(m.firstReceiveTimestamp ?? m.sentTimestamp),
      ...(m.groupId === undefined ? {} : { MessageGroupId: m.groupId }),
    },
    messageAttributes: {},
    md5OfBody: m.md5OfBody,
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${region}:000000000000:${queueName}`,
    awsRegion: region,
  };
}

function lambdaContext(region: string, spec: Pick<QueueSpec<unknown>, 'timeoutMs' | 'functionName'>): Context {
  const deadline = Date.now() + spec.timeoutMs;
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: spec.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${spec.functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${spec.functionName}`,
    logStreamName: `${day}/[$LATEST]local`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
