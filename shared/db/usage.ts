/** Read side of the account-wide usage items (USAGE#<account>): plan-period counters, spend per day and month. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { readNumber } from '#shared/db/numbers.ts';

/** Requests tracked in the plan period that starts at `periodStart`. */
export async function trackedRequests(accountId: string, periodStart: string, consistent = false): Promise<number> {
  const res = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.usagePeriod(accountId, periodStart),
      ProjectionExpression: 'trackedRequests',
      ConsistentRead: consistent,
    }),
  );
  return readNumber(res.Item?.trackedRequests, 'trackedRequests');
}
