import { httpHandler, ok } from '#shared/http/handler.ts';
import { listRules } from '#shared/rules/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /alert-rules → 200 {items, nextCursor: null}, newest first. */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await listRules(auth.accountId)));
