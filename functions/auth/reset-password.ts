import { httpHandler, noContent } from '#shared/http/handler.ts';
import { ResetPasswordBody } from '#shared/auth/schemas.ts';
import { resetPassword } from '#shared/auth/passwords.ts';

/** POST /auth/reset-password {token, password} → 204, every session of the user ended; a bad token: 400 invalid-token */
export const handler = httpHandler({ auth: 'none', body: ResetPasswordBody }, async ({ body }) => {
  await resetPassword(body);
  return noContent();
});
