import { httpHandler, ok } from '#shared/http/handler.ts';

/** GET /health → 200 {"status":"ok"}. Locally the gateway listens only once every embedded service is ready. */
export const handler = httpHandler({ auth: 'none' }, async () => ok({ status: 'ok' }));
