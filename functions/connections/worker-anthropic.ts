import { anthropicKit } from '#shared/connections/kits/anthropic.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/**
 * Anthropic connections' syncs: the messages of its own queue (it bundles Anthropic's client alone). Each sync's limits
 * phase goes to the limits function (limits-anthropic.ts) on its FIFO queue.
 */
export const handler = syncWorker({ anthropic: anthropicKit });
