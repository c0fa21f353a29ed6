import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { listPrices } from '#shared/prices/service.ts';

/** GET /prices → 200 the built-in prices with the account's own over them */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await listPrices(auth.accountId)));
