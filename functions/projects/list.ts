import { httpHandler, ok } from '#shared/http/handler.ts';
import { listProjects } from '#shared/tags/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /projects → 200 {items: [{connectionId, provider, id, name, tags, keys}]} */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await listProjects(auth.accountId)));
