import { httpHandler, ok } from '#shared/http/handler.ts';
import { me } from '#shared/auth/me.ts';

/** GET /auth/me → 200 {user, account} */
export const handler = httpHandler({ auth: 'jwt' }, async ({ auth }) => ok(await me(auth)));
