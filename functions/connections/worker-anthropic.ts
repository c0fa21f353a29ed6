import { anthropicKit } from '#shared/connections/kits/anthropic.ts';
import { anthropicLever } from '#shared/enforcement/levers.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/** Anthropic connections' syncs: the messages of its own queue (it bundles Anthropic's client and lever alone). */
export const handler = syncWorker({ anthropic: anthropicKit }, { anthropic: anthropicLever });
