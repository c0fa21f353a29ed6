/**
 * Repository for ingest keys. Two items per key:
 *   - the key itself in the account's partition (`keys.ingestKey`): what the account's list shows, plus the secret's hash;
 *   - a lookup item keyed by the secret's SHA-256 (`keys.ingestSecret`): `POST /ingest` finds the account with ONE GetItem.
 * Both are written and deleted together in one transaction, so a revoked key is refused at once.
 */
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, failedConditions, tableName } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { writeCounted } from '#shared/db/caps.ts';

export interface IngestKey {
  id: string;
  accountId: string;
  name: string;
  /** The secret's first characters, for display (`brk_AbCdEfGh`). */
  prefix: string;
  /** SHA-256 (hex) of the secret; the secret itself is never stored. */
  secretHash: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** An ingest key as listed: everything but the secret's hash. */
export type IngestKeySummary = Omit<IngestKey, 'secretHash'>;

/** The lookup item: which account and key a secret hash belongs to. */
export interface IngestSecret {
  accountId: string;
  ingestKeyId: string;
  lastUsedAt: string | null;
}

const notExists = 'attribute_not_exists(pk)';
const exists = 'attribute_exists(pk)';

/**
 * Main item and lookup item in ONE transaction, with the account's ingest-key counter (shared/db/caps.ts):
 * all three are written or none is. `cap`: the account already has `cap` keys.
 */
export async function createIngestKey(key: IngestKey, cap: number): Promise<'created' | 'cap'> {
  const outcome = await writeCounted(key.accountId, 'ingestKeys', cap, [
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.ingestKey(key.accountId, key.id), type: 'IngestKey', ...key },
        ConditionExpression: notExists,
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.ingestSecret(key.secretHash),
          type: 'IngestSecret',
          accountId: key.accountId,
          ingestKeyId: key.id,
          lastUsedAt: key.lastUsedAt,
        },
        ConditionExpression: notExists,
      },
    },
  ]);
  if (outcome.status === 'failed') throw new Error('A fresh ingest key id or secret collided with a stored one.');
  return outcome.status === 'cap' ? 'cap' : 'created';
}

function toSummary(item: Record<string, unknown>): IngestKeySummary {
  return {
    id: item.id as string,
    accountId: item.accountId as string,
    name: item.name as string,
    prefix: item.prefix as string,
    createdAt: item.createdAt as string,
    lastUsedAt: (item.lastUsedAt as string | null | undefined) ?? null,
  };
}

/**
 * The account's ingest keys, newest first (ids are ULIDs, so the sort key orders by creation), in ONE strongly
 * consistent Query. The projection leaves the secret's hash out. An account holds at most a few dozen keys of a
 * few hundred bytes each, far below the 1 MB a Query page returns, so one page is the whole list.
 */
export async function listIngestKeys(accountId: string): Promise<IngestKeySummary[]> {
  const { pk, skPrefix } = queries.accountItems(accountId, 'INGESTKEY');
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      ProjectionExpression: '#id, #accountId, #name, #prefix, #createdAt, #lastUsedAt',
      ExpressionAttributeNames: {
        '#id': 'id',
        '#accountId': 'accountId',
        '#name': 'name',
        '#prefix': 'prefix',
        '#createdAt': 'createdAt',
        '#lastUsedAt': 'lastUsedAt',
      },
      ScanIndexForward: false,
      ConsistentRead: true,
    }),
  );
  return (res.Items ?? []).map(toSummary);
}

/**
 * Deletes the key and its lookup item in one transaction (with the counter's release). Returns false when the account has no such key
 * (never had it, it belongs to another account, or a concurrent delete won).
 */
export async function deleteIngestKey(accountId: string, id: string): Promise<boolean> {
  const main = keys.ingestKey(accountId, id);
  const res = await db().send(
    new GetCommand({ TableName: tableName(), Key: main, ProjectionExpression: 'secretHash', ConsistentRead: true }),
  );
  const secretHash = res.Item?.secretHash;
  if (typeof secretHash !== 'string') return false;
  const outcome = await writeCounted(accountId, 'ingestKeys', null, [
    { Delete: { TableName: tableName(), Key: main, ConditionExpression: exists } },
    { Delete: { TableName: tableName(), Key: keys.ingestSecret(secretHash) } },
  ]);
  return outcome.status === 'written';
}

/** The lookup item of a secret hash (strongly consistent: a key deleted a moment ago is not found). */
export async function findBySecretHash(secretHash: string): Promise<IngestSecret | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.ingestSecret(secretHash), ConsistentRead: true }));
  if (!res.Item) return undefined;
  return {
    accountId: res.Item.accountId as string,
    ingestKeyId: res.Item.ingestKeyId as string,
    lastUsedAt: (res.Item.lastUsedAt as string | null | undefined) ?? null,
  };
}

/**
 * Sets `lastUsedAt` on both items. Each update requires its item to exist, so a key revoked meanwhile is not
 * brought back as a half item; that cancellation is expected and ignored. Other errors are thrown.
 */
export async function touchIngestKey(accountId: string, id: string, secretHash: string, now: string): Promise<void> {
  const update = (key: { pk: string; sk: string }) => ({
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET lastUsedAt = :now',
      ConditionExpression: exists,
      ExpressionAttributeValues: { ':now': now },
    },
  });
  try {
    await db().send(new TransactWriteCommand({ TransactItems: [update(keys.ingestKey(accountId, id)), update(keys.ingestSecret(secretHash))] }));
  } catch (error) {
    if (failedConditions(error).length > 0) return;
    throw error;
  }
}
