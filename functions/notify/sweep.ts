import middy from '@middy/core';
import { injectLambdaContext, logger } from '#shared/http/logger.ts';
import { sweepUndelivered } from '#shared/notify/sweep.ts';

/** Scheduled (EventBridge, every 5 minutes): re-queues alerts whose channels are still undelivered. */
export const handler = middy(async () => ({ requeued: await sweepUndelivered() })).use(injectLambdaContext(logger));
