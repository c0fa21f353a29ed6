/**
 * What runs around every sync, from the layers above connections (shared/connections/kit.ts `SyncHooks`): the
 * enforcement levers (shared/enforcement/after-sync.ts), and closed months: a past month every connection has settled
 * closes by itself at the end of the sync (shared/months/service.ts `autoCloseMonths`).
 */
import type { SyncHooks } from '#shared/connections/kit.ts';
import { leverHooks } from '#shared/enforcement/after-sync.ts';
import { autoCloseMonths } from '#shared/months/service.ts';

export const syncHooks: SyncHooks = {
  ...leverHooks,
  async afterSettle(accountId, now) {
    await autoCloseMonths(accountId, now);
  },
};
