/** The auth domain: register, login, refresh (`me` lives in me.ts: it needs no identity client). Handlers call these; these call the identity service and the repository. */
import { Conflict, Unauthorized, ValidationError } from '#shared/http/errors.ts';
import { newId } from '#shared/ids.ts';
import { logger } from '#shared/http/logger.ts';
import * as accounts from '#shared/db/accounts.ts';
import * as userUpdates from '#shared/db/user-updates.ts';
import { forgetUser } from '#shared/http/auth-context.ts';
import { linkTokenPut } from '#shared/db/link-tokens.ts';
import { newLinkToken } from '#shared/auth/tokens.ts';
import * as limits from '#shared/auth/limits.ts';
import { emailIpSubject, ipSubject } from '#shared/auth/limits.ts';
import { epochOf, inSessionEndWindow, INITIAL_EPOCH, unwrapRefreshToken, wrapRefreshToken } from '#shared/access/sessions.ts';
import { BadCredentials, IdentityExists, PasswordRefused, decodePayload, identity, type Identity } from '#shared/auth/identity.ts';
import { defaultMail, sendLinkEmail, type Mail } from '#shared/auth/mail.ts';
import { linkTo, verificationEmail } from '#shared/notify/templates.ts';
import type { LoginBody, RefreshBody, RegisterBody } from '#shared/auth/schemas.ts';

export interface Deps {
  identity: Identity;
  accounts: Pick<typeof accounts, 'createAccountWithOwner' | 'emailRegistered' | 'getUser'>;
  /** Who owns an address, and admitting a token of the second the user's sessions ended (shared/access/sessions.ts). */
  sessions: Pick<typeof userUpdates, 'emailOwner' | 'admitToken'>;
  limits: Pick<typeof limits, 'enforce' | 'giveBack'>;
  mail: Mail;
  now: () => Date;
}

const defaultDeps: Deps = { identity, accounts, sessions: userUpdates, limits, mail: defaultMail, now: () => new Date() };

/** A Cognito user with no account behind it, older than this, is the debris of a register that crashed midway. */
export const ORPHAN_AGE_MS = 2 * 60 * 1000;

const emailTaken = () => new Conflict('An account with this email exists already.', 'email-taken');
const badLogin = () => new Unauthorized('The email or password is wrong.');

/**
 * Creates the identity, then the account, user and e-mail items in one transaction.
 * If the transaction fails, the identity is removed again: a failed register leaves nothing behind.
 */
export async function register(input: RegisterBody, deps: Deps = defaultDeps, sourceIp = '') {
  const at = deps.now();
  // First: past the per-IP limit nothing else happens (no identity, no items).
  await deps.limits.enforce('register', ipSubject(sourceIp), at);
  const now = at.toISOString();
  const accountId = newId('account');
  const userId = newId('user');
  const newIdentity = { email: input.email, password: input.password, accountId, userId };
  // The verification link's token is written with the account (one transaction); the e-mail goes after it.
  const verifyToken = newLinkToken();

  await createIdentity(newIdentity, deps);
  try {
    await deps.accounts.createAccountWithOwner(
      { accountId, companyName: input.companyName, plan: 'FREE', billingStatus: 'ACTIVE', createdAt: now, updatedAt: now },
      {
        userId,
        accountId,
        email: input.email,
        firstName: input.firstName,
        lastName: input.lastName,
        role: 'admin',
        emailVerified: false,
        alertEmails: true,
        createdAt: now,
        updatedAt: now,
      },
      [linkTokenPut(verifyToken, { kind: 'verify-email', accountId, userId, email: input.email }, at)],
    );
  } catch (error) {
    await deps.identity.deleteUser(input.email).catch((cleanupError: unknown) =>
      logger.error('register rollback failed: identity left without account', { cleanupError: String(cleanupError) }),
    );
    if (error instanceof accounts.EmailTaken) throw emailTaken();
    throw error;
  }
  const session = await deps.identity.signIn(input.email, input.password);
  await sendLinkEmail(deps.mail, (appUrl) => verificationEmail({ to: input.email, link: linkTo(appUrl, '/verify-email', verifyToken) }), at, 'verification');
  return { accountId, userId, ...session, refreshToken: wrapRefreshToken(session.refreshToken, INITIAL_EPOCH) };
}

export async function createIdentity(user: Parameters<Identity['createUser']>[0], deps: Pick<Deps, 'identity' | 'accounts' | 'now'>): Promise<void> {
  try {
    await deps.identity.createUser(user);
  } catch (error) {
    if (error instanceof PasswordRefused) {
      throw new ValidationError('The password does not meet the policy.', [{ path: 'password', message: 'The password does not meet the policy.' }]);
    }
    if (!(error instanceof IdentityExists)) throw error;
    // Taken, unless it is an orphan: an identity without an e-mail item, left by a register that crashed midway.
    if (await deps.accounts.emailRegistered(user.email)) throw emailTaken();
    const createdAt = await deps.identity.createdAt(user.email);
    if (createdAt && deps.now().getTime() - createdAt.getTime() < ORPHAN_AGE_MS) throw emailTaken(); // maybe in flight
    logger.warn('removing an orphaned identity before register');
    await deps.identity.deleteUser(user.email);
    try {
      await deps.identity.createUser(user);
    } catch (retryError) {
      if (retryError instanceof IdentityExists) throw emailTaken();
      throw retryError;
    }
  }
}

function idsOf(token: string): { accountId: string; userId: string; issuedAt: number; tokenId: string } {
  const claims = decodePayload(token);
  return {
    accountId: String(claims['custom:accountId']),
    userId: String(claims['custom:userId']),
    issuedAt: Number(claims.iat),
    tokenId: typeof claims.jti === 'string' ? claims.jti : '',
  };
}

/**
 * The ID token Cognito just issued to `user` (whose epoch is `epoch`) made valid with the user's sessions: a token
 * of the second they ended in is admitted by its `jti`, only while the epoch is still `epoch` (shared/access/sessions.ts).
 */
async function admit(user: accounts.User, epoch: string, ids: ReturnType<typeof idsOf>, deps: Pick<Deps, 'sessions'>): Promise<boolean> {
  if (epochOf(user) !== epoch) return false;
  if (!inSessionEndWindow(user, ids.issuedAt)) return true;
  if (!ids.tokenId || !(await deps.sessions.admitToken(user.accountId, user.userId, epoch, ids.tokenId))) return false;
  forgetUser(user.accountId, user.userId);
  return true;
}

const sessionsEnded = () => new Unauthorized('The sessions of this user ended while signing in: sign in again.');

/**
 * Signs in. Each attempt counts against the failed-login limit of (e-mail, source IP) before the password is tried
 * (so concurrent guesses can't pass it), and a successful one gives its count back. The user's session epoch is read
 * BEFORE the password is tried: a sign-in that overlapped the end of the user's sessions (a reset or change of
 * password; the password it checked may be the old one) gets no session (shared/access/sessions.ts).
 */
export async function login(input: LoginBody, deps: Deps = defaultDeps, sourceIp = '') {
  const counted = await deps.limits.enforce('login', emailIpSubject(input.email, sourceIp), deps.now());
  const owner = await deps.sessions.emailOwner(input.email, true);
  const before = owner && (await deps.accounts.getUser(owner.accountId, owner.userId, true));
  let session;
  try {
    session = await deps.identity.signIn(input.email, input.password);
  } catch (error) {
    if (error instanceof BadCredentials) throw badLogin();
    throw error;
  }
  await deps.limits.giveBack(counted);
  const ids = idsOf(session.token);
  if (!before || before.userId !== ids.userId || before.accountId !== ids.accountId) throw sessionsEnded();
  const user = await deps.accounts.getUser(ids.accountId, ids.userId, true);
  if (!user) throw badLogin();
  const epoch = epochOf(before);
  if (!(await admit(user, epoch, ids, deps))) throw sessionsEnded();
  return { ...session, refreshToken: wrapRefreshToken(session.refreshToken, epoch), accountId: ids.accountId, userId: ids.userId };
}

const refreshRefused = () => new Unauthorized('The refresh token is invalid, expired or revoked.');

/** A new ID token, unless the refresh token's session ended (a password reset or change) or its user is gone. */
export async function refresh(input: RefreshBody, deps: Deps = defaultDeps) {
  const { epoch, cognitoRefreshToken } = unwrapRefreshToken(input.refreshToken);
  let session;
  try {
    session = await deps.identity.refresh(cognitoRefreshToken);
  } catch (error) {
    if (error instanceof BadCredentials) throw refreshRefused();
    throw error;
  }
  // Whose it is, from the token Cognito just issued (never from the client's envelope).
  const ids = idsOf(session.token);
  const user = await deps.accounts.getUser(ids.accountId, ids.userId, true);
  if (!user || !(await admit(user, epoch, ids, deps))) throw refreshRefused();
  return { token: session.token, expiresIn: session.expiresIn };
}
