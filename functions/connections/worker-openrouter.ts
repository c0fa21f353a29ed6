import { openRouterKit } from '#shared/connections/kits/openrouter.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/** OpenRouter connections' syncs: the messages of its own queue (it bundles OpenRouter's client alone). */
export const handler = syncWorker({ openrouter: openRouterKit });
