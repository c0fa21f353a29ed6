import { httpHandler, ok } from '#shared/http/handler.ts';
import { clientIp } from '#shared/http/client-ip.ts';
import { LoginBody } from '#shared/auth/schemas.ts';
import { login } from '#shared/auth/service.ts';

/** POST /auth/login → 200 {token, refreshToken, expiresIn, accountId, userId}; past 10 failures (e-mail, IP): 429 */
export const handler = httpHandler({ auth: 'none', body: LoginBody }, async ({ body, event }) =>
  ok(await login(body, undefined, clientIp(event))),
);
