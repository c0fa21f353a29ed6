/** Repository of alerts and of the "fired" items that make each alert happen exactly once. */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, db, queryAll, tableName, transactWithCounter, type Item } from '#shared/db/client.ts';
import { readNumber, storedInt } from '#shared/db/numbers.ts';
import { keys, queries } from '#shared/db/keys.ts';
import type { Action } from '#shared/db/caps.ts';
import { BUDGET_ENTITY, toBudget, type Budget } from '#shared/db/budgets.ts';
import { RULE_ENTITY, toRule, type Channel, type Rule } from '#shared/db/rules.ts';

export type AlertType =
  | 'cost_threshold'
  | 'new_key'
  | 'spend_spike'
  | 'budget_threshold'
  | 'budget_exceeded'
  | 'budget_forecast'
  | 'plan_limit'
  | 'connection_error'
  | 'budget_stopped'
  | 'budget_released'
  | 'enforcement_failed'
  | 'unpriced_model'
  | 'spend_anomaly';
export type AlertStatus = 'triggered' | 'acknowledged';

/**
 * `sending` is internal (a notifier claimed the channel); the API shows it as `pending`. `suppressed`: settled
 * without sending, on purpose — past an hourly cap, or (e-mail) no user with a verified address who wants alert
 * e-mail (shared/notify/caps.ts, shared/notify/email.ts).
 */
export type DeliveryStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'suppressed';

export interface Delivery {
  channel: Channel;
  status: DeliveryStatus;
  attempts: number;
  /** When a notifier claimed it (`sending`); a claim older than the lease may be taken over. */
  claimedAt?: string;
  lastError?: string;
  sentAt?: string;
  /** Why a `suppressed` delivery was not sent (internal). */
  suppressedBy?: 'cap' | 'no-recipient';
  /** Before issue 19: a URL channel's slot taken once per delivery. Every attempt counts now; only removed (deliver.ts). */
  capCounted?: boolean;
}

export interface Alert {
  id: string;
  accountId: string;
  type: AlertType;
  status: AlertStatus;
  ruleId: string | null;
  budgetId: string | null;
  keyHash: string | null;
  /**
   * The keys the alert is about: every key one ingest discovered for `new_key` (`keyHash` is the first); the one
   * key `keyHash` names for the other types, or none.
   */
  keyHashes: string[];
  /**
   * How the texts named the alert's one key when it fired (shared/usage/key-name.ts: label, else hint, else hash
   * prefix); absent when the alert names no key or several, and on alerts stored before it existed.
   */
  keyName?: string;
  title: string;
  message: string;
  /** The period the alert belongs to: `2026-11-21` (day), `2026-W47`-style week start `2026-11-16`, `2026-11` (month). */
  period: string;
  thresholdMicros: number | null;
  observedMicros: number | null;
  deliveries: Delivery[];
  /** The provider connection a `connection_error` alert is about. */
  connectionId?: string;
  /** E-mail only to the account's admins (`connection_error`: only they can fix a connection). */
  adminsOnly?: true;
  /** Snapshot of the rule's webhook URL when the alert fired (the notifier posts there). */
  webhookUrl?: string;
  /** Snapshot of the rule's Slack webhook URL when the alert fired (shared/notify/slack.ts). */
  slackWebhookUrl?: string;
  triggeredAt: string;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
}

/** Everything evaluation compares against: ONE Query of the account's CFG# items (budgets and rules). */
export async function loadAlertConfig(accountId: string): Promise<{ budgets: Budget[]; rules: Rule[] }> {
  const q = queries.accountItems(accountId, 'CFG');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
  });
  const budgets: Budget[] = [];
  const rules: Rule[] = [];
  for (const item of items) {
    if (item.entity === BUDGET_ENTITY) budgets.push(toBudget(item));
    else if (item.entity === RULE_ENTITY) rules.push(toRule(item));
  }
  return { budgets, rules };
}

export interface FiredKey {
  source: string;
  level: string;
  period: string;
}

/** Which of these (source, level, period) have fired already — ONE BatchGetItem, so nothing is re-attempted. */
export async function alreadyFired(accountId: string, candidates: FiredKey[]): Promise<Set<string>> {
  if (candidates.length === 0) return new Set();
  const items = await batchGet(candidates.map((c) => keys.fired(accountId, c.source, c.level, c.period)), 'pk');
  return new Set(items.map((item) => item.pk as string));
}

export const firedPk = (accountId: string, c: FiredKey) => keys.fired(accountId, c.source, c.level, c.period).pk;

export function toAlert(item: Item): Alert {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, gsi2pk: _g3, gsi2sk: _g4, entity: _e, ...rest } = item;
  return {
    ...(rest as unknown as Alert),
    // Alerts stored before keyHashes: the one key they name, if any.
    keyHashes: Array.isArray(item.keyHashes) ? (item.keyHashes as string[]) : typeof item.keyHash === 'string' ? [item.keyHash] : [],
    thresholdMicros: amountOrNull(item.thresholdMicros),
    observedMicros: amountOrNull(item.observedMicros),
    acknowledgedAt: (item.acknowledgedAt as string) ?? null,
    acknowledgedBy: (item.acknowledgedBy as string) ?? null,
  };
}

const amountOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : readNumber(value, 'an alert amount'));

/** An account's week can sum past 2^53 µ$ (shared/alerting/spend.ts): written as the exact integer, not refused by the marshaller. */
const storedAmount = (micros: number | null) => (micros === null ? null : storedInt(BigInt(micros)));

/** acknowledgedAt/By are left out until set, so acknowledging can keep the first with if_not_exists. */
function alertItem(alert: Alert): Item {
  const { acknowledgedAt, acknowledgedBy, ...rest } = alert;
  return {
    ...keys.alert(alert.accountId, alert.id),
    ...keys.alertIndex(alert.accountId, alert.id, alert.status),
    ...(alert.deliveries.some((d) => d.status === 'pending') ? keys.pendingAlertIndex(alert.accountId, alert.id, alert.triggeredAt) : {}),
    entity: 'Alert',
    ...rest,
    thresholdMicros: storedAmount(rest.thresholdMicros),
    observedMicros: storedAmount(rest.observedMicros),
    ...(acknowledgedAt ? { acknowledgedAt } : {}),
    ...(acknowledgedBy ? { acknowledgedBy } : {}),
  };
}

/**
 * Creates the alert if and only if its "fired" item did not exist: both in one transaction (with the rule's
 * lastTriggeredAt and the account's `triggered` counter). Returns false when another writer fired it first (or the
 * rule was deleted meanwhile).
 */
export async function fireAlert(alert: Alert, fired: FiredKey): Promise<boolean> {
  const TableName = tableName();
  const items: Action[] = [
    {
      Put: {
        TableName,
        Item: { ...keys.fired(alert.accountId, fired.source, fired.level, fired.period), entity: 'Fired', alertId: alert.id, firedAt: alert.triggeredAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName, Item: alertItem(alert), ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
  if (alert.ruleId) {
    items.push({
      Update: {
        TableName,
        Key: keys.rule(alert.accountId, alert.ruleId),
        UpdateExpression: 'SET lastTriggeredAt = :t',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':t': alert.triggeredAt },
      },
    });
  }
  const outcome = await writeCounted(alert.accountId, alert.status === 'triggered' ? { triggered: 1, acknowledged: 0 } : { triggered: 0, acknowledged: 1 }, items);
  return outcome.status === 'written';
}

export interface AlertPage {
  items: Alert[];
  lastKey?: Record<string, unknown>;
}

/** A filtered page reads the index this many alerts at a time, and at most FILTERED_READS times per request. */
const FILTERED_PAGE = 500;

const FILTERED_READS = 8;

/** The start key of the page after `item`: its table key, and its gsi1 key when listing one status. */
const positionOf = (item: Item, status: AlertStatus | undefined): Record<string, unknown> => ({
  pk: item.pk,
  sk: item.sk,
  ...(status ? { gsi1pk: item.gsi1pk, gsi1sk: item.gsi1sk } : {}),
});

/**
 * One page of alerts, newest first: the base table for all, gsi1 for one status. With a filter (type, key) the
 * Query filters as it reads, a few hundred alerts a call, until the page is full; a page whose reads ran out
 * (FILTERED_READS) may hold fewer than `limit` alerts and still carry a cursor.
 */
export async function listAlerts(
  accountId: string,
  status: AlertStatus | undefined,
  limit: number,
  startKey?: Record<string, unknown>,
  filter: AlertFilter = {},
): Promise<AlertPage> {
  const base = queries.alerts(accountId);
  const f = filterParts(filter);
  const input = status
    ? { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ...f.values, ':pk': queries.alertsByStatus(accountId, status).gsi1pk } }
    : {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ...f.values, ':pk': base.pk, ':prefix': base.skPrefix },
      };
  const filtering = f.expression ? { FilterExpression: f.expression, ...(Object.keys(f.names).length ? { ExpressionAttributeNames: f.names } : {}) } : {};
  const items: Item[] = [];
  let start = startKey;
  for (let reads = 0; reads < (f.expression ? FILTERED_READS : 1); reads++) {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...input,
        ...filtering,
        ScanIndexForward: false,
        Limit: f.expression ? FILTERED_PAGE : limit,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
    if (!start || items.length >= limit) break;
  }
  const page = items.slice(0, limit);
  // More may follow: alerts read but not shown, or a partition not read to its end.
  const lastKey = items.length > limit ? positionOf(page.at(-1)!, status) : start;
  return { items: page.map(toAlert), ...(lastKey ? { lastKey } : {}) };
}

/** The update that acknowledges one alert, only while it is triggered (so each alert moves the counters once). */
function acknowledgeAction(accountId: string, alertId: string, userId: string, now: Date): Action {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.alert(accountId, alertId),
      UpdateExpression:
        'SET #status = :ack, gsi1pk = :gsi1pk, acknowledgedAt = if_not_exists(acknowledgedAt, :now), acknowledgedBy = if_not_exists(acknowledgedBy, :user)',
      ConditionExpression: 'attribute_exists(pk) AND #status = :triggered',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':ack': 'acknowledged',
        ':triggered': 'triggered',
        ':gsi1pk': keys.alertIndex(accountId, alertId, 'acknowledged').gsi1pk,
        ':now': now.toISOString(),
        ':user': userId,
      },
    },
  };
}

/** Acknowledges once: the first acknowledgedAt/By are kept. Undefined when the alert is not in this account. */
export async function acknowledgeAlert(accountId: string, alertId: string, userId: string, now: Date): Promise<Alert | undefined> {
  // A failed condition means it was acknowledged already (or does not exist): the read below tells which.
  await writeCounted(accountId, { triggered: -1, acknowledged: 1 }, [acknowledgeAction(accountId, alertId, userId, now)]);
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.alert(accountId, alertId), ConsistentRead: true }));
  return res.Item && toAlert(res.Item);
}

/** Alerts per transaction of a bulk acknowledge: 100 actions at most, one of them the counters. */
const ACK_CHUNK = 99;

/**
 * Acknowledges every one of `alertIds` that is still triggered, each exactly once: chunks of 99 alerts with the
 * counters in one transaction; an alert acknowledged meanwhile (by a racing request) fails its condition and is
 * dropped from its chunk, which is retried without it. Returns how many this call acknowledged.
 */
export async function acknowledgeAlerts(accountId: string, alertIds: string[], userId: string, now: Date): Promise<number> {
  const ids = [...new Set(alertIds)];
  let acknowledged = 0;
  for (let i = 0; i < ids.length; i += ACK_CHUNK) {
    let chunk = ids.slice(i, i + ACK_CHUNK);
    while (chunk.length > 0) {
      const outcome = await writeCounted(
        accountId,
        { triggered: -chunk.length, acknowledged: chunk.length },
        chunk.map((id) => acknowledgeAction(accountId, id, userId, now)),
      );
      if (outcome.status === 'written') {
        acknowledged += chunk.length;
        break;
      }
      const failed = new Set(outcome.failed);
      chunk = chunk.filter((_, index) => !failed.has(index));
    }
  }
  return acknowledged;
}

export interface AlertFilter {
  type?: string;
  keyHash?: string;
}

/** The FilterExpression parts of `filter` (type; a key named by `keyHash` or among `keyHashes`). */
function filterParts(filter: AlertFilter): { expression?: string; names: Record<string, string>; values: Record<string, unknown> } {
  const terms: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (filter.type) {
    terms.push('#type = :type');
    names['#type'] = 'type';
    values[':type'] = filter.type;
  }
  if (filter.keyHash) {
    terms.push('(keyHash = :keyHash OR contains(keyHashes, :keyHash))');
    values[':keyHash'] = filter.keyHash;
  }
  return { ...(terms.length ? { expression: terms.join(' AND ') } : {}), names, values };
}

/** The ids of the account's triggered alerts that match `filter` (the triggered partition of gsi1, every page). */
export async function triggeredAlertIds(accountId: string, filter: AlertFilter): Promise<string[]> {
  const f = filterParts(filter);
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeNames: { ...f.names, '#id': 'id' },
    ExpressionAttributeValues: { ...f.values, ':pk': queries.alertsByStatus(accountId, 'triggered').gsi1pk },
    ...(f.expression ? { FilterExpression: f.expression } : {}),
    ProjectionExpression: '#id',
  });
  return items.map((item) => item.id as string);
}

export interface AlertCounts {
  triggered: number;
  acknowledged: number;
}

/** The account's alert counters (strongly consistent); an account whose counters were never written is counted. */
export async function alertCounts(accountId: string): Promise<AlertCounts> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.alertCounts(accountId), ConsistentRead: true }));
  if (!res.Item) return countAlerts(accountId);
  return { triggered: readNumber(res.Item.triggered, 'triggered'), acknowledged: readNumber(res.Item.acknowledged, 'acknowledged') };
}

/** Counts the account's alerts by status: one strongly consistent Query of its alert partition, every page. */
async function countAlerts(accountId: string): Promise<AlertCounts> {
  const q = queries.alerts(accountId);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
    ProjectionExpression: '#status',
    ConsistentRead: true,
  });
  const triggered = items.filter((item) => item.status === 'triggered').length;
  return { triggered, acknowledged: items.length - triggered };
}

type Outcome = { status: 'written' } | { status: 'failed'; failed: number[] };

/**
 * `actions` and the account's alert counters moved by `delta`, in ONE transaction, so the counters and the alerts
 * never disagree. The counter update requires the counter item to exist: an account without one (its alerts predate
 * the counters) has it put first from an exact count — exact because every writer of alerts needs it to exist, so
 * nothing changes an alert's status while it is missing (the same scheme as shared/db/caps.ts). Failed conditions of
 * the caller's actions come back by index; lost races are retried (shared/db/client.ts transactWithCounter).
 */
async function writeCounted(accountId: string, delta: AlertCounts, actions: Action[]): Promise<Outcome> {
  const counter: Action = {
    Update: {
      TableName: tableName(),
      Key: keys.alertCounts(accountId),
      UpdateExpression: 'ADD triggered :t, acknowledged :a',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':t': delta.triggered, ':a': delta.acknowledged },
    },
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const outcome = await transactWithCounter(counter, actions);
    if (outcome.status !== 'counter') return outcome;
    await initCounts(accountId);
  }
  throw new Error('The alert counters are missing after they were put.');
}

/** Puts the counters from an exact count, unless a racing writer put them first. */
async function initCounts(accountId: string): Promise<void> {
  const counts = await countAlerts(accountId);
  try {
    await db().send(
      new PutCommand({ TableName: tableName(), Item: { ...keys.alertCounts(accountId), entity: 'AlertCounts', ...counts }, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
  }
}

/** Takes a delivered (or finally failed) alert off the sweeper's list. */
export async function markAlertSettled(accountId: string, alertId: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.alert(accountId, alertId),
        UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_exists(gsi2pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
  }
}

/** Alerts with an undelivered channel, triggered before `before`, oldest first (one Query page on gsi2). */
export async function undeliveredAlerts(before: string, limit: number): Promise<{ accountId: string; alertId: string }[]> {
  const q = queries.pendingAlertsBefore(before);
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :before',
      ExpressionAttributeValues: { ':pk': q.gsi2pk, ':before': q.skBelow },
      ProjectionExpression: 'accountId, id',
      Limit: limit,
    }),
  );
  return (res.Items ?? []).map((item) => ({ accountId: item.accountId as string, alertId: item.id as string }));
}
