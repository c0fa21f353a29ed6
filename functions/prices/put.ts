import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { PriceParams, PutPriceBody } from '#shared/prices/schemas.ts';
import { putPrice } from '#shared/prices/service.ts';

/** PUT /prices/{provider}/{model} {input, cachedInput?, output} → 200 the price (at most 200 own prices: 409) */
export const handler = httpHandler({ auth: jwtAuth, params: PriceParams, body: PutPriceBody }, async ({ auth, params, body }) =>
  ok(await putPrice(auth.accountId, params, body)),
);
