import { syncWorker } from '#shared/sync/worker.ts';
import { ALL_KITS, ALL_LEVERS } from '#shared/sync/all.ts';

/** Every provider's syncs (the local stack's one sync queue); in AWS each provider has its own worker (worker-<provider>.ts). */
export const handler = syncWorker(ALL_KITS, ALL_LEVERS);
