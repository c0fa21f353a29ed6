/**
 * A sync's limits phase: the connection's levers read back and pulled where a stop budget or a spend-anomaly rule
 * says so (shared/anomaly/), and released when the connection is paused or deleted. It runs with the connection's
 * admin key open, either in the process of the sync right after the import (`leverHooks`: the local stack, tests and
 * benches, shared/sync/all.ts) or in the provider's limits function a queue hop after it (shared/sync/limits.ts). A
 * connection that holds a stop budget at or past its alert threshold is due again in a minute.
 */
import { setConnectionFields, type Connection } from '#shared/db/connections.ts';
import { deleteReleaseJob, getReleaseJob, heldOn } from '#shared/db/enforcement.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { openSecret } from '#shared/connections/secrets.ts';
import type { SyncHooks } from '#shared/connections/kit.ts';
import { enforceForConnection } from '#shared/enforcement/service.ts';
import type { Lever, LeverFactory, LeverHttpOptions } from '#shared/enforcement/levers.ts';
import { providerBaseUrl } from '#shared/connections/endpoints.ts';
import { ProviderBadResponse } from '#shared/connections/http.ts';
import type { Provider } from '#shared/connections/model.ts';
import { listRules } from '#shared/db/rules.ts';
import { evaluateAnomalies, hasStoppingAnomalyRule } from '#shared/anomaly/service.ts';
import { logger } from '#shared/http/logger.ts';

/** How soon a connection near a stop budget's limit is synced again. */
export const HOT_SYNC_INTERVAL_MS = 60_000;

/** How soon a connection of an account with a spend-anomaly rule that stops keys is synced again (5 minutes in AWS, 1 locally). */
export const anomalySyncIntervalMs = (): number => Number(process.env.ANOMALY_SYNC_INTERVAL_MS || 5 * 60_000);

/** The levers a connector worker carries: its own provider's (shared/enforcement/levers.ts). */
export type LeverFactories = Partial<Record<Provider, LeverFactory>>;

function leverFor(levers: LeverFactories, provider: string, adminKey: string, options: LeverHttpOptions): Lever {
  const make = Object.hasOwn(levers, provider) ? levers[provider as Provider] : undefined;
  if (!make) throw new ProviderBadResponse(`Burnrate has no lever for ${provider}.`);
  return make(providerBaseUrl(provider as Provider), adminKey, options);
}

export async function enforceLimits(levers: LeverFactories, conn: Connection, adminKey: string, now: Date, http: ProviderHttpOptions | undefined, grown: ReadonlyMap<string, boolean> = new Map()): Promise<void> {
  const lever = leverFor(levers, conn.provider, adminKey, http?.fetch ? { fetch: http.fetch } : {});
  const rules = await listRules(conn.accountId);
  try {
    // Spend-anomaly rules first: a runaway key of this connection is stopped by the sync that sees its rate.
    await evaluateAnomalies(conn.accountId, [...grown].map(([keyHash, rated]) => ({ keyHash, rated })), { now, rules, connection: conn, lever });
  } catch (error) {
    // The budgets' pass still runs; the next sync evaluates again.
    logger.error('anomaly pass failed', error as Error);
  }
  // Enforcement turned off: every lever Burnrate holds there goes back (`connection_changed`).
  const pass = await enforceForConnection(conn.accountId, conn.id, lever, now, conn.enforcement !== 'on');
  const soonest = Math.min(pass.hot.has(conn.id) ? HOT_SYNC_INTERVAL_MS : Infinity, hasStoppingAnomalyRule(rules) ? anomalySyncIntervalMs() : Infinity);
  // The sync set its next one at the usual interval: sooner when a budget near its limit or a stopping rule asks for it.
  if (soonest !== Infinity) await setConnectionFields(conn, { nextSyncAt: new Date(now.getTime() + soonest).toISOString() });
}

/**
 * A paused or deleted connection: every lever Burnrate still holds on it goes back (`connection_changed`), with its
 * own admin key (a deleted one's, kept sealed in its release job until then). A refusal raises `enforcement_failed`
 * saying what stays stopped and how to undo it by hand; nothing is tried again.
 */
export async function releaseConnectionLevers(levers: LeverFactories, accountId: string, connectionId: string, conn: Connection | undefined, now: Date, http: ProviderHttpOptions | undefined): Promise<void> {
  const job = conn ? undefined : await getReleaseJob(accountId, connectionId);
  const source = conn ?? job;
  if (!source) return;
  if (await heldOn(accountId, connectionId)) {
    const adminKey = await openSecret(source.secret, { accountId, connectionId });
    await enforceForConnection(accountId, connectionId, leverFor(levers, source.provider, adminKey, http?.fetch ? { fetch: http.fetch } : {}), now, true);
  }
  if (job) await deleteReleaseJob(accountId, connectionId);
}

/** The levers around every sync: pulled after the import, released when the connection is paused or deleted. */
export function leverHooks(levers: LeverFactories): SyncHooks {
  return {
    afterImport: (...args) => enforceLimits(levers, ...args),
    released: (...args) => releaseConnectionLevers(levers, ...args),
  };
}
