import { httpHandler, ok } from '#shared/http/handler.ts';
import { BudgetParams } from '#shared/budgets/schemas.ts';
import { releaseBudget } from '#shared/budgets/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /budgets/{id}/release → 200 the budget, its levers held off for the rest of the month. Another account's id: 404. */
export const handler = httpHandler({ auth: jwtAuth, params: BudgetParams }, async ({ auth, params }) => ok(await releaseBudget(auth.accountId, params.id, auth.userId)));
