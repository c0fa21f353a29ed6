/** What runs around every sync from the layers above connections: the levers, and the months that close by themselves. */
import type { SyncHooks } from '#shared/connections/kit.ts';
import { leverHooks } from '#shared/enforcement/after-sync.ts';
import { autoCloseMonths } from '#shared/months/service.ts';

export const syncHooks: SyncHooks = { ...leverHooks, afterSettle: autoCloseMonths };
