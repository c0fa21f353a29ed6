/**
 * Customers and features of events (docs/features/tags-and-chargeback.md "Customers and features"): the month ×
 * customer and month × feature items the one writer adds to (shared/db/usage-writes.ts), the month's count of
 * distinct customers (the plan's limit), and their reads.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';

/** Which of these (month, customer) pairs exist, and each month's count of distinct customers (ONE BatchGetItem). */
export async function knownCustomers(accountId: string, pairs: { month: string; customerId: string }[]): Promise<{ known: Set<string>; counts: Map<string, number> }> {
  const months = [...new Set(pairs.map((p) => p.month))];
  const items = await batchGet([...months.map((m) => keys.customerCount(accountId, m)), ...pairs.map((p) => keys.spendMonthCustomer(accountId, p.month, p.customerId))]);
  const known = new Set<string>();
  const counts = new Map(months.map((m) => [m, 0]));
  for (const item of items) {
    if (item.sk === '#COUNT') counts.set(item.month as string, Number(item.customers ?? 0));
    else known.add(`${item.month as string}|${item.customerId as string}`);
  }
  return { known, counts };
}

/** The month's distinct customers counted up by `n` (after the events that named them were written). */
export async function countCustomers(accountId: string, month: string, n: number): Promise<void> {
  if (n <= 0) return;
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.customerCount(accountId, month),
      UpdateExpression: 'SET #month = :month ADD customers :n',
      ExpressionAttributeNames: { '#month': 'month' },
      ExpressionAttributeValues: { ':month': month, ':n': n },
    }),
  );
}

/** A month's customers (ONE paged Query of its partition; the count item is left out). */
export function monthCustomers(accountId: string, month: string): Promise<Item[]> {
  const q = queries.monthCustomers(accountId, month);
  return queryAll({ KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)', ExpressionAttributeValues: { ':pk': q.pk, ':sk': q.skPrefix } });
}

/** A month's features (ONE paged Query). */
export function monthFeatures(accountId: string, month: string): Promise<Item[]> {
  const q = queries.monthFeatures(accountId, month);
  return queryAll({ KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)', ExpressionAttributeValues: { ':pk': q.pk, ':sk': q.skPrefix } });
}

/** The months' customer counts (ONE BatchGetItem). */
export async function customerCounts(accountId: string, months: string[]): Promise<Map<string, number>> {
  const items = await batchGet(months.map((m) => keys.customerCount(accountId, m)));
  return new Map(items.map((item) => [item.month as string, Number(item.customers ?? 0)]));
}

/** One page of a month's customers or features by cost, most first (ONE Query of gsi3), and where the next starts. */
export async function pageByCost(pk: string, limit: number, start?: Record<string, unknown>): Promise<{ items: Item[]; next?: Record<string, unknown> }> {
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ScanIndexForward: false,
      Limit: limit + 1,
      ...(start ? { ExclusiveStartKey: start } : {}),
    }),
  );
  return pageOf(res.Items ?? [], limit, ['pk', 'sk', 'gsi3pk', 'gsi3sk']);
}

/** One page of a month's customers by name (the base table's sort key order; ONE Query). */
export async function pageByName(pk: string, prefix: string, limit: number, start?: Record<string, unknown>): Promise<{ items: Item[]; next?: Record<string, unknown> }> {
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': prefix },
      Limit: limit + 1,
      ...(start ? { ExclusiveStartKey: start } : {}),
    }),
  );
  return pageOf(res.Items ?? [], limit, ['pk', 'sk']);
}

/** The month's totals, its customer count and named items (ONE BatchGetItem). */
export function getItems(list: { pk: string; sk: string }[]): Promise<Item[]> {
  return batchGet(list);
}

/** A page of `limit` from `limit + 1` read: a next page only when there is one (its start: the last item's keys). */
function pageOf(items: Item[], limit: number, keyNames: string[]): { items: Item[]; next?: Record<string, unknown> } {
  if (items.length <= limit) return { items };
  const page = items.slice(0, limit);
  const last = page.at(-1)!;
  return { items: page, next: Object.fromEntries(keyNames.map((k) => [k, last[k]])) };
}
