/** Exact sums of aggregate items (BigInt: a range's tokens can pass 2^53) and their API view. Pure. */
import type { Item } from '#shared/db/client.ts';
import type { Sums } from '#shared/usage/aggregates.ts';
import { readInt } from '#shared/db/numbers.ts';
import { microsToUsd } from '#shared/pricing/money.ts';

/** A range's sums: the aggregate model's `Sums` (`unpricedRequests` is not shown in totalsView: the coverage's `unpriced` note counts them). */
export type Totals = Sums;

export const zero = (): Totals => ({ costMicros: 0n, requests: 0n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n, unpricedRequests: 0n });

export function addItem(t: Totals, item: Item): void {
  t.costMicros += readInt(item.costMicros, 'an amount of micro-dollars');
  t.requests += readInt(item.requests, 'requests');
  t.inputTokens += readInt(item.inputTokens, 'inputTokens');
  t.cachedInputTokens += readInt(item.cachedInputTokens, 'cachedInputTokens');
  t.outputTokens += readInt(item.outputTokens, 'outputTokens');
  t.unpricedRequests += readInt(item.unpricedRequests, 'unpricedRequests');
}

export function addTotals(t: Totals, other: Totals): void {
  t.costMicros += other.costMicros;
  t.requests += other.requests;
  t.inputTokens += other.inputTokens;
  t.cachedInputTokens += other.cachedInputTokens;
  t.outputTokens += other.outputTokens;
  t.unpricedRequests += other.unpricedRequests;
}

export const totalsView = (t: Totals) => ({
  costUsd: microsToUsd(t.costMicros),
  requests: Number(t.requests),
  inputTokens: Number(t.inputTokens),
  cachedInputTokens: Number(t.cachedInputTokens),
  outputTokens: Number(t.outputTokens),
});

const compare = (a: bigint, b: bigint) => (a > b ? 1 : a < b ? -1 : 0);
/** Most cost first, then most requests, then by `id` (a total order). */
export const byCost = <T extends { totals: Totals; id: string }>(a: T, b: T) =>
  compare(b.totals.costMicros, a.totals.costMicros) || compare(b.totals.requests, a.totals.requests) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
