import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ListActionsQuery, listEnforcementActions } from '#shared/enforcement/api.ts';

/** GET /enforcement-actions?budgetId&limit&cursor → 200 {items, nextCursor}, newest first. Another account's budget: 404. */
export const handler = httpHandler({ auth: jwtAuth, query: ListActionsQuery }, async ({ auth, query }) => ok(await listEnforcementActions(auth.accountId, query)));
