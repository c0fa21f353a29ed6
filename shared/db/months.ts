/**
 * Closed months (docs/features/spend-and-exports.md "Closed months"): one item per closed month of an account (`ACCOUNT#<a>` /
 * `MONTH#<yyyy-mm>`), written once by a conditional Put. Its existence is the freeze: every spend write that touches
 * a day of a past month is conditioned on this item not existing (shared/db/usage-writes.ts `openMonthGuards`), and a
 * producer that knows the month closed books the change as a correction on the day it was found.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, queryAll, tableName } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';

export interface SettledThrough {
  connectionId: string;
  provider: string;
  /** The last day of the month the connection has settled without a gap from the month's first importable day (null: none). */
  date: string | null;
}

export interface ClosedMonth {
  month: string;
  closedAt: string;
  /** The user who closed it, or `burnrate` (closed by itself once every connection settled it). */
  closedBy: string;
  /** How far each connection had settled the month when it closed. */
  settledThrough: SettledThrough[];
  /** Closed with `force` while some of its days were not settled. */
  forced: boolean;
}

const toClosedMonth = (item: Record<string, unknown>): ClosedMonth => ({
  month: item.month as string,
  closedAt: item.closedAt as string,
  closedBy: item.closedBy as string,
  settledThrough: Array.isArray(item.settledThrough) ? (item.settledThrough as SettledThrough[]) : [],
  forced: item.forced === true,
});

/** The account's closed months `from`…`to` (YYYY-MM, inclusive): ONE Query. `consistent` for a writer deciding on them. */
export async function listClosedMonths(accountId: string, from: string, to: string, consistent = false): Promise<ClosedMonth[]> {
  const q = queries.closedMonths(accountId, from, to);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
    ...(consistent ? { ConsistentRead: true } : {}),
  });
  return items.map(toClosedMonth);
}

/** Closes a month: false when it was closed already (the Put is conditioned on the item not existing). */
export async function putClosedMonth(accountId: string, closed: ClosedMonth): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.closedMonth(accountId, closed.month), type: 'ClosedMonth', ...closed },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}
