import { httpHandler, noContent } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { PriceParams } from '#shared/prices/schemas.ts';
import { deletePrice } from '#shared/prices/service.ts';

/** DELETE /prices/{provider}/{model} → 204 (back to the built-in price, or to unpriced); no own price: 404 */
export const handler = httpHandler({ auth: jwtAuth, params: PriceParams }, async ({ auth, params }) => {
  await deletePrice(auth.accountId, params);
  return noContent();
});
