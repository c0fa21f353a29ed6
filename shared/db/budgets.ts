/**
 * Repository of budgets: small, rarely written items in the account's partition (`keys.budget`), so ONE Query
 * lists them all (and, with the rules, everything alert evaluation compares against: shared/db/alerts.ts).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { writeCounted } from '#shared/db/caps.ts';

export type BudgetScope = 'ACCOUNT' | 'KEY' | 'PROJECT' | 'TAG';

export type BudgetAction = 'notify' | 'stop';
export interface Budget {
  id: string;
  name: string | null;
  monthlyLimitMicros: number;
  /** Percent of the limit, at most 2 decimals (API `alertThreshold`). */
  alertThreshold: number;
  scope: BudgetScope;
  keyHash: string | null;
  /** PROJECT: the connection and its project (OpenAI project, Anthropic workspace); null otherwise. */
  connectionId?: string | null;
  projectId?: string | null;
  /** TAG: every key whose effective tags hold `name: value` (docs/features/tags-and-chargeback.md); null otherwise. */
  tag?: { name: string; value: string } | null;
  /** `stop`: at the limit, the levers of what it covers are pulled (shared/enforcement/). Absent: `notify`. */
  action?: BudgetAction;
  /** Alert (`budget_forecast`, once a month) when the month-end forecast reaches the limit while spend is below it. */
  alertOnForecast: boolean;
  /**
   * A `stop` budget sets the provider's own cap too where one exists (an OpenRouter key's limit, an Anthropic
   * workspace's spend limit). Absent: the provider's default (on where Burnrate can read and restore a customer's own
   * cap; off for Anthropic workspaces).
   */
  nativeCap?: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The item kind, in `entity` (what evaluation reads) and, like other items of the table, in `type`. */
export const BUDGET_ENTITY = 'Budget';

function toItem(accountId: string, b: Budget): Item {
  return {
    ...keys.budget(accountId, b.id),
    entity: BUDGET_ENTITY,
    type: BUDGET_ENTITY,
    id: b.id,
    name: b.name,
    monthlyLimitMicros: b.monthlyLimitMicros,
    alertThreshold: b.alertThreshold,
    scope: b.scope,
    keyHash: b.keyHash,
    connectionId: b.connectionId,
    projectId: b.projectId,
    ...(b.tag ? { tag: b.tag } : {}),
    action: b.action,
    alertOnForecast: b.alertOnForecast,
    ...(b.nativeCap !== undefined ? { nativeCap: b.nativeCap } : {}),
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
  };
}

export function toBudget(item: Item): Budget {
  return {
    id: item.id as string,
    name: (item.name as string | null | undefined) ?? null,
    monthlyLimitMicros: item.monthlyLimitMicros as number,
    alertThreshold: item.alertThreshold as number,
    scope: item.scope as Budget['scope'],
    keyHash: (item.keyHash as string | null | undefined) ?? null,
    connectionId: (item.connectionId as string | null | undefined) ?? null,
    projectId: (item.projectId as string | null | undefined) ?? null,
    tag: (item.tag as { name: string; value: string } | null | undefined) ?? null,
    action: item.action === 'stop' ? 'stop' : 'notify',
    alertOnForecast: item.alertOnForecast === true,
    ...(typeof item.nativeCap === 'boolean' ? { nativeCap: item.nativeCap } : {}),
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

const isConditionFailure = (error: unknown): error is Error & { Item?: Record<string, unknown> } =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** Puts the budget and takes a slot of the account's budget counter in one transaction (shared/db/caps.ts). */
export async function createBudget(accountId: string, budget: Budget, cap: number): Promise<'created' | 'cap'> {
  const outcome = await writeCounted(accountId, 'budgets', cap, [
    { Put: { TableName: tableName(), Item: toItem(accountId, budget), ConditionExpression: 'attribute_not_exists(pk)' } },
  ]);
  if (outcome.status === 'failed') throw new Error('A fresh budget id collided with a stored one.');
  return outcome.status === 'cap' ? 'cap' : 'created';
}

/** Every budget of the account, newest first (ULID ids), in ONE strongly consistent Query (all pages). */
export async function listBudgets(accountId: string): Promise<Budget[]> {
  const q = queries.accountItems(accountId, 'CFG#BUDGET');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
    ScanIndexForward: false,
    ConsistentRead: true,
  });
  return items.map(toBudget);
}

export async function getBudget(accountId: string, id: string): Promise<Budget | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.budget(accountId, id), ConsistentRead: true }));
  return res.Item && toBudget(res.Item);
}

/**
 * Replaces the whole budget if it is still the version read (`updatedAt = previousUpdatedAt`): `missing` when it
 * was deleted meanwhile, `conflict` when another edit won.
 */
export async function replaceBudget(accountId: string, budget: Budget, previousUpdatedAt: string): Promise<'updated' | 'missing' | 'conflict'> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: toItem(accountId, budget),
        ConditionExpression: 'attribute_exists(pk) AND updatedAt = :previous',
        ExpressionAttributeValues: { ':previous': previousUpdatedAt },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'updated';
  } catch (error) {
    if (isConditionFailure(error)) return error.Item ? 'conflict' : 'missing';
    throw error;
  }
}

/** False when the account has no such budget. Frees its slot of the counter in the same transaction. */
export async function deleteBudget(accountId: string, id: string): Promise<boolean> {
  const outcome = await writeCounted(accountId, 'budgets', null, [
    { Delete: { TableName: tableName(), Key: keys.budget(accountId, id), ConditionExpression: 'attribute_exists(pk)' } },
  ]);
  return outcome.status === 'written';
}
