/**
 * Plan limits at ingestion (pure): which events fit in what is left of the period's tracked requests and the
 * plan's key limit. The write's transaction re-checks both atomically (shared/db/usage-writes.ts), so racing
 * batches can never exceed a plan by even one event; this only decides who gets the room that is left.
 */
import type { PricedEvent, Rejection } from '#shared/ingest/events.ts';

export interface Room {
  /** Tracked requests left in the period. */
  requests: number;
  /** New keys the plan still allows. */
  newKeys: number;
  /** Keys that exist already (they never count against the key limit). */
  known: ReadonlySet<string>;
}

/** Earliest events (by their index in the batch) get the room; the rest are rejected with the limit's code. */
export function fitToLimits(events: readonly PricedEvent[], room: Room): { allowed: PricedEvent[]; refused: Rejection[] } {
  let requests = Math.max(0, room.requests);
  let newKeys = Math.max(0, room.newKeys);
  const admitted = new Set<string>();
  const blocked = new Set<string>();
  const allowed: PricedEvent[] = [];
  const refused: Rejection[] = [];
  for (const e of [...events].sort((a, b) => a.index - b.index)) {
    if (requests === 0) {
      refused.push({ index: e.index, code: 'plan_limit_reached', message: "The plan's tracked requests for this period are used up." });
      continue;
    }
    if (!room.known.has(e.keyHash) && !admitted.has(e.keyHash)) {
      if (newKeys > 0 && !blocked.has(e.keyHash)) {
        admitted.add(e.keyHash);
        newKeys -= 1;
      } else {
        blocked.add(e.keyHash);
        refused.push({ index: e.index, code: 'key_limit_reached', message: "A new key past the plan's key limit is not tracked." });
        continue;
      }
    }
    requests -= 1;
    allowed.push(e);
  }
  return { allowed, refused };
}
