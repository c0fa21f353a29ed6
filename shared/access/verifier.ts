import { CognitoJwtVerifier, JwtRsaVerifier } from 'aws-jwt-verify';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { config, type Config } from '#shared/config.ts';

/** The claims Burnrate reads from a verified Cognito ID token. */
export type TokenClaims = Record<string, unknown>;

export interface TokenVerifier {
  /** Resolves the verified payload; rejects on a bad signature, issuer, audience, expiry or token use. */
  verify(token: string): Promise<TokenClaims>;
}

/** Local issuer of cognito-local: `<endpoint>/<poolId>`. */
export function localIssuer(cfg: Pick<Config, 'cognitoEndpoint' | 'userPoolId'>): string {
  return `${cfg.cognitoEndpoint}/${cfg.userPoolId}`;
}

/**
 * One verifier chosen by config: `CognitoJwtVerifier` in AWS; locally (COGNITO_ENDPOINT set)
 * `JwtRsaVerifier` against cognito-local, whose pool ids and `http:` JWKS the Cognito verifier refuses.
 */
export function createVerifier(cfg: Config = config()): TokenVerifier {
  if (cfg.cognitoEndpoint) {
    const issuer = localIssuer(cfg);
    const jwksCache = new SimpleJwksCache({
      fetcher: {
        fetch: async (uri: string) => {
          const res = await fetch(uri);
          if (!res.ok) throw new Error(`JWKS fetch failed: ${res.status}`);
          return res.arrayBuffer();
        },
      },
    });
    const verifier = JwtRsaVerifier.create(
      {
        issuer,
        jwksUri: `${issuer}/.well-known/jwks.json`,
        audience: cfg.userPoolClientId,
        customJwtCheck: ({ payload }) => {
          if (payload.token_use !== 'id') throw new Error('not an ID token');
        },
      },
      { jwksCache },
    );
    return { verify: (token) => verifier.verify(token) as Promise<TokenClaims> };
  }
  const verifier = CognitoJwtVerifier.create({
    userPoolId: cfg.userPoolId,
    tokenUse: 'id',
    clientId: cfg.userPoolClientId,
  });
  return { verify: (token) => verifier.verify(token) as Promise<TokenClaims> };
}

let shared: TokenVerifier | undefined;

/** The container's verifier, created on first use and kept (its JWKS cache with it). */
export function verifier(): TokenVerifier {
  shared ??= createVerifier();
  return shared;
}

/** Extracts the token of an `Authorization: Bearer <token>` header; undefined when absent or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+([A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*)\s*$/i.exec(header ?? '');
  return match?.[1];
}
