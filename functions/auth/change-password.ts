import { httpHandler, noContent } from '#shared/http/handler.ts';
import { clientIp } from '#shared/http/client-ip.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ChangePasswordBody } from '#shared/auth/schemas.ts';
import { changePassword } from '#shared/auth/passwords.ts';

/** POST /auth/change-password {currentPassword, newPassword} → 204, the other sessions ended; wrong current: 400 */
export const handler = httpHandler({ auth: jwtAuth, body: ChangePasswordBody }, async ({ auth, body, event }) => {
  await changePassword(auth, body, clientIp(event));
  return noContent();
});
