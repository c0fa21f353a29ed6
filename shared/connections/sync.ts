/**
 * One sync of one connection (docs/features/connections.md): under the connection's lease and
 * its guard (sync-guard.ts), the phases in order:
 * 1. inventory: the provider's key inventory;
 * 2. usage and 3. settlement, slice by slice of UTC days: each slice's usage diffed against the import snapshot and
 *    its differences written, then the days the provider has billed moved to the bill (phases/run.ts). A slice
 *    finished is a cursor saved: a backfill that runs out of time resumes there with the next run;
 * then the keys without usage, changed or deleted (inventory), and the connection's new state;
 * then a past month every connection has settled closes by itself (shared/months/);
 * 4. evaluation: what alerts may follow (plan limits, spend, new keys, unpriced models), queued for the evaluation
 *    function (phases/evaluation.ts), which raises them;
 * 5. limits: the enforcement levers read back and pulled (the `afterImport` hook: in AWS queued for the provider's
 *    limits function, shared/sync/limits.ts; locally run right here, shared/sync/levers.ts).
 * The provider's client comes from the kit the caller hands in (shared/connections/kit.ts): a connector worker carries
 * one provider's kit (shared/sync/), so it bundles one client.
 */
import { randomUUID } from 'node:crypto';
import { inheritProjectTags } from '#shared/tags/service.ts';
import { acquireLease, getConnection, releaseLease, syncAfterLease, type Connection } from '#shared/db/connections.ts';
import { queueSync } from '#shared/connections/queue.ts';
import { logger } from '#shared/http/logger.ts';
import { addDays } from '#shared/time/periods.ts';
import { kitOf, type ProviderKits, type SyncHooks } from '#shared/connections/kit.ts';
import { providerName, raiseConnectionErrorAlert } from '#shared/connections/alerts.ts';
import { ProviderBadResponse, ProviderRefused, ProviderUnavailable, type ProviderHttpOptions } from '#shared/connections/http.ts';
import { openSecret } from '#shared/connections/secrets.ts';
import { organizationAfterSync } from '#shared/connections/organization.ts';
import { SyncGuard, SyncStopped } from '#shared/connections/sync-guard.ts';
import { clampPlan, limitDetail, readPlan } from '#shared/connections/sync-plan.ts';
import { Importer, loadContext, type ImportContext, type SyncResult } from '#shared/connections/phases/run.ts';
import { queueSyncEvaluation } from '#shared/connections/phases/evaluation.ts';

export type { SyncResult } from '#shared/connections/phases/run.ts';
export { connectionKeyHash, keyAttributes, lastSeenWith, UNATTRIBUTED_NAME } from '#shared/connections/sync-keys.ts';
export { clampPlan, firstDayToRead, limitDetail, readPlan, REREAD_DAYS } from '#shared/connections/sync-plan.ts';
export { reconDayItems, snapshotCellItems } from '#shared/db/import-snapshot.ts';

export interface SyncOptions {
  now?: Date;
  /** Stop starting new slices after this many ms (the cursor keeps the place). @default 240000 */
  budgetMs?: number;
  /** Days per slice (one request sequence per slice). @default 7 */
  sliceDays?: number;
  /** How long the lease holds. @default 300000 */
  leaseMs?: number;
  /** The interval to the next scheduled sync. @default env CONNECTOR_SYNC_INTERVAL_MS, else 15 minutes */
  intervalMs?: number;
  http?: ProviderHttpOptions;
  /** The providers this caller syncs (a connection of another provider is an error): shared/sync/. */
  kits: ProviderKits;
  /** What runs around the sync from the layers above (the enforcement levers). */
  hooks?: SyncHooks;
  /**
   * Another sync holds the lease: `queue` (default) has that sync run one more right after it — a request is never
   * dropped; `skip` answers `busy` only (a caller that polls until the lease is free, as tests do).
   */
  whenBusy?: 'queue' | 'skip';
}

/** How far back every sync reads the providers' bills again (OpenRouter: the 30 days it keeps). */
export const BILL_REREAD_DAYS = 35;

export const syncIntervalMs = (): number => Number(process.env.CONNECTOR_SYNC_INTERVAL_MS || 15 * 60_000);

const empty = (status: SyncResult['status']): SyncResult => ({ status, cellsChanged: 0, settleCellsChanged: 0, transactions: 0, keysCreated: 0, keysUpdated: 0, limitsReached: [] });

/** One sync's fixed facts: the connection under the lease, its guard, when it started and when it is due again. */
interface SyncRun {
  conn: Connection;
  guard: SyncGuard;
  now: Date;
  /** `now` as stored (`lastSyncAt`). */
  at: string;
  nextSyncAt: string;
  /** Wall clock at the start (the time budget). */
  started: number;
  options: SyncOptions;
}

export async function syncConnection(accountId: string, connectionId: string, options: SyncOptions): Promise<SyncResult> {
  const now = options.now ?? new Date();
  const started = Date.now();
  const first = await getConnection(accountId, connectionId, true);
  if (!first || first.status === 'paused') {
    // Paused or deleted: nothing is imported, and the levers Burnrate holds there go back.
    await options.hooks?.released?.(accountId, connectionId, first, now, options.http);
    return empty('skipped');
  }
  const owner = randomUUID();
  // Another sync holds the lease: it runs this one right after it (the request is never dropped); or, when the lease
  // went meanwhile, this one takes it.
  let leased = await acquireLease(accountId, connectionId, owner, now, options.leaseMs ?? 300_000);
  for (let attempt = 0; !leased && options.whenBusy !== 'skip' && attempt < 3; attempt++) {
    if (await syncAfterLease(accountId, connectionId, new Date())) return empty('busy');
    leased = await acquireLease(accountId, connectionId, owner, now, options.leaseMs ?? 300_000);
  }
  if (!leased) return empty('busy');
  try {
    // Every write to the connection is conditioned on it being unpaused at the version read under the lease (another
    // sync may have finished between the first read and the lease); every provider request (and slice) first checks
    // that it still is: a pause or DELETE stops the sync within one request.
    const conn = await getConnection(accountId, connectionId, true);
    if (!conn || conn.status === 'paused') return empty('skipped');
    const run: SyncRun = {
      conn,
      guard: new SyncGuard(conn),
      now,
      at: now.toISOString(),
      nextSyncAt: new Date(now.getTime() + (options.intervalMs ?? syncIntervalMs())).toISOString(),
      started,
      options,
    };
    const ctx = await loadContext(accountId, now);
    if (!ctx) return empty('skipped');
    return await runPhases(run, ctx);
  } catch (error) {
    // Stopped while writing a fault: nothing more is written to a connection paused, deleted or changed meanwhile.
    if (error instanceof SyncStopped) return empty('stopped');
    throw error;
  } finally {
    if (await releaseLease(accountId, connectionId, owner)) await queueSync({ accountId, connectionId, provider: first.provider });
  }
}

/** The phases in order; a provider's refusal or outage ends them with the connection's state saying so. */
async function runPhases(run: SyncRun, ctx: ImportContext): Promise<SyncResult> {
  const { conn, guard, now } = run;
  let importer: Importer | undefined;
  try {
    const adminKey = await openSecret(conn.secret, { accountId: conn.accountId, connectionId: conn.id });
    const http = { ...run.options.http, beforeRequest: () => guard.check(), now: () => now };
    importer = new Importer(conn, kitOf(run.options.kits, conn.provider).client(adminKey, http), ctx, now);
    await importer.readInventory();
    if (!(await importDays(run, importer, ctx.chunkContext.today))) return { ...importer.result, status: 'partial' };
    const reached = await finishInventory(run, importer, ctx);
    // A past month every connection has now settled closes by itself (docs/features/spend-and-exports.md "Closed months").
    await run.options.hooks?.afterSettle?.(conn.accountId, now);
    await queueSyncEvaluation(conn, importer, reached, now);
    await run.options.hooks?.afterImport?.(conn, adminKey, now, run.options.http, importer.grown);
    return { ...importer.result, limitsReached: reached };
  } catch (error) {
    return await recordFault(run, error, importer?.result ?? empty('skipped'));
  }
}

/**
 * Usage and settlement, slice by slice: the recent days, then the backfill newest first. False when the time budget
 * ran out mid-backfill: the connection keeps its place (`backfillTo`) and is due again now.
 */
async function importDays(run: SyncRun, importer: Importer, today: string): Promise<boolean> {
  const { conn, guard, options } = run;
  const plan = clampPlan(readPlan(conn, today, options.sliceDays ?? 7), kitOf(options.kits, conn.provider).firstReadableDay(today));
  const importSlice = async (from: string, to: string) => {
    await guard.check();
    const slice = await importer.importUsage(from, to);
    await importer.settle(slice);
  };
  for (const [from, to] of plan.recent) await importSlice(from, to);
  if (plan.backfill.length === 0 && plan.recent.length > 0) await rereadBills(run, importer, today, plan.recent[0]![0]);
  for (let i = 0; i < plan.backfill.length; i++) {
    const [from, to] = plan.backfill[i]!;
    await importSlice(from, to);
    if (i + 1 === plan.backfill.length) break;
    const backfillTo = addDays(from, -1);
    if (Date.now() - run.started > (options.budgetMs ?? 240_000)) {
      // Out of time mid-backfill: the next run (due now) goes on with the days before `from`.
      await guard.write({ backfillTo, unsettledDays: importer.unsettledDays(conn.unsettledDays), lastSyncAt: run.at, nextSyncAt: run.at, updatedAt: guard.nextUpdatedAt() });
      return false;
    }
    await guard.write({ backfillTo });
  }
  return true;
}

/**
 * The bills of the last {@link BILL_REREAD_DAYS} days before the recent days read again (docs/features/spend-and-exports.md
 * "Closed months"): a revision is found, and on a closed month's day booked as a correction. OpenRouter's bill is its
 * keys' activity, read once per sync whatever the days: its days are read whole (usage and bill) for the 30 it keeps.
 */
async function rereadBills(run: SyncRun, importer: Importer, today: string, recentFrom: string): Promise<void> {
  const { conn, guard, options } = run;
  const oldest = kitOf(options.kits, conn.provider).firstReadableDay(today);
  let from = addDays(today, -BILL_REREAD_DAYS);
  if (oldest !== undefined && from < oldest) from = oldest;
  if (from < conn.importedFrom) from = conn.importedFrom;
  const to = addDays(recentFrom, -1);
  const size = options.sliceDays ?? 7;
  for (let start = from; start <= to; start = addDays(start, size)) {
    const end = addDays(start, size - 1) < to ? addDays(start, size - 1) : to;
    await guard.check();
    if (conn.provider === 'openrouter') await importer.settle(await importer.importUsage(start, end));
    else await importer.rereadBills(start, end);
  }
}

/** The keys without usage, changed or deleted, the keys past the key limit, and the connection's state after the import. */
async function finishInventory(run: SyncRun, importer: Importer, ctx: ImportContext) {
  const { conn, guard } = run;
  await importer.reconcileKeys();
  const untrackedKeys = await importer.listUntracked();
  // Keys discovered in a tagged project (or moved to another) take its tags now, before budgets look at them.
  await inheritProjectTags(conn.accountId, conn.id, ctx.knownKeys.values());
  const reached = importer.reached;
  // What the organization is known by (a rotation is proven by it), with the keys and projects listed now.
  const organization = organizationAfterSync(conn.provider, conn.organization, importer.listedKeys);
  await guard.write({
    ...(organization ? { organization } : {}),
    status: 'active',
    statusDetail: reached.length > 0 ? limitDetail(reached, ctx.limits) : null,
    // Usage a limit held back is read again from its first day by the next sync (imported once there is room).
    cursor: importer.earliestRefused ?? null,
    backfillTo: null,
    untrackedKeys,
    requestsHeldFrom: importer.requestsHeldFrom ?? null,
    requestsHeldTo: importer.requestsHeldTo ?? null,
    unsettledDays: importer.unsettledDays(conn.unsettledDays),
    lastSyncAt: run.at,
    lastSuccessAt: run.at,
    nextSyncAt: run.nextSyncAt,
    updatedAt: guard.nextUpdatedAt(),
  });
  return reached;
}

/** A sync that ended early: what the connection says about it (refused key, provider outage); what was imported stays. */
async function recordFault(run: SyncRun, error: unknown, partial: SyncResult): Promise<SyncResult> {
  const { conn, guard, at, nextSyncAt, now } = run;
  if (error instanceof SyncStopped) return { ...partial, status: 'stopped' };
  if (error instanceof ProviderRefused) {
    const detail = `${providerName(conn.provider)} refused the admin key (${error.status}): ${error.providerMessage}. Create a new ${conn.provider === 'openrouter' ? 'management' : 'admin'} key and rotate it here, or check that it was not revoked.`;
    await guard.write({ status: 'error', statusDetail: detail, lastSyncAt: at, nextSyncAt, updatedAt: guard.nextUpdatedAt() });
    await raiseConnectionErrorAlert(conn, detail, now);
    return { ...partial, status: 'refused' };
  }
  if (error instanceof ProviderUnavailable || error instanceof ProviderBadResponse) {
    logger.warn('connection sync failed', { connectionId: conn.id, provider: conn.provider, reason: error.message });
    await guard.write({
      // The provider by its name: `… could not finish: OpenAI answered 503: …`.
      statusDetail: `The last sync could not finish: ${error.message.replace(/^The provider\b/, providerName(conn.provider))} What was imported stays; the next sync fetches the rest.`,
      lastSyncAt: at,
      nextSyncAt,
      updatedAt: guard.nextUpdatedAt(),
    });
    return { ...partial, status: 'unavailable' };
  }
  throw error;
}
