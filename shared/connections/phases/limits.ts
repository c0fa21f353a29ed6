/**
 * A sync's limits phase: the connection's levers after the import (shared/enforcement/), read back and pulled where a
 * stop budget says so. Only during a sync is the admin key open. A connection that holds a stop budget at or past its
 * alert threshold is due again in a minute.
 */
import { setConnectionFields, type Connection } from '#shared/db/connections.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { enforceForConnection } from '#shared/enforcement/service.ts';
import { leverFor } from '#shared/enforcement/levers.ts';

/** How soon a connection near a stop budget's limit is synced again. */
export const HOT_SYNC_INTERVAL_MS = 60_000;

export async function enforceLimits(conn: Connection, adminKey: string, now: Date, http: ProviderHttpOptions | undefined): Promise<void> {
  const pass = await enforceForConnection(conn.accountId, conn.id, leverFor(conn.provider, adminKey, http?.fetch ? { fetch: http.fetch } : {}), now);
  if (pass.hot.has(conn.id)) await setConnectionFields(conn, { nextSyncAt: new Date(now.getTime() + HOT_SYNC_INTERVAL_MS).toISOString() });
}
