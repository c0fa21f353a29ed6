/**
 * A sync's alert evaluation, handed to its own function off the sync worker (docs/features/connections.md;
 * docs/architecture.md "After a sync"): the worker, which holds an admin key, only reads the provider
 * and writes what it read; `functions/connections/evaluate.ts` raises the alerts that what it wrote calls for
 * (shared/alerting/after-sync.ts). The evaluation runs at the sync's clock (`at`), so its periods are the sync's.
 *
 * - In AWS (`EVALUATION_QUEUE_URL` set): one SQS message per part (its queue has a DLQ and an alarm);
 * - locally: the in-process queue the local stack registers (local/stack.ts), which runs the same handler;
 * - neither: a warning, nothing else.
 *
 * A message that cannot be queued is logged: the alerts it would have raised are raised by the next sync that moves
 * spend (budgets and rules compare totals), except `new_key` for the keys it names (each key is discovered once).
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

/** A part's body stays under this (SQS takes 256 KiB a message): a sync may add up to a plan's 1,000 keys. */
export const EVALUATION_PART_BYTES = 200_000;

const byteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * The messages of one evaluation: one, unless its discovered keys do not fit in a part; then each further part
 * carries more of them (and nothing else), so each names its keys in a `new_key` alert of its own.
 */
export function evaluationParts(evaluation: SyncEvaluation, maxBytes = EVALUATION_PART_BYTES): SyncEvaluation[] {
  const parts: SyncEvaluation[] = [];
  let part: SyncEvaluation = { ...evaluation, discovered: [] };
  let bytes = byteLength(part);
  for (const key of evaluation.discovered) {
    const size = byteLength(key) + 1;
    if (part.discovered.length > 0 && bytes + size > maxBytes) {
      parts.push(part);
      part = { ...evaluation, reached: [], limitLifted: false, spendMoved: false, unpriced: [], discovered: [] };
      bytes = byteLength(part);
    }
    part.discovered.push(key);
    bytes += size;
  }
  parts.push(part);
  return parts;
}

/** Whether an evaluation has anything to do (a sync that found nothing new queues nothing). */
export const hasWork = (e: SyncEvaluation): boolean => e.reached.length > 0 || e.limitLifted || e.spendMoved || e.discovered.length > 0 || e.unpriced.length > 0;

export type LocalEvaluationSink = (messages: SyncEvaluation[]) => void;

let localSink: LocalEvaluationSink | undefined;
let sqs: SQSClient | undefined;

/** The local stack registers its in-process queue here (`undefined` unregisters it). */
export function setLocalEvaluationSink(sink: LocalEvaluationSink | undefined): void {
  localSink = sink;
}

/** Queues a sync's evaluation. Never throws: what the sync wrote stays written either way. */
export async function queueEvaluation(evaluation: SyncEvaluation): Promise<void> {
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
      if (reason) logger.error('sync evaluation not queued', { connectionId: part.connectionId, keys: part.discovered.length, reason });
    }
  } else if (localSink) {
    localSink(parts);
  } else {
    logger.warn('no evaluation queue configured: the sync raises no alerts', { connectionId: evaluation.connectionId });
  }
}
