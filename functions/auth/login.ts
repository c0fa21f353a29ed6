import { httpHandler, ok } from '#shared/http/handler.ts';
import { LoginBody } from '#shared/auth/schemas.ts';
import { login } from '#shared/auth/service.ts';

/** POST /auth/login → 200 {token, refreshToken, expiresIn, accountId, userId} */
export const handler = httpHandler({ auth: 'none', body: LoginBody }, async ({ body }) => ok(await login(body)));
