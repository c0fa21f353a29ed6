import { openAiKit } from '#shared/connections/kits/openai.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/**
 * OpenAI connections' syncs: the messages of its own queue (it bundles OpenAI's client alone). Each sync's limits
 * phase goes to the limits function (limits-openai.ts) on its FIFO queue.
 */
export const handler = syncWorker({ openai: openAiKit });
