/**
 * How Get started tells that an event arrived (pure, unit-tested in test/unit/first-event.test.ts).
 *
 * "An event arrived" means: a key's `lastSeenAt` (set by the server when it counts an event of that key, or when a
 * connection imports usage of it) is later than the latest one the account had when the screen opened. The screen
 * reads `GET /keys?sort=lastSeenAt&limit=…` once for the baseline (the most recently seen keys and their totals),
 * then `GET /keys?sort=lastSeenAt&limit=1` every 2 seconds. Server times only: the browser's clock plays no part, and
 * an account that already has keys and spend is told about the NEW event, not its old spend.
 *
 * The amount is what the key gained since the baseline: exact for a key of the baseline (its total then) and for a
 * key first seen after it (all of its total); for an older key outside the baseline it is unknown (null) and the
 * screen names the key without an amount.
 */
// The generated types directly (not through api/client.ts), so a unit test can import this without a browser.
import type { components } from '../../api/schema.d.ts';

type Key = Pick<components['schemas']['Key'], 'hash' | 'label' | 'name' | 'hint' | 'firstSeenAt' | 'lastSeenAt' | 'spend' | 'requests'>;

export interface Baseline {
  /** The latest `lastSeenAt` of the account's keys when watching began (null: the account had no key). */
  latest: string | null;
  /** Total spend (dollars) and requests of the keys read for the baseline, by hash. */
  totals: Map<string, { costUsd: number; requests: number }>;
}

export interface Arrival {
  key: Key;
  /** Dollars the key gained since the baseline (exact to the micro-dollar), or null when unknown. */
  costUsd: number | null;
  /** Requests the key gained since the baseline, or null when unknown. */
  requests: number | null;
  /** Whether the account had no key before: its very first event. */
  first: boolean;
}

/** The baseline from the most recently seen keys (newest first, as `sort=lastSeenAt` answers). */
export function baselineOf(keys: readonly Key[]): Baseline {
  return {
    latest: keys[0]?.lastSeenAt ?? null,
    totals: new Map(keys.map((k) => [k.hash, { costUsd: k.spend.total, requests: k.requests.total }])),
  };
}

/** Dollars as micro-dollars and back, so a difference of two API amounts is exact. */
const micros = (usd: number) => Math.round(usd * 1_000_000);

/** What arrived since the baseline, from the most recently seen key now; undefined while nothing did. */
export function arrivalOf(baseline: Baseline, latest: Key | undefined): Arrival | undefined {
  if (!latest || (baseline.latest !== null && latest.lastSeenAt <= baseline.latest)) return undefined;
  const before = baseline.totals.get(latest.hash);
  const newKey = baseline.latest === null || latest.firstSeenAt > baseline.latest;
  const first = baseline.latest === null;
  if (before) {
    return { key: latest, costUsd: (micros(latest.spend.total) - micros(before.costUsd)) / 1_000_000, requests: latest.requests.total - before.requests, first };
  }
  if (newKey) return { key: latest, costUsd: latest.spend.total, requests: latest.requests.total, first };
  return { key: latest, costUsd: null, requests: null, first };
}
