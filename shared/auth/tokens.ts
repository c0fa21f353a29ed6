/**
 * Single-use link tokens (verify e-mail, reset password, accept invitation): 32 random bytes, base64url (43
 * characters, `[A-Za-z0-9_-]`). Only the SHA-256 of a token is stored (shared/db/link-tokens.ts); the token itself
 * exists only in the e-mail's link.
 */
import { createHash, randomBytes } from 'node:crypto';

export type LinkTokenKind = 'verify-email' | 'reset-password' | 'invitation';

/** How long each kind of link works (API.md part 3). */
export const TOKEN_TTL_MS: Record<LinkTokenKind, number> = {
  'verify-email': 24 * 3600 * 1000,
  'reset-password': 3600 * 1000,
  invitation: 7 * 24 * 3600 * 1000,
};

export function newLinkToken(): string {
  return randomBytes(32).toString('base64url');
}

export function linkTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The shape a token has; anything else is refused before any read. */
export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{20,200}$/;
