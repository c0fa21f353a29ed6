import { httpHandler, ok } from '#shared/http/handler.ts';
import { listBudgets } from '#shared/budgets/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /budgets → 200 {items, nextCursor: null}: every budget with its month-to-date spend, newest first. */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await listBudgets(auth.accountId)));
