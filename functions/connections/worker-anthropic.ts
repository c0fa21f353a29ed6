import { anthropicKit } from '#shared/connections/kits/anthropic.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/** Anthropic connections' syncs: the messages of its own queue (it bundles Anthropic's client alone). */
export const handler = syncWorker({ anthropic: anthropicKit });
