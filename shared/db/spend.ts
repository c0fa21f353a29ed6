/**
 * Read side of GET /spend and GET /spend/export: the account's day, day × model, month × key and day × key
 * aggregates (written by the ingest transactions, shared/db/usage-writes.ts) and the export rows (gsi1).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { recentDays } from '#shared/db/rolling.ts';

const between = (q: { pk: string; skFrom: string; skTo: string }) =>
  queryAll({ KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to', ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo } });

/** The account's day items in [from, to]. */
export const accountDays = (accountId: string, from: string, to: string): Promise<Item[]> => between(queries.usageDays(accountId, from, to));
/** The account's day × model items in [from, to]. */
export const accountDayModels = (accountId: string, from: string, to: string): Promise<Item[]> => between(queries.spendDayModels(accountId, from, to));
/** The account's month × key items of the months [fromMonth, toMonth]. */
export const accountMonthKeys = (accountId: string, fromMonth: string, toMonth: string): Promise<Item[]> =>
  between(queries.spendMonthKeys(accountId, fromMonth, toMonth));
/** The account's day × key items in [from, to]. */
export const accountDayKeys = (accountId: string, from: string, to: string): Promise<Item[]> => between(queries.spendDayKeys(accountId, from, to));

export interface ForecastFigures {
  account?: Item;
  /** The account's month item of `today`'s month, and its day items of the 7 days before today, by date. */
  month?: Item;
  days: Map<string, Item>;
  /** Key items asked for, by hash. */
  keyItems: Map<string, Item>;
}

/** ONE BatchGetItem: the account, its spend this month and on the 7 days before today, and the key items named. */
export async function loadForecastFigures(accountId: string, today: string, keyHashes: string[] = []): Promise<ForecastFigures> {
  const month = keys.usageMonth(accountId, today.slice(0, 7));
  const items = await batchGet([
    keys.account(accountId),
    month,
    ...recentDays(today).map((d) => keys.usageDay(accountId, d)),
    ...keyHashes.map((h) => keys.providerKey(accountId, h)),
  ]);
  const figures: ForecastFigures = { days: new Map(), keyItems: new Map() };
  const accountKey = keys.account(accountId);
  const keySk = keys.providerKey(accountId, '').sk;
  for (const item of items) {
    if (item.pk === accountKey.pk && item.sk === accountKey.sk) figures.account = item;
    else if (item.sk === month.sk && item.pk === month.pk) figures.month = item;
    else if (item.sk === keySk) figures.keyItems.set(item.keyHash as string, item);
    else if (typeof item.date === 'string') figures.days.set(item.date, item);
  }
  return figures;
}

/**
 * The export rows (key × day × model items) of [from, to], days ascending: ONE Query on gsi1, page by page
 * (at most `limit` items in all: the caller asks one more than it may answer, to know it is too many).
 */
export async function* exportRows(accountId: string, from: string, to: string, limit = Infinity): AsyncGenerator<Item[]> {
  const q = queries.spendRows(accountId, from, to);
  let start: Record<string, unknown> | undefined;
  let left = limit;
  do {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': q.gsi1pk, ':from': q.skFrom, ':to': q.skTo },
        ExclusiveStartKey: start,
        ...(Number.isFinite(left) ? { Limit: left } : {}),
      }),
    );
    const items = res.Items ?? [];
    left -= items.length;
    if (items.length > 0) yield items;
    start = res.LastEvaluatedKey;
  } while (start && left > 0);
}

/** The export rows (key × day × model) of [from, to] of one provider's model: ONE Query on gsi1 (every page), filtered as it reads. */
export function modelRows(accountId: string, from: string, to: string, provider: string, model: string): Promise<Item[]> {
  const q = queries.spendRows(accountId, from, to);
  return queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
    FilterExpression: 'provider = :provider AND model = :model',
    ExpressionAttributeValues: { ':pk': q.gsi1pk, ':from': q.skFrom, ':to': q.skTo, ':provider': provider, ':model': model },
  });
}
