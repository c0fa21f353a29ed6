/**
 * A sync's limits phase: the connection's levers after the import (shared/enforcement/), read back and pulled where a
 * stop budget or a spend-anomaly rule says so (shared/anomaly/: the keys whose today figure grew are compared with the
 * account's rules first, so a runaway key is stopped by the sync that sees it). Only during a sync is the admin key
 * open. A connection that holds a stop budget at or past its alert threshold is due again in a minute; one of an
 * account with a spend-anomaly rule that stops keys, within ANOMALY_SYNC_INTERVAL_MS (5 minutes in AWS, 1 locally).
 */
import { setConnectionFields, type Connection } from '#shared/db/connections.ts';
import { listRules } from '#shared/db/rules.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { enforceForConnection } from '#shared/enforcement/service.ts';
import { leverFor } from '#shared/enforcement/levers.ts';
import { evaluateAnomalies, hasStoppingAnomalyRule } from '#shared/anomaly/service.ts';
import { logger } from '#shared/http/logger.ts';

/** How soon a connection near a stop budget's limit is synced again. */
export const HOT_SYNC_INTERVAL_MS = 60_000;

/** How soon a connection of an account with a stopping spend-anomaly rule is synced again. */
export const anomalySyncIntervalMs = (): number => Number(process.env.ANOMALY_SYNC_INTERVAL_MS || 5 * 60_000);

/** `grown`: the keys whose today figure this sync saw grow, and whether an earlier sync saw each today (its rate exists). */
export async function enforceLimits(conn: Connection, adminKey: string, now: Date, http: ProviderHttpOptions | undefined, grown: ReadonlyMap<string, boolean> = new Map()): Promise<void> {
  const lever = leverFor(conn.provider, adminKey, http?.fetch ? { fetch: http.fetch } : {});
  const rules = await listRules(conn.accountId);
  try {
    await evaluateAnomalies(conn.accountId, [...grown].map(([keyHash, rated]) => ({ keyHash, rated })), { now, rules, connection: conn, lever });
  } catch (error) {
    // The budgets' pass still runs; the next sync evaluates again.
    logger.error('anomaly pass failed', error as Error);
  }
  // The budgets' and rules' holds (a released rule's key switched back on here, unless a budget holds it too).
  const pass = await enforceForConnection(conn.accountId, conn.id, lever, now);
  const intervals = [pass.hot.has(conn.id) ? HOT_SYNC_INTERVAL_MS : Infinity, hasStoppingAnomalyRule(rules) ? anomalySyncIntervalMs() : Infinity];
  const soonest = Math.min(...intervals);
  // The sync set its next one at the usual interval (finishInventory): sooner when a rule or budget asks for it.
  if (soonest !== Infinity) await setConnectionFields(conn, { nextSyncAt: new Date(now.getTime() + soonest).toISOString() });
}
