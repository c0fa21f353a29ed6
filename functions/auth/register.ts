import { created, httpHandler } from '#shared/http/handler.ts';
import { clientIp } from '#shared/http/client-ip.ts';
import { RegisterBody } from '#shared/auth/schemas.ts';
import { register } from '#shared/auth/service.ts';

/** POST /auth/register → 201 {accountId, userId, token, refreshToken, expiresIn}; past the per-IP limit: 429 */
export const handler = httpHandler({ auth: 'none', body: RegisterBody }, async ({ body, event }) =>
  created(await register(body, undefined, clientIp(event))),
);
