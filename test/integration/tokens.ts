/**
 * Token forging for the security tests: tampered, unsigned, foreign-signed and expired JWTs, and real Cognito
 * sessions (ID and access token) straight from cognito-local, parameterized by the stack: used by the gateway,
 * security and fuzz tests alike.
 */
import { createSign, generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import type { LocalStackInfo } from '#local/stack.ts';

export const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
export const decodePart = (part: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

/** The claims of a JWT, unverified. */
export function claimsOf(token: string): Record<string, unknown> {
  return decodePart(token.split('.')[1] ?? '');
}

export function signRs256(header: Record<string, unknown>, payload: Record<string, unknown>, privateKeyPem: string): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = createSign('RSA-SHA256').update(input).sign(privateKeyPem).toString('base64url');
  return `${input}.${signature}`;
}

/** cognito-local signs with a key shipped in its package: with it, a test can mint tokens it could not get. */
export function cognitoLocalPrivateKey(): string {
  const require = createRequire(import.meta.url);
  return (require('cognito-local/lib/keys/cognitoLocal.private.json') as { pem: string }).pem;
}

/** The header cognito-local puts on its ID tokens. */
export const COGNITO_LOCAL_HEADER = { alg: 'RS256', typ: 'JWT', kid: 'CognitoLocal' } as const;

/** Signs `claims` exactly as cognito-local would (its own private key and kid). */
export function signAsCognitoLocal(claims: Record<string, unknown>): string {
  return signRs256({ ...COGNITO_LOCAL_HEADER }, claims, cognitoLocalPrivateKey());
}

let foreignKeyPem: string | undefined;

/** A fresh RSA key no JWKS knows (made once per process). */
export function foreignPrivateKey(): string {
  foreignKeyPem ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return foreignKeyPem;
}

export interface CognitoSession {
  idToken: string;
  accessToken: string;
  email: string;
}

function cognitoClient(s: LocalStackInfo): CognitoIdentityProviderClient {
  return new CognitoIdentityProviderClient({
    endpoint: s.cognitoEndpoint,
    region: s.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/** Signs an existing user in with USER_PASSWORD_AUTH: both of their tokens (the API hands out only the ID token). */
export async function cognitoSignIn(s: LocalStackInfo, email: string, password: string): Promise<CognitoSession> {
  const client = cognitoClient(s);
  try {
    const auth = await client.send(
      new InitiateAuthCommand({
        ClientId: s.userPoolClientId,
        AuthFlow: 'USER_PASSWORD_AUTH',
        AuthParameters: { USERNAME: email, PASSWORD: password },
      }),
    );
    return { idToken: auth.AuthenticationResult!.IdToken!, accessToken: auth.AuthenticationResult!.AccessToken!, email };
  } finally {
    client.destroy();
  }
}

/** A user made straight in cognito-local (no handler involved) with the given account claims, signed in. */
export async function cognitoUser(
  s: LocalStackInfo,
  email: string,
  claims: { accountId: string; userId: string } = {
    accountId: 'br_01JZ3N5Q8W0000000000000000',
    userId: 'usr_01JZ3N5Q8W0000000000000000',
  },
): Promise<CognitoSession> {
  const client = cognitoClient(s);
  const password = 'Gateway1Test';
  try {
    await client.send(
      new AdminCreateUserCommand({
        UserPoolId: s.userPoolId,
        Username: email,
        MessageAction: 'SUPPRESS',
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: 'email_verified', Value: 'true' },
          { Name: 'custom:accountId', Value: claims.accountId },
          { Name: 'custom:userId', Value: claims.userId },
        ],
      }),
    );
    await client.send(
      new AdminSetUserPasswordCommand({ UserPoolId: s.userPoolId, Username: email, Password: password, Permanent: true }),
    );
  } finally {
    client.destroy();
  }
  return cognitoSignIn(s, email, password);
}

/** Plausible ID-token claims for the stack's pool (an account id that exists nowhere). */
export function validClaims(s: LocalStackInfo): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: '6a1f1b7e-0000-4000-8000-000000000000',
    'cognito:username': '6a1f1b7e-0000-4000-8000-000000000000',
    email: 'mallory@example.com',
    token_use: 'id',
    aud: s.userPoolClientId,
    iss: `${s.cognitoEndpoint}/${s.userPoolId}`,
    iat: now,
    auth_time: now,
    exp: now + 3600,
    'custom:accountId': 'br_01JZ3N5Q8W0000000000000001',
    'custom:userId': 'usr_01JZ3N5Q8W0000000000000001',
  };
}

/** A real token whose payload is rewritten (the original signature kept): any change must break it. */
export function tamper(token: string, changes: Record<string, unknown>): string {
  const [header, payload, signature] = token.split('.');
  return `${header}.${b64url({ ...decodePart(payload!), ...changes })}.${signature}`;
}

/** `alg: none`, no signature. */
export function unsignedToken(claims: Record<string, unknown>): string {
  return `${b64url({ alg: 'none', typ: 'JWT', kid: 'CognitoLocal' })}.${b64url(claims)}.`;
}

/** The right kid and claims, signed by a key no JWKS knows. */
export function foreignSignedToken(claims: Record<string, unknown>): string {
  return signRs256({ ...COGNITO_LOCAL_HEADER }, claims, foreignPrivateKey());
}

/** `claims` with an expiry two hours ago, signed with cognito-local's real key. */
export function expiredToken(claims: Record<string, unknown>): string {
  const past = Math.floor(Date.now() / 1000) - 7200;
  return signAsCognitoLocal({ ...claims, iat: past, auth_time: past, exp: past + 3600 });
}

export interface ForgeContext {
  stack: LocalStackInfo;
  /** A real user's session: its tokens are tampered with, re-signed, or used where they do not belong. */
  session: CognitoSession;
  /** The account a forged token tries to reach. */
  victimAccountId: string;
}

/** Every way a bearer token must be refused: `[name, forge]`, where forge's undefined means no Authorization header. */
export const BAD_TOKENS: ReadonlyArray<readonly [string, (ctx: ForgeContext) => string | undefined]> = [
  ['no token', () => undefined],
  ['garbage', () => 'garbage'],
  ['three garbage parts', () => 'aaa.bbb.ccc'],
  ['a tampered payload (another account, signature kept)', (c) => tamper(c.session.idToken, { 'custom:accountId': c.victimAccountId })],
  ['alg none', (c) => unsignedToken({ ...claimsOf(c.session.idToken), 'custom:accountId': c.victimAccountId })],
  ['a foreign RSA key with the right kid and claims', (c) => foreignSignedToken(claimsOf(c.session.idToken))],
  ['an expired token signed with the real key', (c) => expiredToken(claimsOf(c.session.idToken))],
  ['another audience, signed with the real key', (c) => signAsCognitoLocal({ ...claimsOf(c.session.idToken), aud: 'some-other-client' })],
  ['another issuer, signed with the real key', (c) => signAsCognitoLocal({ ...claimsOf(c.session.idToken), iss: `${c.stack.cognitoEndpoint}/local_other` })],
  ['an access token instead of an ID token', (c) => c.session.accessToken],
  ['an ID token without the account claim, signed with the real key', (c) => signAsCognitoLocal(withoutAccount(claimsOf(c.session.idToken)))],
  ['a malformed account claim, signed with the real key', (c) => signAsCognitoLocal({ ...claimsOf(c.session.idToken), 'custom:accountId': 'ACCOUNT#x' })],
];

function withoutAccount(claims: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...claims };
  delete copy['custom:accountId'];
  return copy;
}
