/**
 * Verified e-mail (docs/features/identity-and-teams.md): register sends the first link (shared/auth/service.ts); the
 * link's token proves the address (POST /auth/verify-email); a user may ask for another link, at most one a minute
 * and five a day (POST /auth/resend-verification).
 */
import { Conflict, InvalidToken, NotFound } from '#shared/http/errors.ts';
import { getUser } from '#shared/db/accounts.ts';
import { consumeLinkToken, putLinkToken } from '#shared/db/link-tokens.ts';
import { markEmailVerified } from '#shared/db/user-updates.ts';
import { LINK_TOKEN_PATTERN, newLinkToken } from '#shared/auth/tokens.ts';
import { enforce } from '#shared/auth/limits.ts';
import { defaultMail, sendLinkEmail, type Mail } from '#shared/auth/mail.ts';
import { linkTo, verificationEmail } from '#shared/notify/templates.ts';
import type { AuthContext } from '#shared/http/auth-context.ts';
import type { VerifyEmailBody } from '#shared/auth/schemas.ts';

const invalidToken = () => new InvalidToken('The verification link is unknown, used or expired: ask for a new one.');

/** POST /auth/verify-email: uses the token up and marks its user's address verified. */
export async function verifyEmail(body: VerifyEmailBody, now = new Date()): Promise<{ emailVerified: true }> {
  if (!LINK_TOKEN_PATTERN.test(body.token)) throw invalidToken();
  const stored = await consumeLinkToken(body.token, 'verify-email', now);
  if (!stored?.userId) throw invalidToken();
  // The user may be gone (removed), or no longer have that address: then the link proves nothing.
  const user = await markEmailVerified(stored.accountId, stored.userId, stored.email, now);
  if (!user) throw invalidToken();
  return { emailVerified: true };
}

/** POST /auth/resend-verification: a new link (the earlier ones keep working until they expire). */
export async function resendVerification(auth: AuthContext, now = new Date(), mail: Mail = defaultMail): Promise<void> {
  const user = await getUser(auth.accountId, auth.userId, true);
  if (!user) throw new NotFound('The user does not exist.');
  if (user.emailVerified) throw new Conflict('The e-mail address is verified already.', 'already-verified');
  await enforce('resend-minute', user.userId, now);
  await enforce('resend-day', user.userId, now);
  const token = newLinkToken();
  await putLinkToken(token, { kind: 'verify-email', accountId: user.accountId, userId: user.userId, email: user.email }, now);
  const sent = await sendLinkEmail(mail, (appUrl) => verificationEmail({ to: user.email, link: linkTo(appUrl, '/verify-email', token) }), now, 'verification');
  // Asked for explicitly: a link that did not go out is an error the client should see (and retry a minute later).
  if (!sent) throw new Error('the verification e-mail could not be sent');
}
