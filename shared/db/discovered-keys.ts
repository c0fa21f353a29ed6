/** Repository of the account's discovered keys (KEY# items) and their per-day aggregates. */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';

/** All keys of an account (one Query on gsi1, every page). */
export function listProviderKeys(accountId: string): Promise<Item[]> {
  const q = queries.providerKeys(accountId);
  return queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :sk)',
    ExpressionAttributeValues: { ':pk': q.gsi1pk, ':sk': q.skPrefix },
  });
}

/** All keys of an account and its projects' tag items (ONE Query on gsi1: the projects lie after the keys). */
export async function listKeysAndProjects(accountId: string): Promise<{ keys: Item[]; projects: Item[] }> {
  const q = queries.providerKeys(accountId);
  const items = await queryAll({ IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': q.gsi1pk } });
  const isProject = (item: Item) => typeof item.gsi1sk === 'string' && item.gsi1sk.startsWith(q.projectsPrefix);
  return { keys: items.filter((i) => !isProject(i)), projects: items.filter(isProject) };
}

export async function getProviderKey(accountId: string, keyHash: string): Promise<Item | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.providerKey(accountId, keyHash) }));
  return res.Item;
}

/** One key's day × model items in [from, to]. */
export function keyDayModels(accountId: string, keyHash: string, from: string, to: string): Promise<Item[]> {
  const q = queries.keyDays(accountId, keyHash, from, to);
  return queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
  });
}

/** Sets or clears the label; undefined when the key does not exist in this account. */
export async function setLabel(accountId: string, keyHash: string, label: string | null, now: Date): Promise<Item | undefined> {
  try {
    const res = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.providerKey(accountId, keyHash),
        UpdateExpression: 'SET label = :label, labelUpdatedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':label': label, ':now': now.toISOString() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return res.Attributes;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

export type ProjectRef = { id: string; name: string } | null;

/** A key's project as stored on its item (`{id, name}`), or null. */
export function projectOf(key: Item | undefined): ProjectRef {
  const p = key?.project as { id?: unknown; name?: unknown } | null | undefined;
  return p && typeof p.id === 'string' ? { id: p.id, name: typeof p.name === 'string' ? p.name : p.id } : null;
}
