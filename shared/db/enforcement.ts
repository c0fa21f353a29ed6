/**
 * Repository of enforcement: the state of each (stop budget, target) in the account's partition
 * (`ENFORCE#<budgetId>#<targetId>`), every write conditioned on the version read, so one act is taken once even when
 * an ingest and a sync decide it at the same moment; and the acts' record (`ACTIONS#<a>`, one budget's on gsi1).
 */
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import type { EnforcementAction, EnforcementState, Target } from '#shared/enforcement/model.ts';

const STATE_ENTITY = 'EnforcementState';

function stateItem(accountId: string, s: EnforcementState): Item {
  return { ...keys.enforcementState(accountId, s.budgetId, s.target.id), entity: STATE_ENTITY, type: STATE_ENTITY, ...s };
}

export function toState(item: Item): EnforcementState {
  return {
    budgetId: item.budgetId as string,
    target: item.target as Target,
    status: item.status as EnforcementState['status'],
    want: item.want === 'off' ? 'off' : 'on',
    hold: item.hold === true,
    period: item.period as string,
    since: item.since as string,
    detail: (item.detail as string | undefined) ?? '',
    ...(item.limitCents !== undefined ? { limitCents: item.limitCents as number | null } : {}),
    ...(item.enforcing !== undefined ? { enforcing: item.enforcing === true } : {}),
    ...(item.priorLimitCents !== undefined ? { priorLimitCents: item.priorLimitCents as number | null } : {}),
    ...(typeof item.releasedBy === 'string' ? { releasedBy: item.releasedBy } : {}),
    ...(item.holder === 'anomaly' ? { holder: 'anomaly' as const } : {}),
    v: Number(item.v ?? 0),
  };
}

/** Every enforcement state of the account: ONE Query (strongly consistent unless `consistent` is false). */
export async function listStates(accountId: string, consistent = true): Promise<EnforcementState[]> {
  const q = queries.accountItems(accountId, 'ENFORCE');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
    ConsistentRead: consistent,
  });
  return items.map(toState);
}

/**
 * Writes `next` (its `v` one past `previous`) if the stored state is still `previous` (or, with none, does not exist
 * yet): false when another writer got there first.
 */
export async function writeState(accountId: string, previous: EnforcementState | undefined, next: EnforcementState): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: stateItem(accountId, next),
        ConditionExpression: previous ? 'v = :v' : 'attribute_not_exists(pk)',
        ...(previous ? { ExpressionAttributeValues: { ':v': previous.v } } : {}),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

export async function putAction(accountId: string, action: EnforcementAction): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.enforcementAction(accountId, action.id),
        ...keys.enforcementActionIndex(accountId, action.budgetId ?? action.ruleId ?? '-', action.id),
        entity: 'EnforcementAction',
        type: 'EnforcementAction',
        ...action,
      },
    }),
  );
}

export function toAction(item: Item): EnforcementAction {
  return {
    id: item.id as string,
    budgetId: (item.budgetId as string | null | undefined) ?? null,
    ...(typeof item.ruleId === 'string' ? { ruleId: item.ruleId } : {}),
    kind: item.kind as EnforcementAction['kind'],
    provider: item.provider as string,
    keyHash: (item.keyHash as string | null) ?? null,
    projectId: (item.projectId as string | null) ?? null,
    reason: item.reason as EnforcementAction['reason'],
    actor: item.actor as string,
    result: item.result === 'failed' ? 'failed' : 'ok',
    detail: (item.detail as string) ?? '',
    at: item.at as string,
  };
}

/** One page of acts, newest first: the account's (base table) or one budget's (gsi1). */
export async function listActions(
  accountId: string,
  budgetId: string | undefined,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<{ items: EnforcementAction[]; lastKey?: Record<string, unknown> }> {
  const base = queries.enforcementActions(accountId);
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      ...(budgetId
        ? { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': queries.budgetEnforcementActions(accountId, budgetId).gsi1pk } }
        : { KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)', ExpressionAttributeValues: { ':pk': base.pk, ':prefix': base.skPrefix } }),
      ScanIndexForward: false,
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return { items: (res.Items ?? []).map(toAction), ...(res.LastEvaluatedKey ? { lastKey: res.LastEvaluatedKey } : {}) };
}
