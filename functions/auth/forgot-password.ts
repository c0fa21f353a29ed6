import { httpHandler } from '#shared/http/handler.ts';
import { clientIp } from '#shared/http/client-ip.ts';
import { ForgotPasswordBody } from '#shared/auth/schemas.ts';
import { forgotPassword } from '#shared/auth/passwords.ts';

/** POST /auth/forgot-password {email} → 202, known address or not; past the per-IP limit: 429 with Retry-After */
export const handler = httpHandler({ auth: 'none', body: ForgotPasswordBody }, async ({ body, event }) => {
  await forgotPassword(body, clientIp(event));
  return { status: 202 };
});
