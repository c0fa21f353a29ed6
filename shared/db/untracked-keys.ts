/**
 * Keys a connection found past the plan's key limit: listed (`tracked: false`, the provider's name, project and
 * status, no spend) without counting against `keyLimit`; promoted to tracked — counted, conditionally, in the same
 * transaction — once the plan has room. Their usage is imported only from then on (history included).
 */
import { failedConditions, tableName, transactWrite } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';

/** Lists keys as untracked (creates them, or refreshes their provider attributes while they stay untracked). */
export async function putUntrackedKeys(accountId: string, provider: string, entries: readonly { keyHash: string; attributes: Record<string, unknown> }[], now: Date): Promise<void> {
  const at = now.toISOString();
  for (let i = 0; i < entries.length; i += 100) {
    await transactWrite(
      entries.slice(i, i + 100).map(({ keyHash, attributes }) => {
        const names: Record<string, string> = {};
        const values: Record<string, unknown> = {
          ':accountId': accountId,
          ':keyHash': keyHash,
          ':provider': provider,
          ':false': false,
          ':now': at,
          ...(() => {
            const index = keys.providerKeyIndex(accountId, keyHash);
            return { ':gsi1pk': index.gsi1pk, ':gsi1sk': index.gsi1sk };
          })(),
        };
        const sets = ['accountId = :accountId', 'keyHash = :keyHash', 'provider = :provider', 'tracked = :false', 'firstSeenAt = if_not_exists(firstSeenAt, :now)', 'lastSeenAt = if_not_exists(lastSeenAt, :now)', 'gsi1pk = :gsi1pk', 'gsi1sk = :gsi1sk'];
        Object.entries(attributes).forEach(([name, value], j) => {
          names[`#a${j}`] = name;
          values[`:a${j}`] = value;
          sets.push(`#a${j} = :a${j}`);
        });
        return {
          Update: {
            TableName: tableName(),
            Key: keys.providerKey(accountId, keyHash),
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: 'attribute_not_exists(pk) OR tracked = :false',
            ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: values,
          },
        };
      }),
    );
  }
}

/**
 * Makes untracked keys tracked, each counted against `keyLimit` in the same transaction (the account's `keyCount`
 * may not pass `keyLimit`). False when the plan has no room for all of them (nothing changed).
 */
export async function promoteKeys(accountId: string, keyHashes: readonly string[], keyLimit: number): Promise<boolean> {
  for (let i = 0; i < keyHashes.length; i += 99) {
    const part = keyHashes.slice(i, i + 99);
    try {
      await transactWrite([
        ...part.map((keyHash) => ({
          Update: {
            TableName: tableName(),
            Key: keys.providerKey(accountId, keyHash),
            UpdateExpression: 'SET tracked = :true',
            ConditionExpression: 'tracked = :false',
            ExpressionAttributeValues: { ':true': true, ':false': false },
          },
        })),
        {
          Update: {
            TableName: tableName(),
            Key: keys.account(accountId),
            UpdateExpression: 'ADD keyCount :n',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(keyCount) OR keyCount <= :max)',
            ExpressionAttributeValues: { ':n': part.length, ':max': keyLimit - part.length },
          },
        },
      ]);
    } catch (error) {
      if (failedConditions(error).length > 0) return false;
      throw error;
    }
  }
  return true;
}
