import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { touchIngestKey } from '#shared/db/ingest-keys.ts';
import { authenticateIngestKey } from '#shared/ingest-keys/service.ts';
import type { HttpError } from '#shared/http/errors.ts';
import { api, pointAtStack, dynamo, registerUser, stack, type RegisteredUser } from './harness.ts';

const PROBLEM = 'application/problem+json';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const INK = /^ink_[0-9A-HJKMNP-TV-Z]{26}$/;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function createKey(token: string, body?: unknown) {
  const res = await api('/ingest-keys', { method: 'POST', token, ...(body === undefined ? {} : { body }) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; name: string; key: string; prefix: string; createdAt: string };
}

async function list(token: string) {
  const res = await api('/ingest-keys', { token });
  expect(res.status).toBe(200);
  return res.body as { items: Record<string, unknown>[]; nextCursor: string | null };
}

async function getItem(key: { pk: string; sk: string }) {
  return (await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: key, ConsistentRead: true }))).Item;
}

describe('/ingest-keys', () => {
  let owner: RegisteredUser;
  let other: RegisteredUser;
  beforeAll(async () => {
    [owner, other] = await Promise.all([registerUser(), registerUser()]);
  });

  it('creates a key with no body at all: 201, the secret shown once, a default name', async () => {
    const res = await api('/ingest-keys', { method: 'POST', token: owner.token });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.body).toEqual({
      id: expect.stringMatching(INK),
      name: 'Ingest key',
      key: expect.stringMatching(/^brk_[A-Za-z0-9_-]{43}$/),
      prefix: res.body.key.slice(0, 12),
      createdAt: expect.stringMatching(ISO),
      updatedAt: res.body.createdAt,
      lastUsedAt: null,
    });
  });

  it('lists keys newest first without the secret or its hash, lastUsedAt null until used', async () => {
    const first = await createKey(owner.token, { name: '  CI runner  ' });
    const second = await createKey(owner.token, {});
    expect(first.name).toBe('CI runner');
    const { items, nextCursor } = await list(owner.token);
    expect(nextCursor).toBeNull();
    const ids = items.map((item) => item.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    expect(items.find((item) => item.id === first.id)).toEqual({
      id: first.id,
      name: 'CI runner',
      prefix: first.prefix,
      createdAt: first.createdAt,
      updatedAt: first.createdAt,
      lastUsedAt: null,
    });
    const text = JSON.stringify(items);
    expect(text).not.toContain(first.key);
    expect(text).not.toContain(sha256(first.key));
    expect(text).not.toContain('secretHash');
  });

  it('stores the secret only as its SHA-256', async () => {
    const created = await createKey(owner.token, { name: 'storage check' });
    const hash = sha256(created.key);
    const main = await getItem(keys.ingestKey(owner.accountId, created.id));
    const lookup = await getItem(keys.ingestSecret(hash));
    expect(main).toMatchObject({ id: created.id, accountId: owner.accountId, secretHash: hash, lastUsedAt: null });
    expect(lookup).toMatchObject({ accountId: owner.accountId, ingestKeyId: created.id, lastUsedAt: null });
    const randomPart = created.key.slice(4);
    for (const item of [main, lookup]) {
      expect(JSON.stringify(item)).not.toContain(randomPart);
    }
    // Nothing else in the account's partition carries it either.
    const partition = await dynamo().send(
      new QueryCommand({
        TableName: stack().tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.account(owner.accountId).pk },
      }),
    );
    expect(JSON.stringify(partition.Items)).not.toContain(randomPart);
  });

  it('allows 20 keys per account and answers the 21st with 409', async () => {
    const user = await registerUser();
    await Promise.all(Array.from({ length: 20 }, (_, i) => createKey(user.token, { name: `key ${i}` })));
    const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'one too many' } });
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect(res.body).toMatchObject({ type: '/problems/ingest-key-limit', status: 409 });
    expect((await list(user.token)).items).toHaveLength(20);
    // Deleting one makes room again.
    const [victim] = (await list(user.token)).items;
    expect((await api(`/ingest-keys/${victim!.id}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await createKey(user.token);
  });

  it('deletes a key: 204, gone from the list and from the table, a second delete is 404', async () => {
    const created = await createKey(owner.token, { name: 'to delete' });
    const res = await api(`/ingest-keys/${created.id}`, { method: 'DELETE', token: owner.token });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await list(owner.token)).items.map((item) => item.id)).not.toContain(created.id);
    expect(await getItem(keys.ingestKey(owner.accountId, created.id))).toBeUndefined();
    expect(await getItem(keys.ingestSecret(sha256(created.key)))).toBeUndefined();
    const again = await api(`/ingest-keys/${created.id}`, { method: 'DELETE', token: owner.token });
    expect(again.status).toBe(404);
    expect(again.headers.get('content-type')).toBe(PROBLEM);
  });

  it("answers 404 for another account's key and leaves it in place", async () => {
    const created = await createKey(owner.token, { name: 'not yours' });
    const res = await api(`/ingest-keys/${created.id}`, { method: 'DELETE', token: other.token });
    expect(res.status).toBe(404);
    expect((await list(owner.token)).items.map((item) => item.id)).toContain(created.id);
    expect(await getItem(keys.ingestSecret(sha256(created.key)))).toBeDefined();
    expect((await list(other.token)).items.map((item) => item.id)).not.toContain(created.id);
  });

  it.each(['nope', 'ink_123', 'bud_01JZ3N5Q8W0000000000000000', 'ink_01jz3n5q8w0000000000000000'])(
    'answers 404 for a malformed or unknown id %s',
    async (id) => {
      expect((await api(`/ingest-keys/${id}`, { method: 'DELETE', token: owner.token })).status).toBe(404);
    },
  );

  it.each([
    ['POST', '/ingest-keys'],
    ['GET', '/ingest-keys'],
    ['DELETE', '/ingest-keys/ink_01JZ3N5Q8W0000000000000000'],
  ])('answers %s %s without a token with 401', async (method, path) => {
    const res = await api(path, { method });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
  });

  it.each([
    ['an unknown field', { name: 'x', accountId: 'br_01JZ3N5Q8W0000000000000000' }, 'accountId'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a long name', { name: 'x'.repeat(101) }, 'name'],
    ['a non-string name', { name: 42 }, 'name'],
  ])('answers 400 for %s', async (_name, body, path) => {
    const res = await api('/ingest-keys', { method: 'POST', token: owner.token, body });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it.each([
    ['malformed JSON', '{"name":'],
    ['an array', '[]'],
  ])('answers 400 for %s', async (_name, rawBody) => {
    expect((await api('/ingest-keys', { method: 'POST', token: owner.token, rawBody })).status).toBe(400);
  });
});

describe('authenticateIngestKey against the local table', () => {
  let restore: () => void;
  let user: RegisteredUser;

  beforeAll(async () => {
    restore = pointAtStack();
    user = await registerUser();
  });
  afterAll(() => restore());

  const statusOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return (error as HttpError).status;
    }
    return 0;
  };
  const lastUsed = async (accountId: string, id: string, secret: string) => ({
    main: (await getItem(keys.ingestKey(accountId, id)))?.lastUsedAt,
    lookup: (await getItem(keys.ingestSecret(sha256(secret))))?.lastUsedAt,
  });

  it('accepts a live key, and records its use at most once a minute', async () => {
    const created = await createKey(user.token, { name: 'collector' });
    const t0 = new Date();
    expect(await authenticateIngestKey(created.key, t0)).toEqual({ accountId: user.accountId, ingestKeyId: created.id });
    expect(await lastUsed(user.accountId, created.id, created.key)).toEqual({ main: t0.toISOString(), lookup: t0.toISOString() });

    // Within the minute: no write.
    const t1 = new Date(t0.getTime() + 30_000);
    expect(await authenticateIngestKey(created.key, t1)).toEqual({ accountId: user.accountId, ingestKeyId: created.id });
    expect(await lastUsed(user.accountId, created.id, created.key)).toEqual({ main: t0.toISOString(), lookup: t0.toISOString() });

    // A minute later: recorded again, and the list shows it.
    const t2 = new Date(t0.getTime() + 61_000);
    await authenticateIngestKey(created.key, t2);
    expect(await lastUsed(user.accountId, created.id, created.key)).toEqual({ main: t2.toISOString(), lookup: t2.toISOString() });
    const listed = (await list(user.token)).items.find((item) => item.id === created.id);
    expect(listed?.lastUsedAt).toBe(t2.toISOString());
  });

  it('refuses a revoked key at once, and a late touch does not bring it back', async () => {
    const created = await createKey(user.token, { name: 'revoked' });
    await authenticateIngestKey(created.key);
    expect((await api(`/ingest-keys/${created.id}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    expect(await statusOf(authenticateIngestKey(created.key))).toBe(401);
    // A request that authenticated just before the delete may still touch the key: that must be a no-op.
    await touchIngestKey(user.accountId, created.id, sha256(created.key), new Date().toISOString());
    expect(await getItem(keys.ingestKey(user.accountId, created.id))).toBeUndefined();
    expect(await getItem(keys.ingestSecret(sha256(created.key)))).toBeUndefined();
  });

  it.each([
    ['an unknown key', `brk_${'A'.repeat(43)}`],
    ['a malformed key', 'brk_tooShort'],
    ['an empty key', ''],
    ['no key', undefined],
  ])('refuses %s with 401', async (_name, secret) => {
    const error = await authenticateIngestKey(secret).catch((e: unknown) => e as HttpError);
    expect(error).toMatchObject({ status: 401, detail: 'A valid ingest key is required in x-api-key.' });
  });
});
