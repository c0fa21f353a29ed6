import { httpHandler, noContent } from '#shared/http/handler.ts';
import { BudgetParams } from '#shared/budgets/schemas.ts';
import { deleteBudget } from '#shared/budgets/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** DELETE /budgets/{id} → 204. Unknown or another account's id: 404. */
export const handler = httpHandler({ auth: jwtAuth, params: BudgetParams }, async ({ auth, params }) => {
  await deleteBudget(auth.accountId, params.id);
  return noContent();
});
