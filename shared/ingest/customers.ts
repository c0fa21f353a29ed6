/**
 * The plan's limit of distinct customers a month (docs/features/tags-and-chargeback.md): a customer the month has not
 * seen yet is admitted while the month has room; past it, its events count under `(other customers)`. Pure.
 */
import type { PricedEvent } from '#shared/ingest/events.ts';
import { OTHER_CUSTOMERS } from '#shared/ingest/schemas.ts';

export function admitCustomers(
  events: readonly PricedEvent[],
  known: ReadonlySet<string>,
  counts: ReadonlyMap<string, number>,
  limit: number,
): { events: PricedEvent[]; added: Map<string, number>; refusedMonths: Set<string> } {
  const admitted = new Set<string>();
  const added = new Map<string, number>();
  const refusedMonths = new Set<string>();
  const out = [...events]
    .sort((a, b) => a.index - b.index)
    .map((e) => {
      if (e.customerId === undefined) return e;
      const month = e.date.slice(0, 7);
      const id = `${month}|${e.customerId}`;
      if (known.has(id) || admitted.has(id)) return e;
      const count = (counts.get(month) ?? 0) + (added.get(month) ?? 0);
      if (count < limit) {
        admitted.add(id);
        added.set(month, (added.get(month) ?? 0) + 1);
        return e;
      }
      refusedMonths.add(month);
      return { ...e, customerId: OTHER_CUSTOMERS };
    });
  return { events: out, added, refusedMonths };
}
