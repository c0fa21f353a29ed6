import { httpHandler, ok } from '#shared/http/handler.ts';
import { VerifyEmailBody } from '#shared/auth/schemas.ts';
import { verifyEmail } from '#shared/auth/verification.ts';

/** POST /auth/verify-email {token} → 200 {emailVerified: true}; a bad, used or expired token: 400 invalid-token */
export const handler = httpHandler({ auth: 'none', body: VerifyEmailBody }, async ({ body }) => ok(await verifyEmail(body)));
