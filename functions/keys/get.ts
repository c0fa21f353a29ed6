import { httpHandler, ok } from '#shared/http/handler.ts';
import { KeyBreakdownQuery, KeyParams } from '#shared/keys/schemas.ts';
import { getKey } from '#shared/keys/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /keys/{hash}?from&to → 200 the key with its daily and per-model breakdown */
export const handler = httpHandler({ auth: jwtAuth, params: KeyParams, query: KeyBreakdownQuery }, async ({ auth, params, query }) =>
  ok(await getKey(auth.accountId, params.hash, query)),
);
