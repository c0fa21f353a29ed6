import { httpHandler, ok } from '#shared/http/handler.ts';
import { PatchUserBody, UserParams } from '#shared/users/schemas.ts';
import { setRole } from '#shared/users/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** PATCH /users/{userId} {role} → 200 the user. Unknown or another account's: 404; the last admin: 409 last-admin. */
export const handler = httpHandler({ auth: jwtAuth, params: UserParams, body: PatchUserBody }, async ({ auth, params, body }) =>
  ok(await setRole(auth, params.userId, body.role)),
);
