/**
 * The identity service (Amazon Cognito; locally cognito-local): a thin wrapper that speaks our terms.
 * The Cognito username is the normalized e-mail; the account and user ids travel as immutable custom attributes.
 */
import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminGetUserCommand,
  AdminSetUserPasswordCommand,
  AdminUserGlobalSignOutCommand,
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
  type AuthenticationResultType,
} from '@aws-sdk/client-cognito-identity-provider';
import { config } from '#shared/config.ts';

export interface NewIdentity {
  email: string;
  password: string;
  accountId: string;
  userId: string;
}

export interface Session {
  token: string;
  refreshToken: string;
  expiresIn: number;
}

/** The username exists already. */
export class IdentityExists extends Error {
  override name = 'IdentityExists';
}
/** Unknown user, wrong password, or a refresh token that is invalid, expired or revoked. */
export class BadCredentials extends Error {
  override name = 'BadCredentials';
}
/** The identity service refused the password (its policy). */
export class PasswordRefused extends Error {
  override name = 'PasswordRefused';
}

let client: CognitoIdentityProviderClient | undefined;

function cognito(): CognitoIdentityProviderClient {
  if (!client) {
    const cfg = config();
    client = new CognitoIdentityProviderClient({
      region: cfg.region,
      ...(cfg.cognitoEndpoint ? { endpoint: cfg.cognitoEndpoint } : {}),
    });
  }
  return client;
}

const CREDENTIAL_ERRORS = new Set([
  'NotAuthorizedException',
  'UserNotFoundException',
  'UserNotConfirmedException',
  'PasswordResetRequiredException',
]);

function translate(error: unknown): unknown {
  const name = error instanceof Error ? error.name : '';
  if (name === 'UsernameExistsException' || name === 'AliasExistsException') return new IdentityExists(name);
  if (CREDENTIAL_ERRORS.has(name)) return new BadCredentials(name);
  if (name === 'InvalidPasswordException') return new PasswordRefused(name);
  return error;
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw translate(error);
  }
}

function session(result: AuthenticationResultType | undefined, refreshToken?: string): Session {
  if (!result?.IdToken) throw new Error('identity service returned no ID token');
  const refresh = result.RefreshToken ?? refreshToken;
  if (!refresh) throw new Error('identity service returned no refresh token');
  return { token: result.IdToken, refreshToken: refresh, expiresIn: result.ExpiresIn ?? 3600 };
}

export const identity = {
  /** Creates a confirmed user with a permanent password; no invitation e-mail is sent. */
  async createUser(user: NewIdentity): Promise<void> {
    const { userPoolId } = config();
    await call(() =>
      cognito().send(
        new AdminCreateUserCommand({
          UserPoolId: userPoolId,
          Username: user.email,
          MessageAction: 'SUPPRESS',
          UserAttributes: [
            { Name: 'email', Value: user.email },
            { Name: 'email_verified', Value: 'true' },
            { Name: 'custom:accountId', Value: user.accountId },
            { Name: 'custom:userId', Value: user.userId },
          ],
        }),
      ),
    );
    try {
      await call(() =>
        cognito().send(
          new AdminSetUserPasswordCommand({ UserPoolId: userPoolId, Username: user.email, Password: user.password, Permanent: true }),
        ),
      );
    } catch (error) {
      await identity.deleteUser(user.email);
      throw error;
    }
  },

  /** Removes a user; a user that is gone already is fine. */
  async deleteUser(email: string): Promise<void> {
    try {
      await cognito().send(new AdminDeleteUserCommand({ UserPoolId: config().userPoolId, Username: email }));
    } catch (error) {
      if (!(error instanceof Error && error.name === 'UserNotFoundException')) throw error;
    }
  },

  /** When the user was created, or undefined when there is no such user. */
  async createdAt(email: string): Promise<Date | undefined> {
    try {
      const res = await cognito().send(new AdminGetUserCommand({ UserPoolId: config().userPoolId, Username: email }));
      return res.UserCreateDate ?? new Date(0);
    } catch (error) {
      if (error instanceof Error && error.name === 'UserNotFoundException') return undefined;
      throw error;
    }
  },

  /** Sets a new permanent password (a reset, a change); the identity service's policy may refuse it (PasswordRefused). */
  async setPassword(email: string, password: string): Promise<void> {
    await call(() =>
      cognito().send(new AdminSetUserPasswordCommand({ UserPoolId: config().userPoolId, Username: email, Password: password, Permanent: true })),
    );
  },

  /**
   * Revokes every refresh token of the user (Cognito's global sign-out). cognito-local 5.3 has no
   * AdminUserGlobalSignOut: locally this does nothing, and our own check (the session epoch, shared/access/sessions.ts)
   * refuses the old refresh tokens — in AWS that check runs too, behind Cognito's own.
   */
  async signOutEverywhere(email: string): Promise<void> {
    if (config().cognitoEndpoint) return;
    try {
      await cognito().send(new AdminUserGlobalSignOutCommand({ UserPoolId: config().userPoolId, Username: email }));
    } catch (error) {
      if (!(error instanceof Error && error.name === 'UserNotFoundException')) throw error;
    }
  },

  async signIn(email: string, password: string): Promise<Session> {
    const res = await call(() =>
      cognito().send(
        new InitiateAuthCommand({
          ClientId: config().userPoolClientId,
          AuthFlow: 'USER_PASSWORD_AUTH',
          AuthParameters: { USERNAME: email, PASSWORD: password },
        }),
      ),
    ).catch((error: unknown) => {
      // cognito-local answers a wrong password with InvalidPasswordException; at sign-in it is a wrong credential.
      throw error instanceof PasswordRefused ? new BadCredentials(error.message) : error;
    });
    if (res.ChallengeName) throw new BadCredentials(`unexpected challenge ${res.ChallengeName}`);
    return session(res.AuthenticationResult);
  },

  async refresh(refreshToken: string): Promise<Session> {
    const res = await call(() =>
      cognito().send(
        new InitiateAuthCommand({
          ClientId: config().userPoolClientId,
          AuthFlow: 'REFRESH_TOKEN_AUTH',
          AuthParameters: { REFRESH_TOKEN: refreshToken },
        }),
      ),
    );
    return session(res.AuthenticationResult, refreshToken);
  },
};

export type Identity = typeof identity;

/** Reads the (already verified or freshly issued) JWT's payload. Never use it to trust a token from a client. */
export function decodePayload(token: string): Record<string, unknown> {
  const part = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}
