import { httpHandler, ok } from '#shared/http/handler.ts';
import { RefreshBody } from '#shared/auth/schemas.ts';
import { refresh } from '#shared/auth/service.ts';

/** POST /auth/refresh → 200 {token, expiresIn} */
export const handler = httpHandler({ auth: 'none', body: RefreshBody }, async ({ body }) => ok(await refresh(body)));
