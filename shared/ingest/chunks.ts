/**
 * Plans how a batch of priced events is written: pre-summed aggregates, split into transactions of ≤ 100 actions.
 * Pure. Events are sorted by (key, day, model) first, so a chunk touches few aggregate items and most of its
 * actions are the events' own exactly-once items.
 */
import type { PricedEvent } from '#shared/ingest/events.ts';
import {
  addContribution,
  aggregateActionCount,
  bookedDay,
  contributionCost,
  emptyAggregates,
  kdmId,
  pastMonthsOf,
  zeroSums,
  type Aggregates,
  type ChunkContext,
  type Sums,
} from '#shared/usage/aggregates.ts';
import type { Chunk } from '#shared/db/usage-writes.ts';

export type { Chunk };

/** The aggregate model lives in shared/usage/aggregates.ts; its names stay available here for ingestion's callers. */
export {
  addContribution,
  aggregateActionCount,
  contributionCost,
  emptyAggregates,
  keyUpdateOf,
  zeroSums,
  type Aggregate,
  type Aggregates,
  type ChunkContext,
  type Contribution,
  type KeyDayModel,
  type KeyUpdate,
  type Sums,
} from '#shared/usage/aggregates.ts';

import { priceLines } from '#shared/pricing/pricing.ts';
import { MAX_ACTIONS } from '#shared/usage/aggregates.ts';

export { MAX_ACTIONS };

function add(sums: Sums, e: PricedEvent): void {
  sums.costMicros += BigInt(e.costMicros);
  sums.requests += 1n;
  sums.inputTokens += BigInt(e.inputTokens);
  sums.cachedInputTokens += BigInt(e.cachedInputTokens);
  sums.outputTokens += BigInt(e.outputTokens);
  if (!e.priced) sums.unpricedRequests += 1n;
}

/** Actions a chunk's transaction holds: events + aggregates + the plan-usage counter + the account (if keys are new). */
export function actionCount(chunk: Chunk): number {
  return chunk.events.length + aggregateActionCount(chunk) + 1 + (chunk.newKeys > 0 ? 1 : 0);
}

function emptyChunk(): Chunk {
  return { events: [], ...emptyAggregates() };
}

/** Actions that adding `e` would add to `chunk`. */
const cost = (chunk: Chunk, e: PricedEvent, ctx: ChunkContext): number => 1 + contributionCost(chunk, e, ctx);

/** One event's counts: one request, its tokens and cost (unpriced when its model has no price). */
function eventSums(e: PricedEvent): Sums {
  const sums = zeroSums();
  add(sums, e);
  return sums;
}

/** An event's price-line quantities (shared/pricing/lines.ts), its context window as the table decides it. */
function eventLines(e: PricedEvent): Map<string, bigint> {
  return new Map(priceLines(e).map((l) => [l.id, l.quantity]));
}

function addEvent(chunk: Chunk, e: PricedEvent, ctx: ChunkContext): void {
  chunk.events.push(e);
  addContribution(
    chunk,
    {
      keyHash: e.keyHash,
      // An event of a closed month's day is booked today, as a correction of that day (the closed month never changes).
      ...bookedDay(e.date, ctx),
      provider: e.provider,
      model: e.model,
      keyHint: e.keyHint,
      sums: eventSums(e),
      lines: eventLines(e),
      ...(e.customerId !== undefined ? { customerId: e.customerId } : {}),
      ...(e.feature !== undefined ? { feature: e.feature } : {}),
      at: e.timestamp,
    },
    ctx,
  );
}

/** Guards a chunk's transaction holds besides its actions: one per past month it writes (shared/db/usage-writes.ts `openMonthGuards`). */
const guards = (chunk: Chunk, e: PricedEvent, ctx: ChunkContext): number => {
  const month = bookedDay(e.date, ctx).date.slice(0, 7);
  return pastMonthsOf(chunk, ctx).length + (month < ctx.month && !chunk.months.has(month) ? 1 : 0);
};

const order = (a: PricedEvent, b: PricedEvent) => (kdmId(a) < kdmId(b) ? -1 : kdmId(a) > kdmId(b) ? 1 : a.index - b.index);

/** Splits events into chunks of at most MAX_ACTIONS actions each, with their pre-summed aggregates. */
export function planChunks(events: readonly PricedEvent[], ctx: ChunkContext): Chunk[] {
  const chunks: Chunk[] = [];
  let chunk = emptyChunk();
  for (const e of [...events].sort(order)) {
    if (chunk.events.length > 0 && actionCount(chunk) + cost(chunk, e, ctx) + guards(chunk, e, ctx) > MAX_ACTIONS) {
      chunks.push(chunk);
      chunk = emptyChunk();
    }
    addEvent(chunk, e, ctx);
  }
  if (chunk.events.length > 0) chunks.push(chunk);
  return chunks;
}
