/** Repository of alerts and of the "fired" items that make each alert happen exactly once. */
import { QueryCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGet, db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { readNumber, storedInt } from '#shared/db/numbers.ts';
import { keys, queries } from '#shared/db/keys.ts';
import type { Alert, AlertStatus, Budget, Rule } from '#shared/alerting/model.ts';
import { BUDGET_ENTITY, toBudget } from '#shared/db/budgets.ts';
import { RULE_ENTITY, toRule } from '#shared/db/rules.ts';

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
 * lastTriggeredAt). Returns false when another writer fired it first (or the rule was deleted meanwhile).
 */
export async function fireAlert(alert: Alert, fired: FiredKey): Promise<boolean> {
  const TableName = tableName();
  const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [
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
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items }));
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'TransactionCanceledException') return false;
    throw error;
  }
}

export interface AlertPage {
  items: Alert[];
  lastKey?: Record<string, unknown>;
}

/** One page of alerts, newest first: the base table for all, gsi1 for one status. */
export async function listAlerts(accountId: string, status: AlertStatus | undefined, limit: number, startKey?: Record<string, unknown>): Promise<AlertPage> {
  const base = queries.alerts(accountId);
  const input = status
    ? {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': queries.alertsByStatus(accountId, status).gsi1pk },
      }
    : {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': base.pk, ':prefix': base.skPrefix },
      };
  const res = await db().send(
    new QueryCommand({ TableName: tableName(), ...input, ScanIndexForward: false, Limit: limit, ExclusiveStartKey: startKey }),
  );
  return { items: (res.Items ?? []).map(toAlert), ...(res.LastEvaluatedKey ? { lastKey: res.LastEvaluatedKey } : {}) };
}

/** Acknowledges once: the first acknowledgedAt/By are kept. Undefined when the alert is not in this account. */
export async function acknowledgeAlert(accountId: string, alertId: string, userId: string, now: Date): Promise<Alert | undefined> {
  try {
    const res = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.alert(accountId, alertId),
        UpdateExpression:
          'SET #status = :ack, gsi1pk = :gsi1pk, acknowledgedAt = if_not_exists(acknowledgedAt, :now), acknowledgedBy = if_not_exists(acknowledgedBy, :user)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':ack': 'acknowledged',
          ':gsi1pk': keys.alertIndex(accountId, alertId, 'acknowledged').gsi1pk,
          ':now': now.toISOString(),
          ':user': userId,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return res.Attributes && toAlert(res.Attributes);
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
    throw error;
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
