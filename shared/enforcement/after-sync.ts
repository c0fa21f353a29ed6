/**
 * A sync's limits phase (the sync's hooks, shared/connections/kit.ts `SyncHooks`): the connection's levers after the
 * import, read back and pulled where a stop budget says so. Only during a sync is the admin key open. A connection that holds a stop budget at or past its
 * alert threshold is due again in a minute.
 */
import { setConnectionFields, type Connection } from '#shared/db/connections.ts';
import { deleteReleaseJob, getReleaseJob, heldOn } from '#shared/db/enforcement.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { openSecret } from '#shared/connections/secrets.ts';
import type { SyncHooks } from '#shared/connections/kit.ts';
import { enforceForConnection } from '#shared/enforcement/service.ts';
import { leverFor } from '#shared/enforcement/levers.ts';

/** How soon a connection near a stop budget's limit is synced again. */
export const HOT_SYNC_INTERVAL_MS = 60_000;

export async function enforceLimits(conn: Connection, adminKey: string, now: Date, http: ProviderHttpOptions | undefined): Promise<void> {
  // Enforcement turned off: every lever Burnrate holds there goes back (`connection_changed`).
  const pass = await enforceForConnection(conn.accountId, conn.id, leverFor(conn.provider, adminKey, http?.fetch ? { fetch: http.fetch } : {}), now, conn.enforcement !== 'on');
  if (pass.hot.has(conn.id)) await setConnectionFields(conn, { nextSyncAt: new Date(now.getTime() + HOT_SYNC_INTERVAL_MS).toISOString() });
}

/**
 * A paused or deleted connection: every lever Burnrate still holds on it goes back (`connection_changed`), with its
 * own admin key (a deleted one's, kept sealed in its release job until then). A refusal raises `enforcement_failed`
 * saying what stays stopped and how to undo it by hand; nothing is tried again.
 */
export async function releaseConnectionLevers(accountId: string, connectionId: string, conn: Connection | undefined, now: Date, http: ProviderHttpOptions | undefined): Promise<void> {
  const job = conn ? undefined : await getReleaseJob(accountId, connectionId);
  const source = conn ?? job;
  if (!source) return;
  if (await heldOn(accountId, connectionId)) {
    const adminKey = await openSecret(source.secret, { accountId, connectionId });
    await enforceForConnection(accountId, connectionId, leverFor(source.provider, adminKey, http?.fetch ? { fetch: http.fetch } : {}), now, true);
  }
  if (job) await deleteReleaseJob(accountId, connectionId);
}

/** The levers around every sync: pulled after the import, released when the connection is paused or deleted. */
export const leverHooks: SyncHooks = { afterImport: enforceLimits, released: releaseConnectionLevers };
