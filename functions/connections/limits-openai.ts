import { openAiLever } from '#shared/enforcement/levers.ts';
import { limitsWorker } from '#shared/sync/limits.ts';

/** OpenAI connections' limits passes, queued by their sync worker (FIFO, one message group per connection): OpenAI's lever alone. */
export const handler = limitsWorker({ openai: openAiLever });
