import { httpHandler, noContent } from '#shared/http/handler.ts';
import { UserParams } from '#shared/users/schemas.ts';
import { deleteUser } from '#shared/users/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** DELETE /users/{userId} → 204. Unknown or another account's: 404; the last admin: 409 last-admin. */
export const handler = httpHandler({ auth: jwtAuth, params: UserParams }, async ({ auth, params }) => {
  await deleteUser(auth, params.userId);
  return noContent();
});
