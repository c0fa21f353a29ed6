import { httpHandler, ok } from '#shared/http/handler.ts';
import { ListKeysQuery } from '#shared/keys/schemas.ts';
import { listKeys } from '#shared/keys/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /keys?limit&cursor → 200 {items, nextCursor}, most month-to-date spend first */
export const handler = httpHandler({ auth: jwtAuth, query: ListKeysQuery }, async ({ auth, query }) => ok(await listKeys(auth.accountId, query)));
