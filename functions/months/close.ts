import { httpHandler, ok } from '#shared/http/handler.ts';
import { CloseMonthBody, MonthParams } from '#shared/months/schemas.ts';
import { closeMonth } from '#shared/months/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /months/{month}/close {force?} (admin) → 200 the closed month; 409 for the current month, a closed one, or unsettled days without force. */
export const handler = httpHandler({ auth: jwtAuth, params: MonthParams, body: CloseMonthBody, optionalBody: true }, async ({ auth, params, body }) =>
  ok(await closeMonth(auth.accountId, params.month, auth.userId, body)),
);
