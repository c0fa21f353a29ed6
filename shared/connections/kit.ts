/**
 * What a sync needs of one provider (its client, and how far back the provider still reports), and what it hands to
 * the layers above it (the levers after the import, shared/sync/levers.ts): a connector worker bundles the
 * kit of its own provider only (shared/sync/), so it carries one provider's client.
 */
import type { Connection } from '#shared/db/connections.ts';
import type { Provider } from '#shared/connections/model.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import type { ProviderClient } from '#shared/connections/provider-client.ts';

export interface ProviderKit {
  readonly provider: Provider;
  /** `now`: the sync's clock (OpenRouter's client decides by it which UTC day is today). */
  client(adminKey: string, options: ProviderHttpOptions & { now?: () => Date }): ProviderClient;
  /** The oldest UTC day the provider still reports, seen on `today` (undefined: no such limit). */
  firstReadableDay(today: string): string | undefined;
}

/** What runs around a sync, from the layers above connections (closed months, the limits phase). */
export interface SyncHooks {
  /**
   * After the import, with the admin key open: the connection's limits phase (its levers read back and pulled), run
   * there or queued for the provider's limits function (shared/sync/hooks.ts). `grown`: the keys whose
   * today figure this sync saw grow, and whether an earlier sync saw each today (the spend-anomaly rate exists).
   */
  afterImport?(conn: Connection, adminKey: string, now: Date, http: ProviderHttpOptions | undefined, grown?: ReadonlyMap<string, boolean>): Promise<void>;
  /** After a sync that finished (its connection's settled days written): a past month every connection settled closes. */
  afterSettle?(accountId: string, now: Date): Promise<void>;
  /** A paused or deleted connection: the levers Burnrate holds there go back. */
  released?(accountId: string, connectionId: string, conn: Connection | undefined, now: Date, http: ProviderHttpOptions | undefined): Promise<void>;
}

export type ProviderKits = Partial<Record<Provider, ProviderKit>>;

/** The kit of `provider`, or an error naming what this worker syncs (a message routed to the wrong worker). */
export function kitOf(kits: ProviderKits, provider: Provider): ProviderKit {
  const kit = kits[provider];
  if (!kit) throw new Error(`This connector worker syncs ${Object.keys(kits).join(', ') || 'no provider'}, not ${provider}.`);
  return kit;
}
