import { openRouterKit } from '#shared/connections/kits/openrouter.ts';
import { openRouterLever } from '#shared/enforcement/levers.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/** OpenRouter connections' syncs: the messages of its own queue (it bundles OpenRouter's client and lever alone). */
export const handler = syncWorker({ openrouter: openRouterKit }, { openrouter: openRouterLever });
