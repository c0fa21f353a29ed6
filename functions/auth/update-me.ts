import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { PatchMeBody } from '#shared/auth/schemas.ts';
import { updateMe } from '#shared/auth/me.ts';

/** PATCH /auth/me {firstName?, lastName?, alertEmails?} → 200, the same body as GET /auth/me */
export const handler = httpHandler({ auth: jwtAuth, body: PatchMeBody }, async ({ auth, body }) => ok(await updateMe(auth, body)));
