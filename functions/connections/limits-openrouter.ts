import { openRouterLever } from '#shared/enforcement/levers.ts';
import { limitsWorker } from '#shared/sync/limits.ts';

/** OpenRouter connections' limits passes, queued by their sync worker (FIFO, one message group per connection): OpenRouter's lever alone. */
export const handler = limitsWorker({ openrouter: openRouterLever });
