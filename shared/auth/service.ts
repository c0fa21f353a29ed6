/** The auth domain: register, login, refresh (`me` lives in me.ts: it needs no identity client). Handlers call these; these call the identity service and the repository. */
import { Conflict, Unauthorized, ValidationError } from '#shared/http/errors.ts';
import { newId } from '#shared/ids.ts';
import { logger } from '#shared/http/logger.ts';
import * as accounts from '#shared/db/accounts.ts';
import { BadCredentials, IdentityExists, PasswordRefused, decodePayload, identity, type Identity } from '#shared/auth/identity.ts';
import type { LoginBody, RefreshBody, RegisterBody } from '#shared/auth/schemas.ts';

export interface Deps {
  identity: Identity;
  accounts: Pick<typeof accounts, 'createAccountWithOwner' | 'emailRegistered'>;
  now: () => Date;
}

const defaultDeps: Deps = { identity, accounts, now: () => new Date() };

/** A Cognito user with no account behind it, older than this, is the debris of a register that crashed midway. */
export const ORPHAN_AGE_MS = 2 * 60 * 1000;

const emailTaken = () => new Conflict('An account with this email exists already.', 'email-taken');
const badLogin = () => new Unauthorized('The email or password is wrong.');

/**
 * Creates the identity, then the account, user and e-mail items in one transaction.
 * If the transaction fails, the identity is removed again: a failed register leaves nothing behind.
 */
export async function register(input: RegisterBody, deps: Deps = defaultDeps) {
  const now = deps.now().toISOString();
  const accountId = newId('account');
  const userId = newId('user');
  const newIdentity = { email: input.email, password: input.password, accountId, userId };

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
    );
  } catch (error) {
    await deps.identity.deleteUser(input.email).catch((cleanupError: unknown) =>
      logger.error('register rollback failed: identity left without account', { cleanupError: String(cleanupError) }),
    );
    if (error instanceof accounts.EmailTaken) throw emailTaken();
    throw error;
  }
  const session = await deps.identity.signIn(input.email, input.password);
  return { accountId, userId, ...session };
}

export async function createIdentity(user: Parameters<Identity['createUser']>[0], deps: Deps): Promise<void> {
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

function idsOf(token: string): { accountId: string; userId: string } {
  const claims = decodePayload(token);
  return { accountId: String(claims['custom:accountId']), userId: String(claims['custom:userId']) };
}

export async function login(input: LoginBody, deps: Deps = defaultDeps) {
  try {
    const session = await deps.identity.signIn(input.email, input.password);
    return { ...session, ...idsOf(session.token) };
  } catch (error) {
    if (error instanceof BadCredentials) throw badLogin();
    throw error;
  }
}

export async function refresh(input: RefreshBody, deps: Deps = defaultDeps) {
  try {
    const { token, expiresIn } = await deps.identity.refresh(input.refreshToken);
    return { token, expiresIn };
  } catch (error) {
    if (error instanceof BadCredentials) throw new Unauthorized('The refresh token is invalid, expired or revoked.');
    throw error;
  }
}
