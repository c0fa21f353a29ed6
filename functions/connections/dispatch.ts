import middy from '@middy/core';
import { injectLambdaContext, logger } from '#shared/http/logger.ts';
import { dispatchDue } from '#shared/connections/dispatch.ts';

/** Scheduled (EventBridge, every 15 minutes): one queue message per connection due (no Scan: the sparse due index). */
export const handler = middy(async () => ({ queued: await dispatchDue() })).use(injectLambdaContext(logger));
