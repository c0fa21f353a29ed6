/**
 * Repository of alert rules: small items in the account's partition (`keys.rule`), listed by ONE Query.
 * A rule has its own `type` (cost_threshold, ...), so the item kind is stored in `entity` (what evaluation reads).
 * Evaluation sets `lastTriggeredAt` on the item when the rule fires (shared/db/alerts.ts).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { writeCounted } from '#shared/db/caps.ts';

export type RuleType = 'cost_threshold' | 'new_key' | 'spend_spike' | 'spend_anomaly';

export type Channel = 'email' | 'webhook' | 'slack';
export type Period = 'daily' | 'weekly' | 'monthly';

/** Rule config as the API takes it (dollars as JSON numbers, ≤ 6 decimals). `webhookUrl` is required iff channels has webhook. */
export type RuleConfig =
  | { threshold: number; period: Period; keyHash?: string; webhookUrl?: string; slackWebhookUrl?: string } // cost_threshold
  | { webhookUrl?: string; slackWebhookUrl?: string } // new_key
  | { multiplier: number; minSpend: number; webhookUrl?: string; slackWebhookUrl?: string } // spend_spike
  | SpendAnomalyRuleConfig;

/** spend_anomaly: every key of the account against its own usual hourly spend (shared/anomaly/). */
export interface SpendAnomalyRuleConfig {
  minUsdPerHour: number;
  multiplier: number;
  action: 'notify' | 'stop';
  webhookUrl?: string;
  slackWebhookUrl?: string;
}

export interface Rule {
  id: string;
  type: RuleType;
  name: string;
  config: RuleConfig;
  channels: Channel[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  lastTriggeredAt: string | null;
}

export const RULE_ENTITY = 'Rule';

function toItem(accountId: string, r: Rule): Item {
  return {
    ...keys.rule(accountId, r.id),
    entity: RULE_ENTITY,
    id: r.id,
    type: r.type,
    name: r.name,
    config: r.config,
    channels: r.channels,
    isActive: r.isActive,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    lastTriggeredAt: r.lastTriggeredAt,
  };
}

export function toRule(item: Item): Rule {
  return {
    id: item.id as string,
    type: item.type as Rule['type'],
    name: item.name as string,
    config: (item.config as Rule['config'] | undefined) ?? {},
    channels: item.channels as Rule['channels'],
    isActive: item.isActive as boolean,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
    lastTriggeredAt: (item.lastTriggeredAt as string | null | undefined) ?? null,
  };
}

const isConditionFailure = (error: unknown): error is Error & { Item?: Record<string, { S?: string }> } =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** Puts the rule and takes a slot of the account's rule counter in one transaction (shared/db/caps.ts). */
export async function createRule(accountId: string, rule: Rule, cap: number): Promise<'created' | 'cap'> {
  const outcome = await writeCounted(accountId, 'rules', cap, [
    { Put: { TableName: tableName(), Item: toItem(accountId, rule), ConditionExpression: 'attribute_not_exists(pk)' } },
  ]);
  if (outcome.status === 'failed') throw new Error('A fresh rule id collided with a stored one.');
  return outcome.status === 'cap' ? 'cap' : 'created';
}

/** Every rule of the account, newest first (ULID ids), in ONE strongly consistent Query (all pages). */
export async function listRules(accountId: string): Promise<Rule[]> {
  const q = queries.accountItems(accountId, 'CFG#RULE');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
    ScanIndexForward: false,
    ConsistentRead: true,
  });
  return items.map(toRule);
}

export async function getRule(accountId: string, id: string): Promise<Rule | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.rule(accountId, id), ConsistentRead: true }));
  return res.Item && toRule(res.Item);
}

/**
 * Replaces the whole rule if it is still the version read: same `updatedAt` AND same `lastTriggeredAt` (a Put
 * must not wipe a firing that happened since the read). `missing`: deleted meanwhile; `conflict`: another edit
 * won; `triggered`: only `lastTriggeredAt` moved (the caller re-reads and re-applies its patch).
 */
export async function replaceRule(
  accountId: string,
  rule: Rule,
  previous: Pick<Rule, 'updatedAt' | 'lastTriggeredAt'>,
): Promise<'updated' | 'missing' | 'conflict' | 'triggered'> {
  const triggeredCondition =
    previous.lastTriggeredAt === null
      ? '(attribute_not_exists(lastTriggeredAt) OR attribute_type(lastTriggeredAt, :nullType))'
      : 'lastTriggeredAt = :previousTriggered';
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: toItem(accountId, rule),
        ConditionExpression: `attribute_exists(pk) AND updatedAt = :previous AND ${triggeredCondition}`,
        ExpressionAttributeValues: {
          ':previous': previous.updatedAt,
          ...(previous.lastTriggeredAt === null ? { ':nullType': 'NULL' } : { ':previousTriggered': previous.lastTriggeredAt }),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'updated';
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    if (!error.Item) return 'missing';
    return error.Item.updatedAt?.S === previous.updatedAt ? 'triggered' : 'conflict';
  }
}

/** False when the account has no such rule. Frees its slot of the counter in the same transaction. */
export async function deleteRule(accountId: string, id: string): Promise<boolean> {
  const outcome = await writeCounted(accountId, 'rules', null, [
    { Delete: { TableName: tableName(), Key: keys.rule(accountId, id), ConditionExpression: 'attribute_exists(pk)' } },
  ]);
  return outcome.status === 'written';
}
