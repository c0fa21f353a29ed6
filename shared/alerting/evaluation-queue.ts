/**
 * What follows new spend, handed to its own function off the one that wrote the spend (docs/architecture.md "After
 * spend lands"): a sync worker, which holds an admin key, only reads the provider and writes what it read; POST
 * /ingest only prices and writes events. `functions/connections/evaluate.ts` (the evaluator) then raises the alerts
 * that what they wrote calls for (shared/alerting/after-sync.ts) and, after an ingest, runs the spend-anomaly rules and
 * the budgets' pass over the reporter's block list (shared/ingest/after-ingest.ts). An evaluation runs at its
 * writer's clock (`at`), so its periods are the writer's.
 *
 * - In AWS (`EVALUATION_QUEUE_URL` set): one SQS message per part (its queue has a DLQ and an alarm);
 * - locally: the in-process queue the local stack registers (local/evaluation-queue.ts), which runs the same handler
 *   (an ingest's evaluation is handed over before the ingest answers there, see `LocalEvaluationSink`);
 * - neither: a warning, nothing else.
 *
 * A message that cannot be queued is logged: the alerts it would have raised are raised by the next sync or ingest
 * that moves spend (budgets and rules compare totals), except `new_key` for the keys it names (each key is
 * discovered once).
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';
import { logger } from '#shared/http/logger.ts';
import type { Discovered } from '#shared/alerting/evaluate.ts';
import type { PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import type { ModelName } from '#shared/alerting/unpriced-model.ts';

/** One message's body: what a sync found that alerts may follow from. */
export interface SyncEvaluation {
  accountId: string;
  connectionId: string;
  /** The sync's clock (ISO 8601). */
  at: string;
  /** The plan limits that held this sync's usage back (the `plan_limit` alert). */
  reached: PlanLimitReached[];
  /** A plan limit held usage back before this sync and none does now: its `plan_limit` alert is closed by Burnrate. */
  limitLifted: boolean;
  /** The sync changed spend (usage or settlement): budgets and alert rules are compared with the new totals. */
  spendMoved: boolean;
  /** Keys this sync added to the account (the `new_key` rules). */
  discovered: Discovered[];
  /** Models it read that nothing prices (the `unpriced_model` alert). */
  unpriced: ModelName[];
}

/** A key an ingest wrote spend for, and whether its rate exists yet (shared/db/rolling.ts `ratedAfterIngest`). */
export interface RateCandidate {
  keyHash: string;
  rated: boolean;
}

/** An ingest's: what it wrote that alerts, spend-anomaly rules and stop budgets may follow from. */
export interface IngestEvaluation extends Omit<SyncEvaluation, 'connectionId' | 'limitLifted'> {
  source: 'ingest';
  /** The keys it wrote spend for (the spend-anomaly rules look at their rate). */
  rates: RateCandidate[];
}

export type Evaluation = SyncEvaluation | IngestEvaluation;

export const isIngestEvaluation = (e: Evaluation): e is IngestEvaluation => 'source' in e && e.source === 'ingest';

/** A part's body stays under this (SQS takes 256 KiB a message): a sync may add up to a plan's 1,000 keys. */
export const EVALUATION_PART_BYTES = 200_000;

const byteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * The messages of one evaluation: one, unless its discovered keys do not fit in a part; then each further part
 * carries more of them (and nothing else), so each names its keys in a `new_key` alert of its own.
 */
export function evaluationParts<E extends Evaluation>(evaluation: E, maxBytes = EVALUATION_PART_BYTES): E[] {
  const parts: E[] = [];
  let part: E = { ...evaluation, discovered: [] };
  let bytes = byteLength(part);
  for (const key of evaluation.discovered) {
    const size = byteLength(key) + 1;
    if (part.discovered.length > 0 && bytes + size > maxBytes) {
      parts.push(part);
      part = { ...evaluation, reached: [], spendMoved: false, unpriced: [], discovered: [], ...(isIngestEvaluation(evaluation) ? { rates: [] } : { limitLifted: false }) };
      bytes = byteLength(part);
    }
    part.discovered.push(key);
    bytes += size;
  }
  parts.push(part);
  return parts;
}

/** Whether an evaluation has anything to do (a sync that found nothing new queues nothing). */
export const hasWork = (e: Evaluation): boolean =>
  e.reached.length > 0 || e.spendMoved || e.discovered.length > 0 || e.unpriced.length > 0 || (isIngestEvaluation(e) ? e.rates.length > 0 : e.limitLifted);

/**
 * The local stack's queue. Its promise, when it returns one, is awaited: the local stack hands an ingest's evaluation
 * over before the ingest answers (local/evaluation-queue.ts), so what `npm start` and the tests send shows in alerts
 * and the block list with the answer, where AWS shows it one queue hop later.
 */
export type LocalEvaluationSink = (messages: Evaluation[]) => void | Promise<void>;

let localSink: LocalEvaluationSink | undefined;
let sqs: SQSClient | undefined;

/** The local stack registers its in-process queue here (`undefined` unregisters it). */
export function setLocalEvaluationSink(sink: LocalEvaluationSink | undefined): void {
  localSink = sink;
}

/** Queues an evaluation. Never throws: what the sync or ingest wrote stays written either way. */
export async function queueEvaluation(evaluation: Evaluation): Promise<void> {
  if (!hasWork(evaluation)) return;
  const parts = evaluationParts(evaluation);
  const queueUrl = process.env.EVALUATION_QUEUE_URL;
  if (queueUrl) {
    sqs ??= new SQSClient({ region: config().region });
    for (const part of parts) {
      // One entry a call (a batch's 256 KiB are shared by its entries), sent with the command the sync's other queues
      // use.
      let reason: string | undefined;
      try {
        const res = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: '0', MessageBody: JSON.stringify(part) }] }));
        reason = res.Failed?.[0]?.Code;
      } catch (error) {
        reason = error instanceof Error ? error.name : 'error';
      }
      if (reason) logger.error('evaluation not queued', { accountId: part.accountId, ...('connectionId' in part ? { connectionId: part.connectionId } : { source: 'ingest' }), keys: part.discovered.length, reason });
    }
  } else if (localSink) {
    try {
      await localSink(parts);
    } catch (error) {
      logger.error('evaluation not queued', error as Error);
    }
  } else {
    logger.warn('no evaluation queue configured: nothing is evaluated', { accountId: evaluation.accountId });
  }
}
