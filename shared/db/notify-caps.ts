/**
 * Repository of the hourly notification counters (`keys.notifyCap`): one small item per target and UTC hour,
 * removed by the table's TTL. Counting is ONE conditional UpdateItem (ADD n 1 while n ≤ cap), so the count is
 * exact across every notifier container and stops at cap + 1: the update that lands on cap + 1 is the first
 * refused one of the hour (it sends the "paused" notice), later ones fail the condition and write nothing.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { readNumber } from '#shared/db/numbers.ts';

/**
 * Counts one notification to `targetHash` in `hour`. Returns the count after it (1 … cap + 1), or undefined when
 * the counter already stood past the cap (nothing written).
 */
export async function countNotification(kind: string, targetHash: string, hour: string, cap: number, expiresAt: number): Promise<number | undefined> {
  try {
    const res = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.notifyCap(kind, targetHash, hour),
        UpdateExpression: 'ADD n :one SET expiresAt = :exp, #type = :type',
        ConditionExpression: 'attribute_not_exists(n) OR n <= :cap',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':cap': cap, ':exp': expiresAt, ':type': 'NotifyCap' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return readNumber(res.Attributes?.n);
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}
