import { openAiKit } from '#shared/connections/kits/openai.ts';
import { openAiLever } from '#shared/enforcement/levers.ts';
import { syncWorker } from '#shared/sync/worker.ts';

/** OpenAI connections' syncs: the messages of its own queue (it bundles OpenAI's client and lever alone). */
export const handler = syncWorker({ openai: openAiKit }, { openai: openAiLever });
