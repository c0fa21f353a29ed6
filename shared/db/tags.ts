/**
 * Tags of keys and projects (shared/tags/). A key item holds its own `tags`, its `effectiveTags` (the project's
 * overlaid by its own) and `tagsRev`, moved by every write of either; a project's tags are an item of their own with
 * `rev`. A key's own change is written with a check that its project's tags are still those it was computed from; a
 * project's change rewrites its keys' effective tags, each on the revision it read — so no two writers can leave a
 * key with effective tags that mix old and new.
 */
import { GetCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, failedConditions, queryAll, tableName, transactWrite, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
/** A tag map as stored (shared/tags/tags.ts validates it). */
export type Tags = Record<string, string>;

export interface ProjectTagsItem {
  connectionId: string;
  projectId: string;
  tags: Tags;
  rev: number;
}

export const toProject = (item: Item): ProjectTagsItem => ({
  connectionId: item.connectionId as string,
  projectId: item.projectId as string,
  tags: (item.tags as Tags | undefined) ?? {},
  rev: typeof item.rev === 'number' ? item.rev : 0,
});

/** Every project's tags of the account (ONE Query of the key index, where they lie after the keys). */
export async function listProjectTags(accountId: string): Promise<ProjectTagsItem[]> {
  const q = queries.providerKeys(accountId);
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :sk)',
    ExpressionAttributeValues: { ':pk': q.gsi1pk, ':sk': q.projectsPrefix },
  });
  return items.map(toProject);
}

export async function getProjectTags(accountId: string, connectionId: string, projectId: string): Promise<ProjectTagsItem | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.projectTags(accountId, connectionId, projectId), ConsistentRead: true }));
  return res.Item ? toProject(res.Item) : undefined;
}

export async function getKeyItem(accountId: string, keyHash: string): Promise<Item | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.providerKey(accountId, keyHash), ConsistentRead: true }));
  return res.Item;
}

/** The project's tags replaced, on the revision read (`rev` 0: none stored yet). False when another write came first. */
export async function putProjectTags(accountId: string, connectionId: string, projectId: string, tags: Tags, rev: number, now: Date): Promise<boolean> {
  const index = keys.projectTagsIndex(accountId, connectionId, projectId);
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.projectTags(accountId, connectionId, projectId),
        UpdateExpression: 'SET connectionId = :c, projectId = :p, tags = :tags, rev = :next, updatedAt = :now, gsi1pk = :gpk, gsi1sk = :gsk',
        ConditionExpression: rev === 0 ? 'attribute_not_exists(pk)' : 'rev = :rev',
        ExpressionAttributeValues: {
          ':c': connectionId,
          ':p': projectId,
          ':tags': tags,
          ':next': rev + 1,
          ':now': now.toISOString(),
          ':gpk': index.gsi1pk,
          ':gsk': index.gsi1sk,
          ...(rev === 0 ? {} : { ':rev': rev }),
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

export type KeyTagsOutcome = { status: 'written'; item: Item } | { status: 'missing' } | { status: 'project-changed' };

/**
 * A key's own tags and effective tags written, with a check that its project's tags are still at `project.rev`
 * (no project: nothing to check). `missing`: no such key.
 */
export async function writeKeyTags(
  accountId: string,
  keyHash: string,
  own: Tags,
  effective: Tags,
  project: { connectionId: string; projectId: string; rev: number } | undefined,
  now: Date,
): Promise<KeyTagsOutcome> {
  const update = {
    TableName: tableName(),
    Key: keys.providerKey(accountId, keyHash),
    UpdateExpression: 'SET tags = :own, effectiveTags = :eff, tagsUpdatedAt = :now ADD tagsRev :one',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':own': own, ':eff': effective, ':now': now.toISOString(), ':one': 1 },
  };
  if (!project) {
    try {
      const res = await db().send(new UpdateCommand({ ...update, ReturnValues: 'ALL_NEW' }));
      return { status: 'written', item: res.Attributes! };
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return { status: 'missing' };
      throw error;
    }
  }
  const check: NonNullable<TransactWriteCommandInput['TransactItems']>[number] = {
    ConditionCheck: {
      TableName: tableName(),
      Key: keys.projectTags(accountId, project.connectionId, project.projectId),
      ConditionExpression: project.rev === 0 ? 'attribute_not_exists(pk)' : 'rev = :rev',
      ...(project.rev === 0 ? {} : { ExpressionAttributeValues: { ':rev': project.rev } }),
    },
  };
  try {
    await transactWrite([{ Update: update }, check]);
  } catch (error) {
    const failed = failedConditions(error);
    if (failed.includes(0)) return { status: 'missing' };
    if (failed.includes(1)) return { status: 'project-changed' };
    throw error;
  }
  const item = await getKeyItem(accountId, keyHash);
  return item ? { status: 'written', item } : { status: 'missing' };
}

/**
 * A key's effective tags set on the revision read (`rev` as the item held it; none: 0). False when the key changed
 * meanwhile (read it again) or is gone.
 */
export async function setEffectiveTags(accountId: string, keyHash: string, effective: Tags, rev: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.providerKey(accountId, keyHash),
        UpdateExpression: 'SET effectiveTags = :eff ADD tagsRev :one',
        ConditionExpression: rev === 0 ? 'attribute_exists(pk) AND attribute_not_exists(tagsRev)' : 'tagsRev = :rev',
        ExpressionAttributeValues: { ':eff': effective, ':one': 1, ...(rev === 0 ? {} : { ':rev': rev }) },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

export const tagsRevOf = (item: Item | undefined): number => (typeof item?.tagsRev === 'number' ? item.tagsRev : 0);
