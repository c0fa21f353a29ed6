/**
 * What runs around every sync, from the layers above connections (shared/connections/kit.ts `SyncHooks`):
 * - closed months: a past month every connection has settled closes by itself at the end of the sync
 *   (shared/months/service.ts `autoCloseMonths`);
 * - the limits phase, either in the same process right after the import (`inlineHooks`: the local stack's one
 *   worker, the tests and the benches, with every provider's lever: shared/sync/all.ts), or queued for the provider's
 *   limits function (`queuedLimitsHooks`: a connector worker in AWS, which so carries no lever and no enforcement:
 *   shared/sync/limits-queue.ts, shared/sync/limits.ts).
 */
import type { SyncHooks } from '#shared/connections/kit.ts';
import type { Provider } from '#shared/connections/model.ts';
import { logger } from '#shared/http/logger.ts';
import { autoCloseMonths } from '#shared/months/service.ts';
import { queueLimits } from '#shared/sync/limits-queue.ts';

const closesMonths: SyncHooks = {
  async afterSettle(accountId, now) {
    await autoCloseMonths(accountId, now);
  },
};

/**
 * The hooks of a connector worker of `provider` (the provider of the sync message: a deleted connection's release is
 * queued for it). After the import, the pass is queued, never run here: a message that cannot be queued is logged and
 * the next sync queues one again. A paused or deleted connection's release that cannot be queued throws, so the sync
 * message comes back (then goes to the DLQ).
 */
export function queuedLimitsHooks(provider: Provider): SyncHooks {
  return {
    ...closesMonths,
    async afterImport(conn, _adminKey, now, _http, grown) {
      try {
        await queueLimits({ accountId: conn.accountId, connectionId: conn.id, provider: conn.provider, at: now.toISOString(), grown: [...(grown ?? [])] });
      } catch (error) {
        logger.error('limits pass not queued', { connectionId: conn.id, reason: error instanceof Error ? error.message : String(error) });
      }
    },
    async released(accountId, connectionId, conn, now) {
      await queueLimits({ accountId, connectionId, provider: conn?.provider ?? provider, at: now.toISOString(), grown: [] });
    },
  };
}

/** The hooks of a sync that runs its limits phase itself, with these levers (shared/sync/all.ts). */
export function inlineHooks(limits: Pick<SyncHooks, 'afterImport' | 'released'>): SyncHooks {
  return { ...closesMonths, ...limits };
}
