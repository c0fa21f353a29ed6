import { created, httpHandler } from '#shared/http/handler.ts';
import { RegisterBody } from '#shared/auth/schemas.ts';
import { register } from '#shared/auth/service.ts';

/** POST /auth/register → 201 {accountId, userId, token, refreshToken, expiresIn} */
export const handler = httpHandler({ auth: 'none', body: RegisterBody }, async ({ body }) => created(await register(body)));
