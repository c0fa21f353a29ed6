/**
 * A sync's limits phase, handed to its provider's limits function off the sync worker (docs/architecture.md "After a
 * sync"; docs/features/budgets-and-enforcement.md "When a stop happens"): the worker reads the provider and writes what
 * it read; `functions/connections/limits-<provider>.ts` opens the admin key again and reads back and pulls the levers
 * (shared/sync/limits.ts). The pass runs at the sync's clock (`at`).
 *
 * - In AWS (`LIMITS_QUEUE_URL` set: the worker's own provider's FIFO queue): one message per part, in the message group
 *   of its connection, so one connection's passes run one after another in the order their syncs queued them (a
 *   release after an earlier pass), each with a deduplication id of its own (`<connectionId>:<at>:<part>`);
 * - locally: the in-process queue a test registers (local/limits-queue.ts), which runs the same handler; the local
 *   stack's one worker runs the pass in its own process right after the sync instead (shared/sync/all.ts);
 * - neither: a warning, nothing else.
 *
 * No zod here: the worker that sends these bundles none.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';
import { logger } from '#shared/http/logger.ts';
import type { Provider } from '#shared/connections/model.ts';
import { syncMessageIn } from '#shared/connections/queue.ts';

/** One message's body: one limits pass of one connection (a paused or deleted one: its levers' release). */
export interface LimitsMessage {
  accountId: string;
  connectionId: string;
  /** The connection's provider: which queue, and so which limits function, the message goes to. */
  provider: Provider;
  /** The sync's clock (ISO 8601). */
  at: string;
  /** The keys whose today figure the sync saw grow, and whether an earlier sync saw each today (the anomaly rate). */
  grown: [keyHash: string, rated: boolean][];
}

/** A part's body stays under this (SQS takes 256 KiB a message): a sync may see up to a plan's 1,000 keys grow. */
export const LIMITS_PART_BYTES = 200_000;

/**
 * The messages of one pass: one, unless its grown keys do not fit in a part; then each part carries some of them.
 * Each part is a full pass (budgets, levers read back) with its share of the anomaly rates: running it twice is harmless.
 */
export function limitsParts(message: LimitsMessage, maxBytes = LIMITS_PART_BYTES): LimitsMessage[] {
  const parts: LimitsMessage[] = [];
  let part: LimitsMessage = { ...message, grown: [] };
  const base = JSON.stringify(part).length;
  let bytes = base;
  for (const entry of message.grown) {
    const size = JSON.stringify(entry).length + 1;
    if (part.grown.length > 0 && bytes + size > maxBytes) {
      parts.push(part);
      part = { ...message, grown: [] };
      bytes = base;
    }
    part.grown.push(entry);
    bytes += size;
  }
  parts.push(part);
  return parts;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const KEY_HASH = /^[0-9a-f]{64}$/;

/** A message as sent, or undefined (a body retrying cannot fix). */
export function parseLimitsMessage(body: string): LimitsMessage | undefined {
  try {
    const v: unknown = JSON.parse(body);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const { at, grown } = v as Record<string, unknown>;
    const base = syncMessageIn(v as Record<string, unknown>);
    if (
      base &&
      typeof at === 'string' &&
      ISO_INSTANT.test(at) &&
      !Number.isNaN(Date.parse(at)) &&
      Array.isArray(grown) &&
      grown.every((e) => Array.isArray(e) && e.length === 2 && typeof e[0] === 'string' && KEY_HASH.test(e[0]) && typeof e[1] === 'boolean')
    ) {
      return { ...base, at, grown: (grown as [string, boolean][]).map(([k, r]) => [k, r]) };
    }
  } catch {
    // not JSON
  }
  return undefined;
}

export type LocalLimitsSink = (messages: LimitsMessage[]) => void;

let localSink: LocalLimitsSink | undefined;
let sqs: SQSClient | undefined;

/** A test registers its in-process limits queue here (`undefined` unregisters it). */
export function setLocalLimitsSink(sink: LocalLimitsSink | undefined): void {
  localSink = sink;
}

/**
 * Queues a connection's limits pass. Throws when a part could not be queued (the caller decides: a release's sync
 * message comes back; a pass after an import is logged, and the next sync queues one again).
 */
export async function queueLimits(message: LimitsMessage): Promise<void> {
  const parts = limitsParts(message);
  const queueUrl = process.env.LIMITS_QUEUE_URL;
  if (queueUrl) {
    sqs ??= new SQSClient({ region: config().region });
    for (const [i, part] of parts.entries()) {
      // One entry a call (a batch's 256 KiB are shared by its entries), with the command the sync's other queues use.
      let reason: string | undefined;
      try {
        const res = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: [{ Id: '0', MessageBody: JSON.stringify(part), MessageGroupId: part.connectionId, MessageDeduplicationId: `${part.connectionId}:${part.at}:${i}` }],
          }),
        );
        reason = res.Failed?.[0]?.Code;
      } catch (error) {
        reason = error instanceof Error ? error.name : 'error';
      }
      if (reason) throw new Error(`The limits pass of ${part.connectionId} was not queued (${reason}).`);
    }
  } else if (localSink) {
    localSink(parts);
  } else {
    logger.warn('no limits queue configured: the sync pulls no levers', { connectionId: message.connectionId });
  }
}
