/**
 * The money ceiling (pure): every spend aggregate stays at or below $9,000,000,000 (MONEY_CEILING_MICROS).
 *
 * The aggregates are a key's spend per day (and per day × model), month and in total, and the account's spend per
 * day and per month. Each of a key's is part of the key's total and the account's day is part of its month, so
 * two checks bound them all: the key's total and the account's month. An event that would take either past the
 * ceiling is rejected with `amount_out_of_range`. The write's transaction re-checks both atomically
 * (shared/db/usage-writes.ts), so racing batches cannot pass it either; this only decides which events fit.
 *
 * Why $9,000,000,000: 9×10^15 micro-dollars is below 2^53 (≈ 9.007×10^15), so every aggregate is a safe integer
 * of micro-dollars and its dollar value (at most 16 significant digits, 6 of them decimals) prints exactly as a
 * JSON number.
 */
import type { PricedEvent, Rejection } from '#shared/ingest/events.ts';
import { MONEY_CEILING_MICROS } from '#shared/usage/money.ts';
import type { CeilingRoom } from '#shared/db/ingest-context.ts';

export type { CeilingRoom };

export { MONEY_CEILING_MICROS };

export const outOfRange = (index: number): Rejection => ({
  index,
  code: 'amount_out_of_range',
  message: "costUsd: accepting it would take the key's total spend or the account's spend in its month past $9,000,000,000, the most Burnrate counts.",
});

/** Earliest events (by index) get the room; an event that does not fit is refused (later, smaller ones may still fit). */
export function fitToCeiling(events: readonly PricedEvent[], room: CeilingRoom): { allowed: PricedEvent[]; refused: Rejection[] } {
  const keyTotals = new Map(room.keyTotals);
  const monthCosts = new Map(room.monthCosts);
  const allowed: PricedEvent[] = [];
  const refused: Rejection[] = [];
  for (const e of [...events].sort((a, b) => a.index - b.index)) {
    const cost = BigInt(e.costMicros);
    const month = e.date.slice(0, 7);
    const key = (keyTotals.get(e.keyHash) ?? 0n) + cost;
    const account = (monthCosts.get(month) ?? 0n) + cost;
    if (key > MONEY_CEILING_MICROS || account > MONEY_CEILING_MICROS) {
      refused.push(outOfRange(e.index));
      continue;
    }
    keyTotals.set(e.keyHash, key);
    monthCosts.set(month, account);
    allowed.push(e);
  }
  return { allowed, refused };
}
