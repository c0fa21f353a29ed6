import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createHash } from 'node:crypto';
import type { HttpError } from '#shared/http/errors.ts';
import { created, httpHandler } from '#shared/http/handler.ts';
import * as repo from '#shared/db/ingest-keys.ts';
import { CreateIngestKeyBody, IngestKeyParams } from '#shared/ingest-keys/schemas.ts';
import { validate } from '#shared/http/validate.ts';
import {
  authenticateIngestKey,
  displayPrefix,
  generateSecret,
  hashSecret,
  isWellFormedSecret,
  shouldTouch,
} from '#shared/ingest-keys/service.ts';
import { apiEvent, lambdaContext } from './helpers.ts';

// The repository is replaced (not the SDK): these tests are about the domain's decisions, not DynamoDB.
vi.mock('#shared/db/ingest-keys.ts', () => ({
  createIngestKey: vi.fn(),
  listIngestKeys: vi.fn(),
  deleteIngestKey: vi.fn(),
  findBySecretHash: vi.fn(),
  touchIngestKey: vi.fn(),
}));

const statusOf = async (promise: Promise<unknown>): Promise<number> => {
  try {
    await promise;
  } catch (error) {
    return (error as HttpError).status;
  }
  return 0;
};

describe('ingest key secrets', () => {
  it('are brk_ + 43 base64url characters (32 random bytes)', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^brk_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice(4), 'base64url')).toHaveLength(32);
    expect(isWellFormedSecret(secret)).toBe(true);
  });

  it('differ every time', () => {
    const secrets = new Set(Array.from({ length: 1000 }, generateSecret));
    expect(secrets.size).toBe(1000);
  });

  it.each([
    ['empty', ''],
    ['without the prefix', 'x'.repeat(47)],
    ['another prefix', `brx_${'A'.repeat(43)}`],
    ['too short', `brk_${'A'.repeat(42)}`],
    ['too long', `brk_${'A'.repeat(44)}`],
    ['with base64 (not url) characters', `brk_${'A'.repeat(42)}+`],
    ['with padding', `brk_${'A'.repeat(42)}=`],
    ['with a newline', `brk_${'A'.repeat(43)}\n`],
  ])('refuse a malformed one: %s', (_name, secret) => {
    expect(isWellFormedSecret(secret)).toBe(false);
  });

  it('show the first 12 characters as the prefix', () => {
    const secret = `brk_AbCdEfGh${'x'.repeat(35)}`;
    expect(displayPrefix(secret)).toBe('brk_AbCdEfGh');
  });

  it('are stored as their SHA-256 in lower-case hex', () => {
    const secret = generateSecret();
    const hash = hashSecret(secret);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(hash).not.toContain(secret.slice(4, 12));
    expect(hashSecret('brk_abc')).toBe('120114e3ee2d5d853eee68815f44b66892b5336f633c60dcb4af7436d0a0f2f9'); // sha256sum of the bytes
  });
});

describe('shouldTouch (lastUsedAt is written at most once a minute)', () => {
  const now = new Date('2026-11-21T22:00:00.000Z');
  it.each([
    ['never used', null, true],
    ['used 61 s ago', '2026-11-21T21:58:59.000Z', true],
    ['used exactly 60 s ago', '2026-11-21T21:59:00.000Z', true],
    ['used 59.999 s ago', '2026-11-21T21:59:00.001Z', false],
    ['used just now', '2026-11-21T22:00:00.000Z', false],
    ['used "in the future" (clock skew)', '2026-11-21T22:00:30.000Z', false],
    ['an unreadable timestamp', 'yesterday-ish', true],
  ])('%s → %s', (_name, lastUsedAt, expected) => {
    expect(shouldTouch(lastUsedAt, now)).toBe(expected);
  });
});

describe('schemas', () => {
  it('trim the name and allow it to be left out', () => {
    expect(validate(CreateIngestKeyBody, { name: '  CI runner ' }, 'body')).toEqual({ name: 'CI runner' });
    expect(validate(CreateIngestKeyBody, {}, 'body')).toEqual({});
  });
  it.each([
    ['a blank name', { name: '   ' }],
    ['a long name', { name: 'x'.repeat(101) }],
    ['a non-string name', { name: 7 }],
    ['an unknown field', { name: 'x', accountId: 'br_01JZ3N5Q8W0000000000000000' }],
  ])('refuse %s', (_name, body) => {
    expect(() => validate(CreateIngestKeyBody, body, 'body')).toThrow();
  });
  it('take any string id in the path (the domain answers 404 for a malformed one)', () => {
    expect(validate(IngestKeyParams, { id: 'nope' }, 'path')).toEqual({ id: 'nope' });
  });
});

describe('httpHandler with optionalBody', () => {
  const handler = httpHandler({ auth: 'none', body: CreateIngestKeyBody, optionalBody: true }, async ({ body }) => created(body));
  it.each([
    ['no body', undefined],
    ['an empty body', ''],
    ['a blank body', ' \n'],
  ])('reads %s as {}', async (_name, body) => {
    const res = await handler(apiEvent(body === undefined ? {} : { body }), lambdaContext);
    expect(res.statusCode).toBe(201);
    expect(JSON.parse(res.body!)).toEqual({});
  });
  it('still validates a body that is sent', async () => {
    expect((await handler(apiEvent({ body: '{"name":"a"}' }), lambdaContext)).statusCode).toBe(201);
    expect((await handler(apiEvent({ body: '{"nope":1}' }), lambdaContext)).statusCode).toBe(400);
    expect((await handler(apiEvent({ body: '[]' }), lambdaContext)).statusCode).toBe(400);
    expect((await handler(apiEvent({ body: '{' }), lambdaContext)).statusCode).toBe(400);
  });
  it('is off by default: an empty body is a 400', async () => {
    const strict = httpHandler({ auth: 'none', body: CreateIngestKeyBody }, async ({ body }) => created(body));
    expect((await strict(apiEvent({ body: '' }), lambdaContext)).statusCode).toBe(400);
  });
});

describe('authenticateIngestKey (repository replaced)', () => {
  const find = vi.mocked(repo.findBySecretHash);
  const touch = vi.mocked(repo.touchIngestKey);
  const secret = generateSecret();
  const principal = { accountId: 'br_01JZ3N5Q8W0000000000000000', ingestKeyId: 'ink_01JZ3N5Q8W0000000000000000' };
  const now = new Date('2026-11-21T22:00:00.000Z');

  beforeEach(() => {
    find.mockReset();
    touch.mockReset();
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['malformed', 'brk_short'],
    ['a bearer token', 'Bearer eyJhbGciOi'],
  ])('refuses a %s key with 401 without a lookup', async (_name, value) => {
    expect(await statusOf(authenticateIngestKey(value, now))).toBe(401);
    expect(find).not.toHaveBeenCalled();
  });

  it('refuses an unknown (or revoked) key with 401', async () => {
    find.mockResolvedValue(undefined);
    expect(await statusOf(authenticateIngestKey(secret, now))).toBe(401);
    expect(find).toHaveBeenCalledWith(hashSecret(secret));
    expect(touch).not.toHaveBeenCalled();
  });

  it('looks the key up by its hash and records a first use', async () => {
    find.mockResolvedValue({ ...principal, lastUsedAt: null });
    expect(await authenticateIngestKey(secret, now)).toEqual(principal);
    expect(touch).toHaveBeenCalledWith(principal.accountId, principal.ingestKeyId, hashSecret(secret), now.toISOString());
  });

  it('does not write again within the minute', async () => {
    find.mockResolvedValue({ ...principal, lastUsedAt: new Date(now.getTime() - 30_000).toISOString() });
    expect(await authenticateIngestKey(secret, now)).toEqual(principal);
    expect(touch).not.toHaveBeenCalled();
  });

  it('does not fail the request when recording the use fails', async () => {
    find.mockResolvedValue({ ...principal, lastUsedAt: null });
    touch.mockRejectedValue(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    expect(await authenticateIngestKey(secret, now)).toEqual(principal);
  });

  it('fails when the lookup itself fails (that is not a 401)', async () => {
    find.mockRejectedValue(new Error('boom'));
    await expect(authenticateIngestKey(secret, now)).rejects.toThrow('boom');
  });
});
