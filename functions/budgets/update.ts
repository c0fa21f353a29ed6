import { httpHandler, ok } from '#shared/http/handler.ts';
import { BudgetParams, PatchBudgetBody } from '#shared/budgets/schemas.ts';
import { updateBudget } from '#shared/budgets/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** PATCH /budgets/{id} {fields to update} → 200 the budget. Unknown or another account's id: 404; a concurrent edit: 409. */
export const handler = httpHandler({ auth: jwtAuth, params: BudgetParams, body: PatchBudgetBody }, async ({ auth, params, body }) =>
  ok(await updateBudget(auth.accountId, params.id, body)),
);
