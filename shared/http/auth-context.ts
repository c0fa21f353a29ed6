import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { Forbidden, Unauthorized } from '#shared/http/errors.ts';
import { getUser, type Role, type User } from '#shared/db/accounts.ts';
import { allows, roleForRoute } from '#shared/access/roles.ts';
import { couldBeAdmitted, tokenSessionValid } from '#shared/access/sessions.ts';
import { bearerToken, verifier, type TokenClaims } from '#shared/access/verifier.ts';
import { isId } from '#shared/ids.ts';

/** Who is calling: the account and user from the verified token's claims, the role from our own table. */
export interface AuthContext {
  accountId: string;
  userId: string;
  email: string;
}

export interface UserAuthContext extends AuthContext {
  role: Role;
  /** The token's `jti` (a password change keeps this one token valid). */
  tokenId?: string;
}

export function authFromClaims(claims: TokenClaims): AuthContext & { issuedAt?: number; tokenId?: string } {
  // API Gateway's JWT authorizer also lets Cognito access tokens through; only ID tokens carry our claims.
  if (claims.token_use !== 'id') throw new Unauthorized('An ID token is required.');
  const accountId = claims['custom:accountId'];
  const userId = claims['custom:userId'];
  const email = claims.email;
  if (typeof accountId !== 'string' || !isId('account', accountId)) throw new Unauthorized('The token carries no account.');
  if (typeof userId !== 'string' || !isId('user', userId)) throw new Unauthorized('The token carries no user.');
  const iat = Number(claims.iat);
  return {
    accountId,
    userId,
    email: typeof email === 'string' ? email : '',
    ...(Number.isFinite(iat) ? { issuedAt: iat } : {}),
    ...(typeof claims.jti === 'string' && claims.jti ? { tokenId: claims.jti } : {}),
  };
}

type JwtEvent = APIGatewayProxyEventV2 & {
  requestContext: { authorizer?: { jwt?: { claims?: TokenClaims } } };
};

/**
 * The claims API Gateway's JWT authorizer (or the local gateway) verified. When no authorizer ran
 * (a route wired without one), the handler verifies the bearer token itself: never trust an unverified token.
 */
export async function authenticate(event: APIGatewayProxyEventV2): Promise<AuthContext> {
  const claims = (event as JwtEvent).requestContext.authorizer?.jwt?.claims;
  if (claims) return authFromClaims(claims);
  const token = bearerToken(event.headers?.authorization);
  if (!token) throw new Unauthorized();
  let verified: TokenClaims;
  try {
    verified = await verifier().verify(token);
  } catch {
    throw new Unauthorized('The token is invalid or expired.');
  }
  return authFromClaims(verified);
}

/**
 * How long a container keeps a user it read: a role change or a removal takes effect everywhere within this time
 * (docs/features/identity-and-teams.md: "within 60 seconds"). One GetItem per user and container per 30 s.
 */
export const USER_CACHE_MS = 30_000;
const USER_CACHE_MAX = 1_000;
const userCache = new Map<string, { user: User | undefined; at: number }>();

async function cachedUser(accountId: string, userId: string, now: number, fresh = false): Promise<User | undefined> {
  const key = `${accountId}#${userId}`;
  const hit = userCache.get(key);
  if (!fresh && hit && now - hit.at < USER_CACHE_MS) return hit.user;
  const user = await getUser(accountId, userId);
  if (userCache.size >= USER_CACHE_MAX) userCache.delete(userCache.keys().next().value!);
  userCache.set(key, { user, at: now });
  return user;
}

/** Forgets the cached users (tests; and after this container changed a user itself). */
export function forgetUser(accountId?: string, userId?: string): void {
  if (accountId && userId) userCache.delete(`${accountId}#${userId}`);
  else userCache.clear();
}

/**
 * The user behind a verified token, checked against our table: it must still exist (a removed user: 401), its
 * sessions must not have been ended after the token was issued (password change/reset: 401, at millisecond
 * precision — shared/access/sessions.ts), and its role must
 * allow the route (`role` of shared/routes.ts: else 403).
 */
export async function authorize(
  event: APIGatewayProxyEventV2,
  auth: AuthContext & { issuedAt?: number; tokenId?: string },
  now = Date.now(),
): Promise<UserAuthContext> {
  let user = await cachedUser(auth.accountId, auth.userId, now);
  if (!user) throw new Unauthorized('The user no longer exists.');
  // Issued before the user's sessions ended (shared/access/sessions.ts): refused, unless the token was admitted —
  // which a cached user may not show yet: a token that could have been is checked once more against a fresh read.
  if (!tokenSessionValid(user, auth) && couldBeAdmitted(user, auth.issuedAt)) user = await cachedUser(auth.accountId, auth.userId, now, true);
  if (!user) throw new Unauthorized('The user no longer exists.');
  if (!tokenSessionValid(user, auth)) throw new Unauthorized('The session has ended: sign in again.');
  const needed = roleForRoute(event.routeKey);
  if (!allows(user.role, needed)) throw new Forbidden(`This needs the ${needed} role or higher; yours is ${user.role}.`);
  return { accountId: auth.accountId, userId: auth.userId, email: auth.email, role: user.role, ...(auth.tokenId ? { tokenId: auth.tokenId } : {}) };
}

/** The `jwt` auth kind of the route table, as a handler's authenticator: a verified token, a user, a role. */
export const jwtAuth = async (event: APIGatewayProxyEventV2): Promise<UserAuthContext> => authorize(event, await authenticate(event));
