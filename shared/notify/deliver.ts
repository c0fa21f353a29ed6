/**
 * Delivers one alert on each of its channels, at most once per channel, however many copies of the queue message
 * arrive and however many notifiers run them at once.
 *
 * Per delivery `deliveries[i]`:
 *   pending ──claim──▶ sending ──send ok──▶ sent
 *                         │
 *                         ├──not sent on purpose──▶ suppressed (past an hourly cap; e-mail: nobody may be mailed)
 *                         └──send failed──▶ pending (lastError) ──…──▶ failed (after MAX_ATTEMPTS)
 *
 * The claim is a conditional UpdateItem that compares the delivery with what was read (status, attempts —
 * which every claim raises — and the claim time): of two notifiers that read the same state, exactly one wins,
 * and only the winner sends. A claim left `sending` by a notifier that died is taken over after the LEASE.
 * The outcome is written under the same claim (status `sending` and our attempt number).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { markAlertSettled, toAlert } from '#shared/db/alerts.ts';
import { logger } from '#shared/http/logger.ts';
import type { Alert, Delivery } from '#shared/alerting/model.ts';
import { sendAlertEmail } from '#shared/notify/email.ts';
import { sendWebhook } from '#shared/notify/webhook.ts';
import { sendSlack } from '#shared/notify/slack.ts';
import { channelUrl, takeSlot } from '#shared/notify/caps.ts';
import { signingSecrets } from '#shared/notify/webhook-secret.ts';

export const MAX_ATTEMPTS = 5;
/** A `sending` claim older than this is considered abandoned (its notifier crashed or timed out). */
export const CLAIM_LEASE_MS = 2 * 60 * 1000;
const MAX_ERROR_LENGTH = 200;

/**
 * What a channel's send reports. `suppressed`: settled without sending, and why. `sentTo` / `suppressedTo`: e-mail
 * recipients handled so far (kept across attempts).
 */
type Outcome =
  | { ok: true; suppressed?: 'cap' | 'no-recipient' }
  | { ok: false; error: string; permanent?: boolean; sentTo?: string[]; suppressedTo?: string[] };

type Final = 'sent' | 'suppressed' | 'pending' | 'failed';

/** The stored delivery, with the e-mail channel's progress across attempts. */
type StoredDelivery = Delivery & { sentTo?: string[]; suppressedTo?: string[] };

export interface DeliverResult {
  /** False while any channel may still be sent (pending, or claimed by another notifier): retry the message. */
  done: boolean;
}

export async function deliverAlert(accountId: string, alertId: string, now: Date = new Date()): Promise<DeliverResult> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.alert(accountId, alertId), ConsistentRead: true }));
  if (!res.Item) {
    logger.warn('alert to deliver does not exist', { accountId, alertId });
    return { done: true };
  }
  const alert = toAlert(res.Item);
  const deliveries = (Array.isArray(alert.deliveries) ? alert.deliveries : []) as StoredDelivery[];
  const results = await Promise.all(deliveries.map((delivery, index) => deliverOne(alert, index, delivery, now)));
  const done = results.every((settled) => settled);
  if (done && res.Item.gsi2pk !== undefined) await markAlertSettled(accountId, alertId);
  return { done };
}

/** True when this channel needs nothing more (sent, suppressed or failed); false when a retry may still send it. */
async function deliverOne(alert: Alert, index: number, seen: StoredDelivery, now: Date): Promise<boolean> {
  if (seen.status === 'sent' || seen.status === 'failed' || seen.status === 'suppressed') return true;
  if (seen.status === 'sending' && !leaseExpired(seen.claimedAt, now)) return false; // another notifier has it
  if (seen.status !== 'pending' && seen.status !== 'sending') return true; // unknown status: leave it alone

  const attempt = await claim(alert, index, seen, now);
  if (attempt === undefined) return false; // another notifier claimed it first: it sends, we don't
  const log = { accountId: alert.accountId, alertId: alert.id, channel: seen.channel, attempt };

  let outcome: Outcome;
  try {
    outcome = await send(alert, seen, now);
  } catch (error) {
    // Our own failure (reading the recipients or the secret): counted like a failed send, so it ends.
    logger.error('delivery failed unexpectedly', { ...log, error: error as Error });
    outcome = { ok: false, error: 'internal error', sentTo: seen.sentTo ?? [], suppressedTo: seen.suppressedTo ?? [] };
  }

  const final: Final = outcome.ok ? (outcome.suppressed ? 'suppressed' : 'sent') : outcome.permanent || attempt >= MAX_ATTEMPTS ? 'failed' : 'pending';
  // Past a cap is worth a look; nobody to mail (an unverified registrant) is the normal state of many accounts.
  if (outcome.ok && outcome.suppressed) logger[outcome.suppressed === 'cap' ? 'warn' : 'info']('alert delivery suppressed', { ...log, reason: outcome.suppressed });
  else if (outcome.ok) logger.info('alert delivered', log);
  else logger.warn('alert delivery failed', { ...log, error: outcome.error, status: final });
  const recorded = await record(alert, index, attempt, now, outcome, final);
  if (!recorded) {
    // Our claim was taken over (we overran the lease): the other notifier's outcome counts.
    logger.warn('delivery claim lost before its outcome was recorded', log);
    return false;
  }
  return final !== 'pending';
}

function leaseExpired(claimedAt: string | undefined, now: Date): boolean {
  const at = claimedAt ? Date.parse(claimedAt) : NaN;
  return Number.isNaN(at) || now.getTime() - at >= CLAIM_LEASE_MS;
}

/** Compare-and-set `pending|expired sending` → `sending`, attempts + 1. Returns our attempt number, or undefined if lost. */
async function claim(alert: Alert, index: number, seen: StoredDelivery, now: Date): Promise<number | undefined> {
  const path = `deliveries[${index}]`;
  const seenAttempts = typeof seen.attempts === 'number' ? seen.attempts : 0;
  const conditions = [`${path}.#status = :seenStatus`, `${path}.#channel = :channel`];
  const values: Record<string, unknown> = {
    ':seenStatus': seen.status,
    ':channel': seen.channel,
    ':sending': 'sending',
    ':now': now.toISOString(),
    ':attempt': seenAttempts + 1,
  };
  if (typeof seen.attempts === 'number') {
    conditions.push(`${path}.attempts = :seenAttempts`);
    values[':seenAttempts'] = seen.attempts;
  } else conditions.push(`attribute_not_exists(${path}.attempts)`);
  if (seen.claimedAt !== undefined) {
    conditions.push(`${path}.claimedAt = :seenClaimedAt`);
    values[':seenClaimedAt'] = seen.claimedAt;
  } else conditions.push(`attribute_not_exists(${path}.claimedAt)`);
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.alert(alert.accountId, alert.id),
        UpdateExpression: `SET ${path}.#status = :sending, ${path}.claimedAt = :now, ${path}.attempts = :attempt`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: { '#status': 'status', '#channel': 'channel' },
        ExpressionAttributeValues: values,
      }),
    );
    return seenAttempts + 1;
  } catch (error) {
    if (isConditionFailed(error)) return undefined;
    throw error;
  }
}

async function send(alert: Alert, delivery: StoredDelivery, now: Date): Promise<Outcome> {
  // Channels that post to a URL share the per-receiver hourly cap, and EVERY attempt takes a slot: a receiver that
  // fails gets no more POSTs than one that answers (a retry past the cap settles the delivery as suppressed).
  const url = channelUrl(alert, delivery.channel);
  if (url && (await takeSlot('url', url, now)) !== 'allowed') return { ok: true, suppressed: 'cap' };
  switch (delivery.channel) {
    case 'email': {
      const result = await sendAlertEmail(alert, { now, alreadySent: delivery.sentTo ?? [], alreadySuppressed: delivery.suppressedTo ?? [] });
      if (!result.ok) return result;
      if (result.sentTo.length > 0) return { ok: true };
      return { ok: true, suppressed: result.suppressedTo.length > 0 ? 'cap' : 'no-recipient' };
    }
    case 'webhook': {
      if (!alert.webhookUrl) return { ok: false, error: 'the alert has no webhook URL', permanent: true };
      const secrets = await signingSecrets(alert.accountId, now);
      return sendWebhook(alert, { secrets, allowInsecure: config().allowInsecureWebhooks, now });
    }
    case 'slack':
      return sendSlack(alert, { allowInsecure: config().allowInsecureWebhooks });
    default:
      return { ok: false, error: `unknown channel ${String(delivery.channel).slice(0, 20)}`, permanent: true };
  }
}

/** Writes the outcome under our claim: still `sending` with our attempt number. False when the claim was lost. */
async function record(alert: Alert, index: number, attempt: number, now: Date, outcome: Outcome, final: Final): Promise<boolean> {
  const path = `deliveries[${index}]`;
  const values: Record<string, unknown> = { ':sending': 'sending', ':attempt': attempt, ':final': final };
  const progress = `${path}.claimedAt, ${path}.lastError, ${path}.sentTo, ${path}.suppressedTo, ${path}.capCounted`;
  let update: string;
  if (outcome.ok && outcome.suppressed) {
    update = `SET ${path}.#status = :final, ${path}.suppressedBy = :why REMOVE ${progress}`;
    values[':why'] = outcome.suppressed;
  } else if (outcome.ok) {
    update = `SET ${path}.#status = :final, ${path}.sentAt = :now REMOVE ${progress}`;
    values[':now'] = now.toISOString();
  } else {
    const sets = [`${path}.#status = :final`, `${path}.lastError = :error`];
    values[':error'] = outcome.error.slice(0, MAX_ERROR_LENGTH);
    if (outcome.sentTo?.length) {
      sets.push(`${path}.sentTo = :sentTo`);
      values[':sentTo'] = outcome.sentTo;
    }
    if (outcome.suppressedTo?.length) {
      sets.push(`${path}.suppressedTo = :suppressedTo`);
      values[':suppressedTo'] = outcome.suppressedTo;
    }
    update = `SET ${sets.join(', ')} REMOVE ${path}.claimedAt`;
  }
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.alert(alert.accountId, alert.id),
        UpdateExpression: update,
        ConditionExpression: `${path}.#status = :sending AND ${path}.attempts = :attempt`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}

const isConditionFailed = (error: unknown) => error instanceof Error && error.name === 'ConditionalCheckFailedException';
