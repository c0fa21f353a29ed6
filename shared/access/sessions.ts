/**
 * Ending a user's sessions, the part Cognito can't do for us everywhere (docs/security.md).
 *
 * Ending sessions (a password reset or change, shared/auth/passwords.ts) happens AFTER the new password is set and
 * Cognito's global sign-out ran, and writes two things on the user's USER# item in one update:
 * - `sessionsValidAfter` = that moment in milliseconds (V): ID tokens issued before it are refused;
 * - a new random session epoch: refresh tokens of the old epoch are refused.
 *
 * Refresh tokens. Each one we hand out is Cognito's wrapped with an epoch: `brs1.<epoch>.<cognito refresh token>`.
 * POST /auth/refresh refuses a token whose epoch is not the user's current one (the user is the one of the ID token
 * Cognito issued for it, never one the client names). Login wraps the epoch it read BEFORE the password was tried:
 * a login whose password check raced with a reset (the old password, checked just before it was replaced) carries
 * the old epoch, and login refuses it outright when the epoch changed while it ran. In AWS, Cognito's global sign-out
 * revokes the same tokens as well; cognito-local (5.3) can't, and there this check alone ends them. A token without
 * the prefix counts as epoch `0`: valid only until the user's sessions first end. The epoch is 128 random bits:
 * knowing the old one tells nothing about the new one.
 *
 * ID tokens, at millisecond precision. Cognito's `iat` has whole seconds, so a token of the second that holds V may
 * have been issued before or after it. Every token whose `iat` second starts at or before V + CLOCK_SKEW_MS is
 * refused, unless its `jti` was admitted: our login and refresh admit the tokens they obtained with the CURRENT epoch
 * (proof by order, not by clocks: the epoch was read after V was written, so the password check or refresh came after
 * it) into `sessionTokenIds`, with a condition that the epoch is still that one. So a token issued before V is
 * refused whatever its second; the owner's own sign-in right after a reset works; and a token Cognito issued to
 * someone who went around our API within that second is refused (they sign in again). `CLOCK_SKEW_MS` covers
 * Cognito's clock running ahead of ours.
 */
import { randomBytes } from 'node:crypto';
import type { User } from '#shared/db/accounts.ts';

const PREFIX = 'brs1';
/** The epoch of a user whose sessions never ended. */
export const INITIAL_EPOCH = '0';

/** How far the identity service's clock may run ahead of ours (AWS: NTP-synced, far below this). */
export const CLOCK_SKEW_MS = 1000;

export const epochOf = (user: Pick<User, 'sessionEpoch'>): string => user.sessionEpoch ?? INITIAL_EPOCH;

export const newEpoch = (): string => randomBytes(16).toString('base64url');

/** The refresh token a client gets: Cognito's, with the user's epoch. */
export function wrapRefreshToken(cognitoRefreshToken: string, epoch: string): string {
  return `${PREFIX}.${epoch}.${cognitoRefreshToken}`;
}

/** The epoch a refresh token was issued in, and Cognito's token inside it. */
export function unwrapRefreshToken(refreshToken: string): { epoch: string; cognitoRefreshToken: string } {
  const match = /^brs1\.([A-Za-z0-9_-]{1,64})\.(.+)$/s.exec(refreshToken);
  if (!match) return { epoch: INITIAL_EPOCH, cognitoRefreshToken: refreshToken };
  return { epoch: match[1]!, cognitoRefreshToken: match[2]! };
}

type SessionState = Pick<User, 'sessionsValidAfter' | 'sessionTokenIds' | 'sessionsKeptTokenId'>;

/**
 * Whether an ID token issued at `issuedAt` (whole seconds) may predate the end of the user's sessions: then only an
 * admitted `jti` makes it valid. False when the user's sessions never ended.
 */
export function inSessionEndWindow(user: Pick<User, 'sessionsValidAfter'>, issuedAt: number): boolean {
  if (!user.sessionsValidAfter) return false;
  return issuedAt * 1000 <= Date.parse(user.sessionsValidAfter) + CLOCK_SKEW_MS;
}

/** An ID token's standing with the user's sessions: valid, or ended (issued before they ended). */
export function tokenSessionValid(user: SessionState, token: { issuedAt?: number; tokenId?: string }): boolean {
  if (!user.sessionsValidAfter) return true;
  if (token.tokenId !== undefined && (token.tokenId === user.sessionsKeptTokenId || user.sessionTokenIds?.includes(token.tokenId))) return true;
  return token.issuedAt !== undefined && !inSessionEndWindow(user, token.issuedAt);
}

/**
 * Whether an ended-looking token could still be admitted (issued no earlier than a second plus the skew before V):
 * worth one fresh read of the user before refusing it, as a container's cached user may predate the admission.
 */
export function couldBeAdmitted(user: Pick<User, 'sessionsValidAfter'>, issuedAt: number | undefined): boolean {
  if (!user.sessionsValidAfter || issuedAt === undefined) return false;
  return issuedAt * 1000 > Date.parse(user.sessionsValidAfter) - 1000 - CLOCK_SKEW_MS;
}
