import { httpHandler } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { resendVerification } from '#shared/auth/verification.ts';

/** POST /auth/resend-verification → 202; verified already: 409; past 1 a minute / 5 a day: 429 with Retry-After */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => {
  await resendVerification(auth);
  return { status: 202 };
});
