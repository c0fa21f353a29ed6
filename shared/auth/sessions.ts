/**
 * Ending a user's sessions, the part Cognito can't do for us everywhere.
 *
 * Every user has a session epoch (`sessionEpoch` on its USER# item; absent = `0`). Each refresh token we hand out
 * is Cognito's wrapped with the epoch of its time: `brs1.<epoch>.<cognito refresh token>`. Ending the user's sessions
 * (a password reset or change) sets a new random epoch; POST /auth/refresh then refuses a token whose epoch is not
 * the user's current one — the user is the one of the ID token Cognito issued for it, never one the client names.
 * In AWS, Cognito's global sign-out revokes the same tokens as well; cognito-local (5.3) can't, and there this
 * check alone ends them. A refresh token without the prefix (issued before the epoch existed, or by a flow that
 * does not wrap) counts as epoch `0`: valid only until the user's sessions first end.
 * The epoch is 128 random bits: knowing the old one (it is in the old token) tells nothing about the new one.
 */
import { randomBytes } from 'node:crypto';
import type { User } from '#shared/db/accounts.ts';

const PREFIX = 'brs1';
/** The epoch of a user whose sessions never ended. */
export const INITIAL_EPOCH = '0';

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
