import { httpHandler, ok } from '#shared/http/handler.ts';
import { listRules } from '#shared/rules/service.ts';

/** GET /alert-rules → 200 {items, nextCursor: null}, newest first. */
export const handler = httpHandler({ auth: 'jwt' }, async ({ auth }) => ok(await listRules(auth.accountId)));
