/**
 * What ingestion loads before it writes (shared/ingest/service.ts): the account, the batch's known keys, the period's
 * tracked requests, the room under the money ceiling, the account's own prices; and which events were counted before.
 */
import { batchGet, type Item } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { toAccount, type Account } from '#shared/db/accounts.ts';
import { readInt, readNumber } from '#shared/db/numbers.ts';
import { toOwnPrice } from '#shared/db/prices.ts';
import type { OwnPriceLookup } from '#shared/db/prices.ts';
import { priceId } from '#shared/usage/names.ts';

export interface CeilingRoom {
  /** Each key's total spend so far (µ$); a key not listed has 0. */
  keyTotals: ReadonlyMap<string, bigint>;
  /** The account's spend per calendar month so far (µ$), keyed `YYYY-MM`; a month not listed has 0. */
  monthCosts: ReadonlyMap<string, bigint>;
}

/**
 * What ingestion needs before it writes, in one BatchGetItem: the account, its own prices of the batch's models
 * (and their families: shared/ingest/own-prices.ts), which of the batch's keys exist, the
 * tracked requests of the period starting at `periodStart` (the caller's guess: the calendar month; it reads
 * again if the account's period turns out to be another), and the room under the money ceiling (the keys' totals
 * and the account's spend in `months`).
 */
export async function loadIngestContext(
  accountId: string,
  keyHashes: string[],
  periodStart: string,
  months: string[],
  priceNames: { provider: string; model: string }[] = [],
  currentMonth?: string,
): Promise<{ account?: Account; known: Set<string>; lastSeen: Map<string, unknown>; trackedRequests: number; ceiling: CeilingRoom; ownPrices: OwnPriceLookup; closedMonths: Set<string> }> {
  const accountKey = keys.account(accountId);
  const usageKey = keys.usagePeriod(accountId, periodStart);
  const items = await batchGet([
    accountKey,
    usageKey,
    ...keyHashes.map((h) => keys.providerKey(accountId, h)),
    ...months.map((m) => keys.usageMonth(accountId, m)),
    ...priceNames.map((n) => keys.accountPrice(accountId, n.provider, n.model)),
    // Past months of the events: closed ones take their usage as corrections today.
    ...months.filter((m) => currentMonth !== undefined && m < currentMonth).map((m) => keys.closedMonth(accountId, m)),
  ]);
  const priceSk = keys.accountPrice(accountId, '', '').sk;
  const ownPrices = new Map(
    items
      .filter((item) => item.pk === accountKey.pk && typeof item.sk === 'string' && item.sk.startsWith(priceSk.slice(0, -1)))
      .map((item) => {
        const p = toOwnPrice(item);
        return [priceId(p.provider, p.model), p] as const;
      }),
  );
  const accountItem = items.find((item) => item.pk === accountKey.pk && item.sk === accountKey.sk);
  const usageItem = items.find((item) => item.pk === usageKey.pk && item.sk === usageKey.sk);
  const keyItems = items.filter((item) => item.sk === keys.providerKey(accountId, '').sk);
  const known = new Set(keyItems.map((item) => item.keyHash as string));
  return {
    account: accountItem && toAccount(accountItem),
    known,
    // When an ingest last saw each known key (the spend-anomaly rate exists from the second ingest of the day).
    lastSeen: new Map(keyItems.map((item) => [item.keyHash as string, item.lastSeenAt])),
    trackedRequests: readNumber(usageItem?.trackedRequests, 'trackedRequests'),
    ceiling: ceilingRoomOf(accountId, items),
    ownPrices,
    closedMonths: new Set(items.filter((item) => item.pk === accountKey.pk && item.type === 'ClosedMonth').map((item) => item.month as string)),
  };
}

/** The room under the money ceiling, read strongly consistent (after a racing batch took some of it). */
export async function loadCeilingRoom(accountId: string, keyHashes: string[], months: string[]): Promise<CeilingRoom> {
  const items = await batchGet(
    [...keyHashes.map((h) => keys.providerKey(accountId, h)), ...months.map((m) => keys.usageMonth(accountId, m))],
    undefined,
    true,
  );
  return ceilingRoomOf(accountId, items);
}

function ceilingRoomOf(accountId: string, items: Item[]): CeilingRoom {
  const keyTotals = new Map<string, bigint>();
  const monthCosts = new Map<string, bigint>();
  const keySk = keys.providerKey(accountId, '').sk;
  const usagePk = keys.usageMonth(accountId, '').pk;
  for (const item of items) {
    if (item.sk === keySk) keyTotals.set(item.keyHash as string, readInt(item.totalCostMicros, 'totalCostMicros'));
    else if (item.pk === usagePk && typeof item.month === 'string') monthCosts.set(item.month, readInt(item.costMicros, 'costMicros'));
  }
  return { keyTotals, monthCosts };
}

/** Which of these request ids were counted before (their exactly-once items exist) — for honest answers at a limit. */
export async function countedBefore(accountId: string, requestIds: string[]): Promise<Set<string>> {
  if (requestIds.length === 0) return new Set();
  const items = await batchGet(requestIds.map((id) => keys.event(accountId, id)), 'pk');
  const byPk = new Map(requestIds.map((id) => [keys.event(accountId, id).pk, id]));
  return new Set(items.map((item) => byPk.get(item.pk as string)!));
}
