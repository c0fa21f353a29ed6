/**
 * Repository of the Stripe webhook's writes: an event's state change on the account and its dedupe item
 * (`STRIPEEVENT#<evt_id>`), together in ONE TransactWriteItems, so an event is applied exactly once.
 */
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { BillingStatus, Plan } from '#shared/db/accounts.ts';
import { db, failedConditions, isTransactionConflict, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';

/** How long a failed renewal keeps the paid plan's limits. */
export const PAST_DUE_GRACE_MS = 7 * 24 * 3600 * 1000;

/** The end of the grace that a payment failing at `failedAt` (ISO) opens. */
export function graceEnd(failedAt: string): string {
  return new Date(Date.parse(failedAt) + PAST_DUE_GRACE_MS).toISOString();
}

/**
 * Tie-break of two billing states of the same second: an ended subscription outranks a live one, so a `deleted`
 * and an `updated(active)` of the same second leave the subscription canceled whatever order they arrive in.
 */
export function statusRank(status: BillingStatus): number {
  return status === 'CANCELED' ? 2 : 1;
}

/** How long a dedupe item is kept: Stripe retries an event for 3 days, a manual resend is possible for 30. */
const DEDUPE_TTL_SECONDS = 90 * 24 * 3600;
/** A transaction that collides with a concurrent one on the same items is retried this many times. */
const CONFLICT_ATTEMPTS = 5;

/** What one Stripe event changes on the account. */
export interface BillingChange {
  accountId: string;
  /** The event's `created`, ISO with ms: the time of the state it carries. */
  eventTime: string;
  /** Left out: the plan is unchanged (invoice events). */
  plan?: Plan;
  billingStatus: BillingStatus;
  /** The subscription's current period; `null` removes it (back on FREE); left out: unchanged. */
  period?: { start: string; end: string } | null;
  /** Linked if the account has none yet; a change whose customer is not the account's is not applied. */
  customerId?: string;
  subscriptionId: string;
  /** `take-over` of a live subscription: its `<created>#<id>`; only a newer one replaces a live one. */
  subscriptionOrder?: string;
  /**
   * Which subscription the change may touch:
   * `take-over` — a live subscription of the account: it becomes (or stays) the account's subscription;
   * `current-or-none` — an ended one: only if it is the account's subscription (or none is linked), so ending an old
   *   subscription never cancels a newer one;
   * `current` — an invoice: only the account's linked subscription, while the account is on a paid plan (a late
   *   invoice of a subscription that ended never sets a FREE account ACTIVE or PAST_DUE).
   */
  match: 'take-over' | 'current-or-none' | 'current';
}

/** `applied`: the change was written; `duplicate`: the event was seen before; `skipped`: recorded, nothing changed. */
export type ApplyOutcome = 'applied' | 'duplicate' | 'skipped';

export interface StripeEventRef {
  id: string;
  type: string;
}

/** True when the event's dedupe item exists (a cheap early answer for replays; the transaction still decides). */
export async function stripeEventRecorded(eventId: string): Promise<boolean> {
  const res = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.stripeEvent(eventId), ProjectionExpression: 'pk', ConsistentRead: true }),
  );
  return res.Item !== undefined;
}

/**
 * Applies `change` to the account and records the event, in one transaction:
 *   [0] Put the dedupe item, if absent        → a replay fails here: `duplicate`, nothing written;
 *   [1] Update the account, if it exists, its `billingUpdatedAt` is not newer than the event, and (per `match`)
 *       the subscription is the account's      → otherwise: the dedupe item is recorded alone, `skipped`.
 */
export async function applyStripeEvent(event: StripeEventRef, change: BillingChange, now = new Date()): Promise<ApplyOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db().send(
        new TransactWriteCommand({
          TransactItems: [{ Put: dedupePut(event, change.accountId, change.eventTime, 'applied', now) }, { Update: accountUpdate(event, change, now) }],
        }),
      );
      return 'applied';
    } catch (error) {
      const failed = failedConditions(error);
      if (failed.includes(0)) return 'duplicate';
      if (failed.includes(1)) return recordOnly(event, change.accountId, change.eventTime, now);
      if (attempt < CONFLICT_ATTEMPTS && isTransactionConflict(error)) {
        await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt + Math.random() * 20));
        continue;
      }
      throw error;
    }
  }
}

/** Records an event that changes nothing (stale, not the account's subscription, unknown account). */
export async function recordOnly(event: StripeEventRef, accountId: string | undefined, eventTime: string, now = new Date()): Promise<ApplyOutcome> {
  try {
    await db().send(new PutCommand(dedupePut(event, accountId, eventTime, 'skipped', now)));
    return 'skipped';
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return 'duplicate';
    throw error;
  }
}

function dedupePut(event: StripeEventRef, accountId: string | undefined, eventTime: string, outcome: 'applied' | 'skipped', now: Date) {
  return {
    TableName: tableName(),
    Item: {
      ...keys.stripeEvent(event.id),
      type: 'StripeEvent',
      eventId: event.id,
      eventType: event.type,
      accountId,
      eventCreatedAt: eventTime,
      outcome,
      receivedAt: now.toISOString(),
      expiresAt: Math.floor(now.getTime() / 1000) + DEDUPE_TTL_SECONDS,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

function accountUpdate(event: StripeEventRef, change: BillingChange, now: Date) {
  const names: Record<string, string> = {
    '#status': 'billingStatus',
    '#updatedAt': 'billingUpdatedAt',
    '#rank': 'billingRank',
    '#sub': 'stripeSubscriptionId',
  };
  const values: Record<string, unknown> = {
    ':status': change.billingStatus,
    ':t': change.eventTime,
    ':rank': statusRank(change.billingStatus),
    ':eid': event.id,
    ':now': now.toISOString(),
    ':sub': change.subscriptionId,
    ':one': 1,
  };
  const set = ['#status = :status', '#updatedAt = :t', '#rank = :rank', 'billingEventId = :eid', 'updatedAt = :now'];
  const remove: string[] = [];
  if (change.plan || change.match === 'current') names['#plan'] = 'plan';
  if (change.plan) {
    values[':plan'] = change.plan;
    set.push('#plan = :plan');
  }
  if (change.match === 'take-over') {
    set.push('#sub = :sub');
    if (change.subscriptionOrder) {
      names['#order'] = 'subscriptionOrder';
      values[':order'] = change.subscriptionOrder;
      set.push('#order = :order');
    }
  }
  if (change.customerId) {
    names['#cus'] = 'stripeCustomerId';
    values[':cus'] = change.customerId;
    set.push('#cus = if_not_exists(#cus, :cus)');
  }
  if (change.period) {
    values[':ps'] = change.period.start;
    values[':pe'] = change.period.end;
    set.push('periodStart = :ps', 'periodEnd = :pe');
  } else if (change.period === null) {
    remove.push('periodStart', 'periodEnd');
  }
  // PAST_DUE opens a 7-day grace from the first failure (a later failure of the same episode keeps it); any other
  // status closes it (shared/billing/limits.ts reads it).
  names['#grace'] = 'graceEndsAt';
  if (change.billingStatus === 'PAST_DUE') {
    values[':grace'] = graceEnd(change.eventTime);
    set.push('#grace = if_not_exists(#grace, :grace)');
  } else {
    remove.push('#grace');
  }

  // The ordering rule (shouldApply in shared/billing/webhook.ts) as DynamoDB evaluates it, atomically with the write.
  const conditions = [
    'attribute_exists(pk)',
    '(attribute_not_exists(#updatedAt) OR #updatedAt < :t OR (#updatedAt = :t AND (attribute_not_exists(#rank) OR #rank <= :rank)))',
  ];
  // Only the account's own Stripe customer changes its billing (routing: shared/billing/webhook.ts accountOfEvent).
  if (change.customerId) conditions.push('(attribute_not_exists(#cus) OR #cus = :cus)');
  if (change.match === 'current') {
    values[':free'] = 'FREE';
    conditions.push('#sub = :sub', '#plan <> :free');
  }
  if (change.match === 'current-or-none') conditions.push('(attribute_not_exists(#sub) OR #sub = :sub)');
  if (change.match === 'take-over' && change.subscriptionOrder && change.billingStatus !== 'CANCELED') {
    // One live subscription: a live one replaces another live one only when it is newer.
    values[':canceled'] = 'CANCELED';
    conditions.push('(attribute_not_exists(#sub) OR #sub = :sub OR #status = :canceled OR attribute_not_exists(#order) OR #order < :order)');
  }

  return {
    TableName: tableName(),
    Key: keys.account(change.accountId),
    // billingRevision counts the billing changes applied: one per event, never more (observable in tests).
    UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''} ADD billingRevision :one`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
