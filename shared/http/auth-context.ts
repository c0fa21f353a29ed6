import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { Unauthorized } from '#shared/http/errors.ts';
import { bearerToken, verifier, type TokenClaims } from '#shared/auth/verifier.ts';
import { isId } from '#shared/ids.ts';

/** Who is calling: taken ONLY from the verified token's claims. */
export interface AuthContext {
  accountId: string;
  userId: string;
  email: string;
}

export function authFromClaims(claims: TokenClaims): AuthContext {
  // API Gateway's JWT authorizer also lets Cognito access tokens through; only ID tokens carry our claims.
  if (claims.token_use !== 'id') throw new Unauthorized('An ID token is required.');
  const accountId = claims['custom:accountId'];
  const userId = claims['custom:userId'];
  const email = claims.email;
  if (typeof accountId !== 'string' || !isId('account', accountId)) throw new Unauthorized('The token carries no account.');
  if (typeof userId !== 'string' || !isId('user', userId)) throw new Unauthorized('The token carries no user.');
  return { accountId, userId, email: typeof email === 'string' ? email : '' };
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

/** The `jwt` auth kind of the route table, as a handler's authenticator. */
export const jwtAuth = (event: APIGatewayProxyEventV2): Promise<AuthContext> => authenticate(event);
