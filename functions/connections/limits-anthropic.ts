import { anthropicLever } from '#shared/enforcement/levers.ts';
import { limitsWorker } from '#shared/sync/limits.ts';

/** Anthropic connections' limits passes, queued by their sync worker (FIFO, one message group per connection): Anthropic's lever alone. */
export const handler = limitsWorker({ anthropic: anthropicLever });
