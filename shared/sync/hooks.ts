/**
 * What runs around every sync, from the layers above connections (shared/connections/kit.ts `SyncHooks`): the
 * enforcement levers (shared/sync/levers.ts) of the providers given, and closed months: a past month every connection has settled
 * closes by itself at the end of the sync (shared/months/service.ts `autoCloseMonths`).
 */
import type { SyncHooks } from '#shared/connections/kit.ts';
import { leverHooks, type LeverFactories } from '#shared/sync/levers.ts';
import { autoCloseMonths } from '#shared/months/service.ts';

/** The hooks of a sync with these providers' levers (a connector worker: its own provider's). */
export function syncHooks(levers: LeverFactories): SyncHooks {
  return {
    ...leverHooks(levers),
    async afterSettle(accountId, now) {
      await autoCloseMonths(accountId, now);
    },
  };
}
