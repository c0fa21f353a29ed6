import { openRouterKit } from '#shared/connections/kits/openrouter.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/**
 * OpenRouter connections' syncs: the messages of its own queue (it bundles OpenRouter's client alone). Each sync's limits
 * phase goes to the limits function (limits-openrouter.ts) on its FIFO queue.
 */
export const handler = syncWorker({ openrouter: openRouterKit });
