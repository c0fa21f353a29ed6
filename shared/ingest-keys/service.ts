/**
 * The ingest-key domain: machine secrets (`brk_...`) that authenticate `POST /ingest`.
 * A secret is shown once, at creation; only its SHA-256 is stored. The secret carries 256 random bits, so a
 * plain (unsalted, fast) hash is enough: there is nothing to brute-force, and the hash is the O(1) lookup key.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Conflict, NotFound, Unauthorized } from '#shared/http/errors.ts';
import { logger } from '#shared/http/logger.ts';
import { isId, newId } from '#shared/ids.ts';
import * as repo from '#shared/db/ingest-keys.ts';
import type { CreateIngestKeyBody } from '#shared/ingest-keys/schemas.ts';

export const SECRET_PREFIX = 'brk_';
/** `brk_` + 32 random bytes in base64url (43 characters, no padding). */
const SECRET_PATTERN = /^brk_[A-Za-z0-9_-]{43}$/;
/** Characters of the secret kept for display: `brk_` + 8. */
export const DISPLAY_PREFIX_LENGTH = 12;
export const MAX_INGEST_KEYS_PER_ACCOUNT = 20;
export const DEFAULT_INGEST_KEY_NAME = 'Ingest key';
/** `lastUsedAt` is written at most this often per key, so most ingest requests do no write for it. */
export const TOUCH_INTERVAL_MS = 60_000;

// ---- pure parts ----

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedSecret(secret: string): boolean {
  return SECRET_PATTERN.test(secret);
}

/** SHA-256 of the secret, lower-case hex: what is stored and looked up. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** Whether a use at `now` should record itself: never recorded, or recorded at least a minute ago. */
export function shouldTouch(lastUsedAt: string | null, now: Date): boolean {
  if (lastUsedAt === null) return true;
  const last = Date.parse(lastUsedAt);
  if (Number.isNaN(last)) return true;
  return now.getTime() - last >= TOUCH_INTERVAL_MS;
}

// ---- responses (explicit mappers: never the stored item) ----

export interface CreatedIngestKey {
  id: string;
  name: string;
  /** The secret: returned here and never again. */
  key: string;
  prefix: string;
  createdAt: string;
  /** As in the list: a resource carries updatedAt (= createdAt: ingest keys are never edited) and lastUsedAt. */
  updatedAt: string;
  lastUsedAt: null;
}

export interface IngestKeyView {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  /** Ingest keys are never edited: the same as createdAt (docs/api.md: resources carry updatedAt). */
  updatedAt: string;
  lastUsedAt: string | null;
}

function toView(key: repo.IngestKeySummary): IngestKeyView {
  return { id: key.id, name: key.name, prefix: key.prefix, createdAt: key.createdAt, updatedAt: key.createdAt, lastUsedAt: key.lastUsedAt };
}

// ---- use cases ----

/**
 * Creates a key, up to MAX_INGEST_KEYS_PER_ACCOUNT per account (409 past it), exactly even under racing creates:
 * the account's counter is taken in the same transaction as the key (shared/db/caps.ts).
 */
export async function createIngestKey(accountId: string, input: CreateIngestKeyBody, now = new Date()): Promise<CreatedIngestKey> {
  const secret = generateSecret();
  const key: repo.IngestKey = {
    id: newId('ingestKey'),
    accountId,
    name: input.name ?? DEFAULT_INGEST_KEY_NAME,
    prefix: displayPrefix(secret),
    secretHash: hashSecret(secret),
    createdAt: now.toISOString(),
    lastUsedAt: null,
  };
  if ((await repo.createIngestKey(key, MAX_INGEST_KEYS_PER_ACCOUNT)) === 'cap') {
    throw new Conflict(
      `An account can have at most ${MAX_INGEST_KEYS_PER_ACCOUNT} ingest keys. Delete one you no longer use first.`,
      'ingest-key-limit',
    );
  }
  return { id: key.id, name: key.name, key: secret, prefix: key.prefix, createdAt: key.createdAt, updatedAt: key.createdAt, lastUsedAt: null };
}

export async function listIngestKeys(accountId: string): Promise<{ items: IngestKeyView[]; nextCursor: null }> {
  const keys = await repo.listIngestKeys(accountId);
  return { items: keys.map(toView), nextCursor: null };
}

const ingestKeyNotFound = () => new NotFound('The ingest key does not exist.');

/** Revokes a key at once. An id of another account, or one that is not an ingest-key id at all, is unknown: 404. */
export async function deleteIngestKey(accountId: string, id: string): Promise<void> {
  if (!isId('ingestKey', id)) throw ingestKeyNotFound();
  if (!(await repo.deleteIngestKey(accountId, id))) throw ingestKeyNotFound();
}

export interface IngestPrincipal {
  accountId: string;
  ingestKeyId: string;
}

const invalidIngestKey = () => new Unauthorized('A valid ingest key is required in x-api-key.', 'ApiKey');

/**
 * The account an `x-api-key` secret belongs to, or 401 (missing, malformed, unknown or revoked: one answer for all).
 * Records the use at most once a minute; a failure to record it is logged and does not fail the request.
 */
export async function authenticateIngestKey(secret: string | undefined, now = new Date()): Promise<IngestPrincipal> {
  const candidate = secret?.trim();
  if (!candidate || !isWellFormedSecret(candidate)) throw invalidIngestKey();
  const secretHash = hashSecret(candidate);
  const found = await repo.findBySecretHash(secretHash);
  if (!found) throw invalidIngestKey();
  if (shouldTouch(found.lastUsedAt, now)) {
    try {
      await repo.touchIngestKey(found.accountId, found.ingestKeyId, secretHash, now.toISOString());
    } catch (error) {
      logger.warn('could not record the use of an ingest key', { ingestKeyId: found.ingestKeyId, error: error as Error });
    }
  }
  return { accountId: found.accountId, ingestKeyId: found.ingestKeyId };
}
