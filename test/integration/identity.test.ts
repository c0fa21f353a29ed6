/**
 * Trusted identities against the local stack, the way a person goes through them: the links are read out of the
 * outbox (`.eml` files) and followed. Verified e-mail (register's link, verify, resend and its limits), forgot →
 * reset (every session ends), change password (the other sessions end), PATCH /auth/me, and every bad or reused
 * token answered 400 problem+json. The request limits (RATE_LIMITS) are off on this stack: identity-limits.test.ts
 * tests them on a stack of its own.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { linkTokenHash } from '#shared/auth/tokens.ts';
import { resendVerification } from '#shared/auth/verification.ts';
import { FORGOT_PASSWORD_MIN_MS, forgotPassword } from '#shared/auth/passwords.ts';
import { identity } from '#shared/auth/identity.ts';
import type { Mail } from '#shared/auth/mail.ts';
import type { PlainEmail } from '#shared/notify/email.ts';
import { api, dynamo, pointAtStack, registerUser, stack, uniqueEmail, type ApiResponse, type RegisteredUser } from './harness.ts';
import { linkInMail, mailTo } from './outbox.ts';

const PROBLEM = 'application/problem+json';
const NEW_PASSWORD = 'Changed9Password';

function expectProblem(res: ApiResponse, status: number, type: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toBe(PROBLEM);
  expect(res.body).toMatchObject({ type, status });
}

const post = (path: string, body?: unknown, token?: string) => api(path, { method: 'POST', ...(body === undefined ? {} : { body }), token });
const me = (token: string) => api('/auth/me', { token });
const refresh = (refreshToken: string) => post('/auth/refresh', { refreshToken });
const login = (email: string, password: string) => post('/auth/login', { email, password });

/** The query string's token of a link, the way the dashboard's page reads it. */
const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

describe('verified e-mail', () => {
  let user: RegisteredUser;
  let verifyUrl: string;
  beforeAll(async () => {
    user = await registerUser();
    verifyUrl = (await linkInMail(user.email, '/verify-email')).url;
  });

  it('register sends ONE plain-text e-mail with a link into the dashboard on a line of its own', async () => {
    const mails = await mailTo(user.email);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.subject).toBe('[Burnrate] Verify your e-mail address');
    expect(mail.text).toMatch(/^Content-Type: text\/plain; charset=UTF-8$/m);
    expect(mail.text).toContain('Burnrate');
    const appUrl = stack().apiUrl.replace(/\/api$/, '');
    expect(verifyUrl).toMatch(new RegExp(`^${appUrl.replace(/[.]/g, '\\.')}/verify-email\\?token=[A-Za-z0-9_-]{20,}$`));
    // Only the token's hash is stored.
    const stored = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.linkToken(linkTokenHash(tokenOf(verifyUrl))) }));
    expect(stored.Item).toMatchObject({ kind: 'verify-email', userId: user.userId, email: user.email });
    expect(JSON.stringify(stored.Item)).not.toContain(tokenOf(verifyUrl));
  });

  it('the account works at once; the address is unverified until the link is followed, which works once', async () => {
    expect((await me(user.token)).body.user).toMatchObject({ emailVerified: false, alertEmails: true });
    const verified = await post('/auth/verify-email', { token: tokenOf(verifyUrl) });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ emailVerified: true });
    expect((await me(user.token)).body.user.emailVerified).toBe(true);
    expectProblem(await post('/auth/verify-email', { token: tokenOf(verifyUrl) }), 400, '/problems/invalid-token');
  });

  it('resend for a verified address: 409', async () => {
    expectProblem(await post('/auth/resend-verification', undefined, user.token), 409, '/problems/already-verified');
  });

  it('every bad token is a 400 invalid-token problem (unknown, malformed, of another kind), a missing one a 400 validation error', async () => {
    for (const token of [randomBytes(32).toString('base64url'), 'short', 'has spaces and !!', 'x'.repeat(300)]) {
      const res = await post('/auth/verify-email', { token });
      expectProblem(res, 400, '/problems/invalid-token');
      expect(res.body.errors).toEqual([{ path: 'token', message: expect.any(String) }]);
    }
    expectProblem(await post('/auth/verify-email', {}), 400, '/problems/validation-error');
    expectProblem(await post('/auth/verify-email', { token: 'a'.repeat(43), userId: user.userId }), 400, '/problems/validation-error');
    // A reset link's token does not verify (and stays usable for its reset).
    const other = await registerUser();
    expect((await post('/auth/forgot-password', { email: other.email })).status).toBe(202);
    const reset = await linkInMail(other.email, '/reset-password');
    expectProblem(await post('/auth/verify-email', { token: reset.token }), 400, '/problems/invalid-token');
    expect((await post('/auth/reset-password', { token: reset.token, password: NEW_PASSWORD })).status).toBe(204);
  });

  it('resend: 202 and a new link that works; a second within the minute is 429 with Retry-After; unauthenticated 401', async () => {
    const fresh = await registerUser();
    const first = await post('/auth/resend-verification', undefined, fresh.token);
    expect(first.status).toBe(202);
    expect(first.body).toBeUndefined();
    const mails = await waitForMails(fresh.email, 2);
    expect(mails.every((m) => m.subject === '[Burnrate] Verify your e-mail address')).toBe(true);
    const again = await post('/auth/resend-verification', undefined, fresh.token);
    expectProblem(again, 429, '/problems/too-many-requests');
    const retryAfter = Number(again.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await mailTo(fresh.email)).toHaveLength(2); // the refused one sent nothing
    // The newest link verifies (the first one would too, until it expires).
    const { token } = await linkInMail(fresh.email, '/verify-email');
    expect((await post('/auth/verify-email', { token })).status).toBe(200);
    expectProblem(await post('/auth/resend-verification'), 401, '/problems/unauthorized');
  });

  describe('resend: at most 5 a day (the domain function on the stack’s table, its clock moved a minute at a time)', () => {
    let restore: () => void;
    beforeAll(() => {
      restore = pointAtStack();
    });
    afterAll(() => restore());

    it('five resends a minute apart go out, the sixth that day is 429 with Retry-After until the day’s window ends', async () => {
      const fresh = await registerUser();
      const sent: PlainEmail[] = [];
      const mail: Mail = { send: async (email) => void sent.push(email), appUrl: () => 'http://app.test' };
      const auth = { accountId: fresh.accountId, userId: fresh.userId, email: fresh.email };
      const start = Date.now();
      for (let i = 0; i < 5; i++) await resendVerification(auth, new Date(start + i * 61_000), mail);
      expect(sent).toHaveLength(5);
      const sixth = await resendVerification(auth, new Date(start + 5 * 61_000), mail).catch((error: unknown) => error);
      expect(sixth).toMatchObject({ status: 429, slug: 'too-many-requests' });
      const retryAfter = Number((sixth as { headers: Record<string, string> }).headers['retry-after']);
      // The day's window started with the first resend: it ends 24 h after it.
      expect(retryAfter).toBe(Math.ceil((start + 86_400_000 - (start + 5 * 61_000)) / 1000));
      expect(sent).toHaveLength(5);
      expect(sent[0]!.lines).toContainEqual(expect.stringMatching(/^http:\/\/app\.test\/verify-email\?token=[A-Za-z0-9_-]{43}$/));
    });
  });
});

async function waitForMails(to: string, count: number) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const mails = await mailTo(to);
    if (mails.length >= count) return mails;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`fewer than ${count} messages to ${to}`);
}

describe('forgot and reset password', () => {
  it('forgot: 202 for a known and an unknown address alike; only the known one gets a link', async () => {
    const user = await registerUser();
    const known = await post('/auth/forgot-password', { email: ` ${user.email.toUpperCase()} ` });
    const unknownEmail = uniqueEmail('nobody');
    const unknown = await post('/auth/forgot-password', { email: unknownEmail });
    for (const res of [known, unknown]) {
      expect(res.status).toBe(202);
      expect(res.body).toBeUndefined();
    }
    const link = await linkInMail(user.email, '/reset-password');
    expect(link.mail.subject).toBe('[Burnrate] Reset your password');
    expect(link.url).toMatch(/\/reset-password\?token=[A-Za-z0-9_-]{20,}$/);
    expect(await mailTo(unknownEmail)).toEqual([]);
    expectProblem(await post('/auth/forgot-password', { email: 'not an address' }), 400, '/problems/validation-error');
  });

  it('forgot: a known and an unknown address make the same DynamoDB requests', async () => {
    const user = await registerUser();
    const known = await post('/auth/forgot-password', { email: user.email });
    const unknown = await post('/auth/forgot-password', { email: uniqueEmail('nobody') });
    expect(known.headers.get('x-dynamodb-commands')).toBeTruthy();
    expect(unknown.headers.get('x-dynamodb-commands')).toBe(known.headers.get('x-dynamodb-commands'));
  });

  describe('forgot: the answer waits for the same floor, known address or not (the domain function, its sleep recorded)', () => {
    let restore: () => void;
    beforeAll(() => {
      restore = pointAtStack();
    });
    afterAll(() => restore());

    it('both wait out the rest of FORGOT_PASSWORD_MIN_MS after their work; only the known one sends', async () => {
      const user = await registerUser();
      const sent: PlainEmail[] = [];
      const waits: number[] = [];
      const deps = {
        identity,
        mail: { send: async (email: PlainEmail) => void sent.push(email), appUrl: () => 'http://app.test' },
        // A clock that stands still: the work takes no time on it, so each answer waits out the whole floor, however
        // loaded the machine is.
        now: () => new Date('2026-11-26T12:00:00.000Z'),
        sleep: async (ms: number) => void waits.push(ms),
      };
      await forgotPassword({ email: user.email }, '203.0.113.5', deps);
      await forgotPassword({ email: uniqueEmail('nobody') }, '203.0.113.5', deps);
      expect(sent.map((m) => m.to)).toEqual([user.email]);
      expect(waits).toEqual([FORGOT_PASSWORD_MIN_MS, FORGOT_PASSWORD_MIN_MS]);
    });
  });

  it('reset: every session ends (ID and refresh tokens), the new password works, the link works once, the address is verified', async () => {
    const user = await registerUser();
    const second = await login(user.email, user.password);
    expect(second.status).toBe(200);
    expect((await refresh(second.body.refreshToken)).status).toBe(200);
    expect((await post('/auth/forgot-password', { email: user.email })).status).toBe(202);
    const { token } = await linkInMail(user.email, '/reset-password');

    // The password rules of register apply; a refused password does not use the link up.
    const weak = await post('/auth/reset-password', { token, password: 'password' });
    expectProblem(weak, 400, '/problems/validation-error');
    expect(new Set(weak.body.errors.map((e: { path: string }) => e.path))).toEqual(new Set(['password']));

    const reset = await post('/auth/reset-password', { token, password: NEW_PASSWORD });
    expect(reset.status).toBe(204);
    expect(reset.body).toBeUndefined();
    expectProblem(await post('/auth/reset-password', { token, password: NEW_PASSWORD }), 400, '/problems/invalid-token');

    // Every session of before: refresh tokens refused, ID tokens refused.
    for (const old of [user.refreshToken, second.body.refreshToken as string]) expectProblem(await refresh(old), 401, '/problems/unauthorized');
    for (const old of [user.token, second.body.token as string]) expectProblem(await me(old), 401, '/problems/unauthorized');
    expectProblem(await login(user.email, user.password), 401, '/problems/unauthorized');

    const fresh = await login(user.email, NEW_PASSWORD);
    expect(fresh.status).toBe(200);
    const profile = await me(fresh.body.token);
    expect(profile.status).toBe(200);
    expect(profile.body.user.emailVerified).toBe(true);
    expect((await refresh(fresh.body.refreshToken)).status).toBe(200);
  });

  it('every bad reset token is a 400 invalid-token problem, and changes nothing', async () => {
    const user = await registerUser();
    for (const token of [randomBytes(32).toString('base64url'), 'nope', '../../etc/passwd']) {
      expectProblem(await post('/auth/reset-password', { token, password: NEW_PASSWORD }), 400, '/problems/invalid-token');
    }
    // A verification link's token does not reset.
    const { token } = await linkInMail(user.email, '/verify-email');
    expectProblem(await post('/auth/reset-password', { token, password: NEW_PASSWORD }), 400, '/problems/invalid-token');
    expect((await me(user.token)).status).toBe(200);
    expect((await login(user.email, user.password)).status).toBe(200);
  });

  it('two resets with one link at the same moment: exactly one succeeds', async () => {
    const user = await registerUser();
    expect((await post('/auth/forgot-password', { email: user.email })).status).toBe(202);
    const { token } = await linkInMail(user.email, '/reset-password');
    const results = await Promise.all(['First1Password', 'Second2Password'].map((password) => post('/auth/reset-password', { token, password })));
    expect(results.map((r) => r.status).sort()).toEqual([204, 400]);
  });
});

describe('change password', () => {
  it('a wrong current password: 400 on currentPassword, nothing changes', async () => {
    const user = await registerUser();
    const res = await post('/auth/change-password', { currentPassword: `${user.password}x`, newPassword: NEW_PASSWORD }, user.token);
    expectProblem(res, 400, '/problems/validation-error');
    expect(res.body.errors).toEqual([{ path: 'currentPassword', message: expect.any(String) }]);
    expect((await login(user.email, user.password)).status).toBe(200);
    expect((await refresh(user.refreshToken)).status).toBe(200);
  });

  it('ends the OTHER sessions: the caller’s ID token keeps working; every refresh token ends; the new password signs in', async () => {
    const user = await registerUser();
    const other = await login(user.email, user.password);
    expect(other.status).toBe(200);
    const res = await post('/auth/change-password', { currentPassword: user.password, newPassword: NEW_PASSWORD }, user.token);
    expect(res.status).toBe(204);

    expect((await me(user.token)).status).toBe(200); // the caller's own session
    expectProblem(await me(other.body.token), 401, '/problems/unauthorized'); // the other session
    expectProblem(await refresh(other.body.refreshToken), 401, '/problems/unauthorized');
    expectProblem(await refresh(user.refreshToken), 401, '/problems/unauthorized'); // documented: sign in again
    expectProblem(await login(user.email, user.password), 401, '/problems/unauthorized');
    const again = await login(user.email, NEW_PASSWORD);
    expect(again.status).toBe(200);
    expect((await refresh(again.body.refreshToken)).status).toBe(200);
  });

  it('refuses a weak new password, the same password, an unknown field, and no token', async () => {
    const user = await registerUser();
    const weak = await post('/auth/change-password', { currentPassword: user.password, newPassword: 'weak' }, user.token);
    expectProblem(weak, 400, '/problems/validation-error');
    expect(weak.body.errors[0].path).toBe('newPassword');
    const same = await post('/auth/change-password', { currentPassword: user.password, newPassword: user.password }, user.token);
    expectProblem(same, 400, '/problems/validation-error');
    expect(same.body.errors[0].path).toBe('newPassword');
    expectProblem(await post('/auth/change-password', { currentPassword: user.password, newPassword: NEW_PASSWORD, userId: 'usr_x' }, user.token), 400, '/problems/validation-error');
    expectProblem(await post('/auth/change-password', { currentPassword: user.password, newPassword: NEW_PASSWORD }), 401, '/problems/unauthorized');
    expect((await me(user.token)).status).toBe(200);
  });
});

describe('PATCH /auth/me', () => {
  it('changes names and the alert e-mail switch; answers like GET /auth/me', async () => {
    const user = await registerUser();
    const res = await api('/auth/me', { method: 'PATCH', token: user.token, body: { firstName: '  Grace ', alertEmails: false } });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ firstName: 'Grace', lastName: user.lastName, alertEmails: false, emailVerified: false, role: 'admin' });
    expect(res.body).toEqual((await me(user.token)).body);
    expect(res.body.user.updatedAt > res.body.user.createdAt || res.body.user.updatedAt === res.body.user.createdAt).toBe(true);
  });

  it('refuses an empty patch and fields a user may not set on itself', async () => {
    const user = await registerUser();
    const before = (await me(user.token)).body;
    for (const body of [{}, { role: 'admin' }, { emailVerified: true }, { email: 'x@example.com' }, { firstName: '' }, { alertEmails: 'no' }]) {
      expectProblem(await api('/auth/me', { method: 'PATCH', token: user.token, body }), 400, '/problems/validation-error');
    }
    expect((await me(user.token)).body).toEqual(before);
  });
});
