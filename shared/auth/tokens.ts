/**
 * Single-use link tokens (verify e-mail, reset password, accept invitation): 32 random bytes, base64url (43
 * characters, `[A-Za-z0-9_-]`). Only the SHA-256 of a token is stored (shared/db/link-tokens.ts); the token itself
 * exists only in the e-mail's link.
 */
import { randomBytes } from 'node:crypto';

/** What is stored of a link (its kind, how long it works, its hash): shared/db/link-tokens.ts. */
export { linkTokenHash, TOKEN_TTL_MS, type LinkTokenKind } from '#shared/db/link-tokens.ts';

export function newLinkToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The shape a token has; anything else is refused before any read. */
export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{20,200}$/;
