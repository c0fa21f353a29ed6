import { openAiKit } from '#shared/connections/kits/openai.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/** OpenAI connections' syncs: the messages of its own queue (it bundles OpenAI's client alone). */
export const handler = syncWorker({ openai: openAiKit });
