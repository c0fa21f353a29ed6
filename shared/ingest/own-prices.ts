/**
 * An account's own prices in ingestion (pure): which price items to read with the ingest context, and the events
 * repriced with them. Lookup order for an event without `costUsd`: the account's price of the exact model, the
 * account's price of its family (a dated name: `gpt-4o-2024-08-06` → `gpt-4o`), then the built-in table (already
 * applied by priceEvent). The lookup itself is shared/pricing's `resolvePrice`, which the connections sync uses too.
 */
import type { PricedEvent } from '#shared/ingest/events.ts';
import { familyOf, isExact, priceId, priceUsage, type OwnPriceLookup } from '#shared/pricing/pricing.ts';

export { priceId, type OwnPriceLookup };

/**
 * The (provider, model) names whose own price may apply to these events (or a connection's usage rows): each model
 * and its family. Items with a given cost (`costGiven`) need none.
 */
export function ownPriceNames(events: readonly { provider: string; model: string; costGiven?: true }[]): { provider: string; model: string }[] {
  const names = new Map<string, { provider: string; model: string }>();
  for (const e of events) {
    if (e.costGiven) continue;
    names.set(priceId(e.provider, e.model), { provider: e.provider, model: e.model });
    const family = familyOf(e.provider, e.model);
    if (family !== undefined) names.set(priceId(e.provider, family), { provider: e.provider, model: family });
  }
  return [...names.values()];
}

/** The events with own prices applied (an event with `costUsd` keeps it). */
export function applyOwnPrices(events: PricedEvent[], prices: OwnPriceLookup): PricedEvent[] {
  if (prices.size === 0) return events;
  return events.map((e) => {
    if (e.costGiven) return e;
    const cost = priceUsage(e, prices); // without an own price: the built-in price priceEvent applied already
    return { ...e, costMicros: cost.costMicros, priced: isExact(cost) };
  });
}
