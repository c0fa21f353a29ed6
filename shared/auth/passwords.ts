/**
 * Passwords (docs/features/identity-and-teams.md): forgot → an e-mailed single-use link (1 hour) →
 * reset, which ends ALL of the user's sessions; and change (signed in), which ends the OTHER sessions.
 *
 * Order (docs/features/identity-and-teams.md): the new password is set FIRST, then Cognito's global sign-out (AWS),
 * then our own end of sessions (shared/db/user-updates.ts `endSessions`: `sessionsValidAfter` = now at millisecond
 * precision and a new session epoch; shared/access/sessions.ts explains how ID and refresh tokens issued before it are
 * refused, including a login whose password check raced with it). Ending sessions first would leave a gap in which the
 * OLD password still opens a session of the new epoch. Should the end of sessions fail after the password was set, the
 * request fails (500) and the caller repeats it: the new password is in place, no session of the old one gains
 * anything.
 *
 * Reset links: a reset uses up every reset link of the user created before it (`claimResetLinks`, one conditional
 * update before the password is set), and a change of password voids them through `sessionsValidAfter`.
 */
import { InvalidToken, NotFound, ValidationError } from '#shared/http/errors.ts';
import { logger } from '#shared/http/logger.ts';
import { forgetUser, type UserAuthContext } from '#shared/http/auth-context.ts';
import { getUser, type User } from '#shared/db/accounts.ts';
import { consumeLinkToken, putLinkToken } from '#shared/db/link-tokens.ts';
import { claimResetLinks, emailOwner, endSessions, type EndSessions } from '#shared/db/user-updates.ts';
import { LINK_TOKEN_PATTERN, newLinkToken } from '#shared/auth/tokens.ts';
import { allowed, emailIpSubject, emailSubject, enforce, giveBack, ipSubject } from '#shared/auth/limits.ts';
import { newEpoch } from '#shared/access/sessions.ts';
import { BadCredentials, identity, PasswordRefused, type Identity } from '#shared/auth/identity.ts';
import { defaultMail, sendLinkEmail, type Mail } from '#shared/auth/mail.ts';
import { linkTo, resetPasswordEmail } from '#shared/notify/templates.ts';
import type { ChangePasswordBody, ForgotPasswordBody, ResetPasswordBody } from '#shared/auth/schemas.ts';

/**
 * POST /auth/forgot-password answers no sooner than this after it started, known address or not: the e-mail
 * send (tens to a few hundred ms with SES) is the one step only a known address takes, and it hides under it.
 */
export const FORGOT_PASSWORD_MIN_MS = 500;

export interface PasswordDeps {
  identity: Pick<Identity, 'signIn' | 'setPassword' | 'signOutEverywhere'>;
  mail: Mail;
  now: () => Date;
  /** Waits (the forgot-password floor). */
  sleep: (ms: number) => Promise<void>;
}

const defaultDeps: PasswordDeps = {
  identity,
  mail: defaultMail,
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * POST /auth/forgot-password: 202 whether or not the address is known (no enumeration). Both kinds of address do
 * the same reads and writes — the per-IP count, the e-mail item, the per-address e-mail cap, one token item (for
 * an unknown address a token no one will ever hold, gone with its TTL) — and answer at the same floor.
 */
export async function forgotPassword(body: ForgotPasswordBody, sourceIp: string, deps: PasswordDeps = defaultDeps): Promise<void> {
  const now = deps.now();
  const started = now.getTime();
  await enforce('forgot-password', ipSubject(sourceIp), now);
  const owner = await emailOwner(body.email);
  // Quietly capped per address: a stranger can't fill someone's inbox with reset mails from many IPs.
  const capOk = await allowed('reset-email', emailSubject(body.email), now);
  const token = newLinkToken();
  await putLinkToken(
    token,
    owner ? { kind: 'reset-password', accountId: owner.accountId, userId: owner.userId, email: body.email } : { kind: 'reset-password', accountId: '', email: '' },
    now,
  );
  const message = (appUrl: string) => resetPasswordEmail({ to: body.email, link: linkTo(appUrl, '/reset-password', token) });
  if (owner && capOk) await sendLinkEmail(deps.mail, message, now, 'password reset');
  else message(deps.mail.appUrl() || 'http://localhost'); // the same rendering work
  const left = started + FORGOT_PASSWORD_MIN_MS - deps.now().getTime();
  if (left > 0) await deps.sleep(left);
}

const invalidResetToken = () => new InvalidToken('The password reset link is unknown, used or expired: ask for a new one.');

const refusedPassword = (path: string) =>
  new ValidationError('The password does not meet the policy.', [{ path, message: 'The password does not meet the policy.' }]);

/**
 * POST /auth/reset-password: uses the token up, claims the user's reset links (a link older than the last reset or
 * change of password is void), sets the password, then ends every session of its user (the address counts as
 * verified: the link went to it). The token is spent first, so a link works exactly once even when clicked twice at
 * the same moment; if setting the password then fails, the user asks for a new link.
 */
export async function resetPassword(body: ResetPasswordBody, deps: PasswordDeps = defaultDeps): Promise<void> {
  const now = deps.now();
  if (!LINK_TOKEN_PATTERN.test(body.token)) throw invalidResetToken();
  const stored = await consumeLinkToken(body.token, 'reset-password', now);
  if (!stored?.userId) throw invalidResetToken();
  const user = await claimResetLinks(stored.accountId, stored.userId, stored.email, stored.createdAt, now);
  if (!user) throw invalidResetToken();
  await setPasswordAndEndSessions(user, body.password, 'password', { epoch: newEpoch(), verifyEmail: stored.email }, deps);
}

/** The new password, Cognito's sign-out, then our end of sessions (in that order: see the top of this file). */
async function setPasswordAndEndSessions(user: User, password: string, path: string, change: EndSessions, deps: PasswordDeps): Promise<void> {
  try {
    await deps.identity.setPassword(user.email, password);
  } catch (error) {
    if (error instanceof PasswordRefused) throw refusedPassword(path);
    if (error instanceof BadCredentials) throw new NotFound('The user does not exist.');
    throw error;
  }
  await deps.identity.signOutEverywhere(user.email).catch((error: unknown) => {
    // Our own checks end the sessions next; Cognito's revocation is the second lock.
    logger.error('global sign-out failed after a password change', { error: String(error) });
  });
  const ended = await endSessions(user.accountId, user.userId, change, deps.now());
  forgetUser(user.accountId, user.userId);
  if (!ended) throw new NotFound('The user does not exist.');
}

/**
 * POST /auth/change-password: the current password must be right (a wrong one counts as a failed sign-in of the
 * address from this IP). The other sessions end; the ID token of this request stays valid until it expires (its
 * `jti` is kept), and every refresh token — this session's too — ends: the client signs in again with the new
 * password for a new refresh token.
 */
export async function changePassword(auth: UserAuthContext, body: ChangePasswordBody, sourceIp: string, deps: PasswordDeps = defaultDeps): Promise<void> {
  const now = deps.now();
  const user = await getUser(auth.accountId, auth.userId, true);
  if (!user) throw new NotFound('The user does not exist.');
  const counted = await enforce('login', emailIpSubject(user.email, sourceIp), now);
  try {
    await deps.identity.signIn(user.email, body.currentPassword);
  } catch (error) {
    if (error instanceof BadCredentials) {
      throw new ValidationError('The current password is wrong.', [{ path: 'currentPassword', message: 'The current password is wrong.' }]);
    }
    throw error;
  }
  await giveBack(counted);
  if (body.newPassword === body.currentPassword) {
    throw new ValidationError('The new password is the current one.', [{ path: 'newPassword', message: 'newPassword must differ from currentPassword.' }]);
  }
  await setPasswordAndEndSessions(user, body.newPassword, 'newPassword', { epoch: newEpoch(), ...(auth.tokenId ? { keepTokenId: auth.tokenId } : {}) }, deps);
}
