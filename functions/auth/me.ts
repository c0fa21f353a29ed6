import { httpHandler, ok } from '#shared/http/handler.ts';
import { me } from '#shared/auth/me.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /auth/me → 200 {user, account} */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ok(await me(auth)));
