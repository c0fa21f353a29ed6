import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { register } from '#shared/auth/service.ts';
import { defaultMail } from '#shared/auth/mail.ts';
import * as limits from '#shared/auth/limits.ts';
import { identity } from '#shared/auth/identity.ts';
import * as accounts from '#shared/db/accounts.ts';
import * as userUpdates from '#shared/db/user-updates.ts';
import { api, dynamo, pointAtStack, registerUser, stack, uniqueEmail } from './harness.ts';

const PASSWORD = 'Sup3rSecret';
const PROBLEM = 'application/problem+json';

function newUser(email = uniqueEmail()) {
  return { email, password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace', companyName: 'Analytical Engines' };
}

describe('POST /auth/register', () => {
  it('creates the account and user and returns a working token', async () => {
    const user = newUser();
    const res = await api('/auth/register', { method: 'POST', body: user });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      accountId: expect.stringMatching(/^br_[0-9A-HJKMNP-TV-Z]{26}$/),
      userId: expect.stringMatching(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/),
      token: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: expect.any(Number),
    });
    const me = await api('/auth/me', { token: res.body.token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      user: {
        userId: res.body.userId,
        email: user.email,
        firstName: 'Ada',
        lastName: 'Lovelace',
        // The registrant is the account's first admin; the address is unverified until its link is followed.
        role: 'admin',
        emailVerified: false,
        alertEmails: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
      account: {
        accountId: res.body.accountId,
        companyName: 'Analytical Engines',
        plan: 'FREE',
        billingStatus: 'ACTIVE',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
  });

  it('trims and lower-cases the e-mail, and refuses it again in any case with 409', async () => {
    const email = uniqueEmail();
    const first = await api('/auth/register', { method: 'POST', body: newUser(`  ${email.toUpperCase()} `) });
    expect(first.status).toBe(201);
    const again = await api('/auth/register', { method: 'POST', body: newUser(email.replace(/^./, (c) => c.toUpperCase())) });
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toBe(PROBLEM);
    expect(again.body).toMatchObject({ type: '/problems/email-taken', status: 409 });
    const login = await api('/auth/login', { method: 'POST', body: { email, password: PASSWORD } });
    expect(login.status).toBe(200);
    expect(login.body.accountId).toBe(first.body.accountId);
  });

  it('gives exactly one of two racing registrations of the same e-mail', async () => {
    const body = newUser();
    const results = await Promise.all([1, 2, 3].map(() => api('/auth/register', { method: 'POST', body })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
  });

  it.each([
    ['a missing field', (u: Record<string, unknown>) => ({ ...u, companyName: undefined }), 'companyName'],
    ['a weak password', (u: Record<string, unknown>) => ({ ...u, password: 'password1' }), 'password'],
    ['a short password', (u: Record<string, unknown>) => ({ ...u, password: 'Ab1' }), 'password'],
    ['a bad e-mail', (u: Record<string, unknown>) => ({ ...u, email: 'ada@' }), 'email'],
    ['a long name', (u: Record<string, unknown>) => ({ ...u, firstName: 'x'.repeat(101) }), 'firstName'],
    ['an unknown field', (u: Record<string, unknown>) => ({ ...u, accountId: 'br_01JZ3N5Q8W0000000000000000' }), 'accountId'],
    ['a wrong type', (u: Record<string, unknown>) => ({ ...u, lastName: 7 }), 'lastName'],
  ])('answers 400 for %s, naming the field', async (_name, change, path) => {
    const res = await api('/auth/register', { method: 'POST', body: change(newUser()) });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect(res.body.type).toBe('/problems/validation-error');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it.each([
    ['malformed JSON', '{"email":'],
    ['an array', '[]'],
    ['a string', '"hello"'],
    ['an empty body', ''],
    ['a __proto__ key', '{"__proto__":{"admin":true},"email":"a@b.co"}'],
    ['a constructor key', '{"constructor":{"prototype":{}}}'],
  ])('answers 400 problem+json for %s', async (_name, rawBody) => {
    const res = await api('/auth/register', { method: 'POST', rawBody });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect(res.body.status).toBe(400);
  });

  it('answers 413 for a body over 1 MB', async () => {
    const res = await api('/auth/register', { method: 'POST', body: { ...newUser(), firstName: 'x'.repeat(1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
  });
});

describe('POST /auth/login and /auth/refresh', () => {
  let user: Awaited<ReturnType<typeof registerUser>>;
  beforeAll(async () => {
    user = await registerUser();
  });

  it('logs in with any case of the e-mail', async () => {
    const res = await api('/auth/login', { method: 'POST', body: { email: user.email.toUpperCase(), password: user.password } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      token: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: expect.any(Number),
      accountId: user.accountId,
      userId: user.userId,
    });
  });

  it('gives the same 401 for a wrong password and an unknown e-mail', async () => {
    const wrong = await api('/auth/login', { method: 'POST', body: { email: user.email, password: 'Wrong1234' } });
    const unknown = await api('/auth/login', { method: 'POST', body: { email: uniqueEmail(), password: 'Wrong1234' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.headers.get('content-type')).toBe(PROBLEM);
    const { instance: _a, ...wrongBody } = wrong.body;
    const { instance: _b, ...unknownBody } = unknown.body;
    expect(wrongBody).toEqual(unknownBody);
  });

  it('answers 400 for a login body with missing or unknown fields', async () => {
    expect((await api('/auth/login', { method: 'POST', body: { email: user.email } })).status).toBe(400);
    expect((await api('/auth/login', { method: 'POST', body: { email: user.email, password: 'x', remember: true } })).status).toBe(400);
  });

  it('refreshes a session into a new working token', async () => {
    const res = await api('/auth/refresh', { method: 'POST', body: { refreshToken: user.refreshToken } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ token: expect.any(String), expiresIn: expect.any(Number) });
    const me = await api('/auth/me', { token: res.body.token });
    expect(me.status).toBe(200);
    expect(me.body.user.userId).toBe(user.userId);
  });

  it('answers 401 for a bad refresh token and 400 for a missing one', async () => {
    expect((await api('/auth/refresh', { method: 'POST', body: { refreshToken: 'not-a-token' } })).status).toBe(401);
    expect((await api('/auth/refresh', { method: 'POST', body: {} })).status).toBe(400);
  });
});

describe('GET /auth/me', () => {
  it('answers 401 without a token, with garbage, and with a refresh token', async () => {
    const user = await registerUser();
    for (const token of [undefined, 'garbage', user.refreshToken]) {
      const res = await api('/auth/me', { token });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
    }
  });
});

describe('a failed register leaves nothing behind', () => {
  it('rolls back the identity when the e-mail item is taken, so the e-mail can register later', async () => {
    const email = uniqueEmail();
    // A stale uniqueness item makes the transaction fail after the Cognito user was created.
    await dynamo().send(new PutCommand({ TableName: stack().tableName, Item: { ...keys.email(email), type: 'Email', email } }));
    const res = await api('/auth/register', { method: 'POST', body: newUser(email) });
    expect(res.status).toBe(409);
    const login = await api('/auth/login', { method: 'POST', body: { email, password: PASSWORD } });
    expect(login.status).toBe(401); // the identity was removed
    await dynamo().send(new DeleteCommand({ TableName: stack().tableName, Key: keys.email(email) }));
    const again = await api('/auth/register', { method: 'POST', body: newUser(email) });
    expect(again.status).toBe(201);
  });

  describe('when DynamoDB fails mid-register (a fault injected into the repository, real Cognito)', () => {
    let restore: () => void;
    beforeAll(() => {
      restore = pointAtStack();
    });
    afterAll(() => restore());

    it('removes the Cognito user, writes no item, and the e-mail registers again', async () => {
      const user = newUser();
      const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      const failing = { ...accounts, createAccountWithOwner: async () => Promise.reject(throttled) };
      await expect(register(user, { identity, accounts: failing, sessions: userUpdates, limits, mail: defaultMail, now: () => new Date() })).rejects.toThrow('Rate exceeded');
      expect(await identity.createdAt(user.email)).toBeUndefined();
      const item = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.email(user.email) }));
      expect(item.Item).toBeUndefined();
      expect((await api('/auth/register', { method: 'POST', body: user })).status).toBe(201);
    });
  });
});
