import { created, httpHandler } from '#shared/http/handler.ts';
import { CreateBudgetBody } from '#shared/budgets/schemas.ts';
import { createBudget } from '#shared/budgets/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /budgets {name?, monthlyLimit, alertThreshold, scope, keyHash?} → 201 the budget (100 per account: 409 past it). */
export const handler = httpHandler({ auth: jwtAuth, body: CreateBudgetBody }, async ({ auth, body }) =>
  created(await createBudget(auth.accountId, body)),
);
