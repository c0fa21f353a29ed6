/**
 * A local stand-in for the alerts SQS queue and its event source mapping: `publish` enqueues (never blocking the
 * caller), one worker loop hands batches of up to 10 messages to the notifier Lambda handler
 * (functions/notify/worker.ts) as a real SQS event, and the records it reports in `batchItemFailures` (or every
 * record, when the handler throws) come back after a backoff — until maxReceiveCount, after which they are
 * "dead-lettered": kept in `deadLetters` and logged.
 *
 * One batch runs at a time, like one Lambda container: the handler's module-scope batch processor is not shared.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { AlertMessage } from '#shared/notify/queue.ts';

export type AlertQueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void> | SQSBatchResponse | void;

export interface AlertQueueOptions<M = AlertMessage> {
  /** The message body of a published message. @default `{accountId, alertId}` of an alert message */
  serialize?: (message: M) => string;
  /** @default the `handler` of functions/notify/worker.ts */
  handler?: AlertQueueHandler | Promise<AlertQueueHandler>;
  /** Delay before the n-th retry is `baseDelayMs × 2^(n-1)`. @default 200 */
  baseDelayMs?: number;
  /** Receives before a message is dead-lettered (the CDK DLQ's maxReceiveCount). @default 6 */
  maxReceiveCount?: number;
  /** @default 10 (the event source's batch size) */
  batchSize?: number;
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

export interface AlertQueue<M = AlertMessage> {
  publish(messages: readonly M[]): void;
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
}

const QUEUE_NAME = 'burnrate-local-alerts';
const FUNCTION_NAME = 'burnrate-local-Notifier';
/** The notifier's timeout in AWS (infra): what getRemainingTimeInMillis counts down from. */
const FUNCTION_TIMEOUT_MS = 30_000;

/**
 * Also the local stand-in of the connections' sync queue (local/stack.ts): the same loop with the sync worker as its
 * handler and `{accountId, connectionId}` bodies.
 */
export function startAlertQueue<M = AlertMessage>(options: AlertQueueOptions<M> = {}): AlertQueue<M> {
  const serialize = options.serialize ?? ((m: M) => JSON.stringify({ accountId: (m as AlertMessage).accountId, alertId: (m as AlertMessage).alertId }));
  const baseDelayMs = options.baseDelayMs ?? 200;
  const maxReceiveCount = options.maxReceiveCount ?? 6;
  const batchSize = options.batchSize ?? 10;
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const log = options.log ?? ((line: string) => console.error(line));
  const handler: Promise<AlertQueueHandler> = options.handler
    ? Promise.resolve(options.handler)
    : import('#functions/notify/worker.ts').then((m) => m.handler as AlertQueueHandler);
  // An unusable worker module shows at start-up, not with the first alert.
  handler.catch((error: unknown) => log(`[alert-queue] cannot load functions/notify/worker.ts: ${errorText(error)}`));

  const ready: Message[] = [];
  const retryTimers = new Set<NodeJS.Timeout>();
  const deadLetters: DeadLetter[] = [];
  /** setImmediate callbacks still to run (publishes and retries on their way into `ready`). */
  let pendingTurns = 0;
  let running: Promise<void> | undefined;
  let stopped = false;
  let idleWaiters: Array<() => void> = [];

  const idle = () => pendingTurns === 0 && ready.length === 0 && retryTimers.size === 0 && !running;
  const notifyIdle = () => {
    if (!idle()) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  function pump(): void {
    if (running || stopped || ready.length === 0) return notifyIdle();
    const batch = ready.splice(0, batchSize);
    running = runBatch(batch).finally(() => {
      running = undefined;
      pump();
    });
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
      const response = await fn({ Records: batch.map((m) => toRecord(m, region)) }, lambdaContext(region));
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // A thrown handler (or a timeout) fails the whole batch, as with an SQS event source.
      log(`[alert-queue] the notifier failed a batch of ${batch.length}: ${errorText(error)}`);
      failed = new Set(batch.map((m) => m.messageId));
    }
    for (const m of batch) {
      if (!failed.has(m.messageId)) continue;
      if (m.receiveCount >= maxReceiveCount) {
        deadLetters.push({ messageId: m.messageId, body: m.body, receiveCount: m.receiveCount, deadLetteredAt: new Date().toISOString() });
        log(`[alert-queue] dead letter after ${m.receiveCount} receives: ${m.body}`);
        continue;
      }
      const timer = setTimeout(() => {
        retryTimers.delete(timer);
        if (stopped) return notifyIdle();
        ready.push(m);
        // On the next turn: retries falling due together go out in one batch.
        pendingTurns += 1;
        setImmediate(() => {
          pendingTurns -= 1;
          pump();
        });
      }, baseDelayMs * 2 ** (m.receiveCount - 1));
      retryTimers.add(timer);
    }
  }

  return {
    deadLetters,
    publish(messages) {
      if (stopped || messages.length === 0) return;
      const bodies = messages.map(serialize);
      pendingTurns += 1;
      // Off the caller's path: the ingest request that created the alert answers first.
      setImmediate(() => {
        pendingTurns -= 1;
        if (stopped) return notifyIdle();
        const sentTimestamp = Date.now();
        for (const body of bodies) {
          ready.push({ messageId: randomUUID(), body, md5OfBody: createHash('md5').update(body).digest('hex'), sentTimestamp, receiveCount: 0 });
        }
        pump();
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
      for (const timer of retryTimers) clearTimeout(timer);
      retryTimers.clear();
      ready.length = 0;
      await running;
      if (waiting > 0) log(`[alert-queue] stopped with ${waiting} message(s) undelivered; their alerts keep deliveries pending`);
      notifyIdle();
    },
  };
}

function toRecord(m: Message, region: string): SQSRecord {
  return {
    messageId: m.messageId,
    receiptHandle: `${m.messageId}#${m.receiveCount}`,
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount),
      SentTimestamp: String(m.sentTimestamp),
      SenderId: 'LOCAL',
      ApproximateFirstReceiveTimestamp: String(m.firstReceiveTimestamp ?? m.sentTimestamp),
    },
    messageAttributes: {},
    md5OfBody: m.md5OfBody,
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${region}:000000000000:${QUEUE_NAME}`,
    awsRegion: region,
  };
}

function lambdaContext(region: string): Context {
  const deadline = Date.now() + FUNCTION_TIMEOUT_MS;
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${FUNCTION_NAME}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${FUNCTION_NAME}`,
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
