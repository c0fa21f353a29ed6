import { syncWorker } from '#shared/sync/worker.ts';
import { ALL_HOOKS, ALL_KITS } from '#shared/sync/all.ts';

/**
 * Every provider's syncs (the local stack's one sync queue), each followed by its limits phase in the same process; in
 * AWS each provider has its own worker (worker-<provider>.ts) and limits function (limits-<provider>.ts).
 */
export const handler = syncWorker(ALL_KITS, () => ALL_HOOKS);
