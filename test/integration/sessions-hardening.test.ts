/**
 * Issue 19, rows 1, 7 and 8, against the local stack with real concurrency:
 * - a password reset or change ends every session issued before it, at millisecond precision, including logins
 *   and refreshes that race with it (6 parallel login + refresh loops of an attacker who knows the old password);
 * - login takes an e-mail address, never a Cognito `sub` or another username;
 * - a reset or change of password voids the user's other outstanding reset links.
 */
import { describe, expect, it } from 'vitest';
import { api, registerUser, type ApiResponse } from './harness.ts';
import { linkInMail } from './outbox.ts';
import { claimsOf } from './tokens.ts';

const post = (path: string, body?: unknown, token?: string) => api(path, { method: 'POST', ...(body === undefined ? {} : { body }), token });
const me = (token: string) => api('/auth/me', { token });
const refresh = (refreshToken: string) => post('/auth/refresh', { refreshToken });
const login = (email: string, password: string) => post('/auth/login', { email, password });

function expectProblem(res: ApiResponse, status: number, type: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ type, status });
}

interface Loot {
  idTokens: string[];
  refreshTokens: string[];
}

/**
 * An attacker who knows the old password: `loops` parallel loops, each logging in and refreshing what it got, from
 * before `action` (started once the first login succeeded) until 300 ms after it answered; every token any of them
 * received — also those answered after `action` finished — is kept. Resolves `action`'s response and the loot.
 */
async function duringAttack(email: string, password: string, loops: number, action: () => Promise<ApiResponse>): Promise<{ res: ApiResponse; loot: Loot }> {
  const loot: Loot = { idTokens: [], refreshTokens: [] };
  let stopAt = Infinity;
  let signalStarted!: () => void;
  const started = new Promise<void>((resolve) => (signalStarted = resolve));
  const looting = Promise.all(
    Array.from({ length: loops }, async () => {
      while (Date.now() < stopAt) {
        const signedIn = await login(email, password);
        if (signedIn.status !== 200) continue;
        loot.idTokens.push(signedIn.body.token);
        loot.refreshTokens.push(signedIn.body.refreshToken);
        signalStarted();
        for (const refreshToken of loot.refreshTokens.slice(-3)) {
          const refreshed = await refresh(refreshToken);
          if (refreshed.status === 200) loot.idTokens.push(refreshed.body.token);
        }
      }
    }),
  );
  await started;
  const res = await action();
  stopAt = Date.now() + 300; // the loops keep going a moment: logins answered after the action count too
  await looting;
  return { res, loot };
}

/** Every token of the loot is refused now: ID tokens on a JWT route, refresh tokens at /auth/refresh. */
async function expectAllRefused(loot: Loot): Promise<void> {
  const idStatuses = await Promise.all(loot.idTokens.map(async (token) => (await me(token)).status));
  const refreshStatuses = await Promise.all(loot.refreshTokens.map(async (token) => (await refresh(token)).status));
  expect(idStatuses.filter((s) => s !== 401), `ID tokens still working of ${idStatuses.length}`).toEqual([]);
  expect(refreshStatuses.filter((s) => s !== 401), `refresh tokens still working of ${refreshStatuses.length}`).toEqual([]);
}

describe('a reset or change of password ends every session issued before it (row 1)', () => {
  it('6 parallel login + refresh loops with the old password during a reset: none of their tokens works afterwards', async () => {
    const victim = await registerUser();
    expect((await post('/auth/forgot-password', { email: victim.email })).status).toBe(202);
    const { token } = await linkInMail(victim.email, '/reset-password');

    const { res: reset, loot } = await duringAttack(victim.email, victim.password, 6, () => post('/auth/reset-password', { token, password: 'Reset1Password' }));
    expect(reset.status).toBe(204);
    expect(loot.idTokens.length).toBeGreaterThan(0);

    // The owner signs in with the new password right away (inside the second of the reset): that session works.
    const owner = await login(victim.email, 'Reset1Password');
    expect(owner.status).toBe(200);
    expect((await me(owner.body.token)).status).toBe(200);
    const ownerRefreshed = await refresh(owner.body.refreshToken);
    expect(ownerRefreshed.status).toBe(200);
    expect((await me(ownerRefreshed.body.token)).status).toBe(200);

    await expectAllRefused(loot);
    expectProblem(await login(victim.email, victim.password), 401, '/problems/unauthorized');
  });

  it('the same during a change of password: only the caller’s own ID token and its new sign-in work afterwards', async () => {
    const victim = await registerUser();
    const { res: change, loot } = await duringAttack(victim.email, victim.password, 6, () =>
      post('/auth/change-password', { currentPassword: victim.password, newPassword: 'Change1Password' }, victim.token),
    );
    expect(change.status).toBe(204);

    expect((await me(victim.token)).status).toBe(200);
    const again = await login(victim.email, 'Change1Password');
    expect(again.status).toBe(200);
    expect((await me(again.body.token)).status).toBe(200);
    await expectAllRefused(loot);
  });

  it('an ID token issued in the very second of the reset, before it, is refused (iat has whole seconds)', async () => {
    const victim = await registerUser();
    expect((await post('/auth/forgot-password', { email: victim.email })).status).toBe(202);
    const { token } = await linkInMail(victim.email, '/reset-password');
    // Sign in at the start of a second, reset within the same second.
    const wait = 1000 - (Date.now() % 1000);
    await new Promise((resolve) => setTimeout(resolve, wait + 5));
    const before = await login(victim.email, victim.password);
    expect(before.status).toBe(200);
    const reset = await post('/auth/reset-password', { token, password: 'Reset2Password' });
    expect(reset.status).toBe(204);
    expectProblem(await me(before.body.token), 401, '/problems/unauthorized');
    expectProblem(await refresh(before.body.refreshToken), 401, '/problems/unauthorized');
  });
});

describe('login takes an e-mail address (row 7)', () => {
  it('a Cognito sub or any other username with the right password: 400, no session', async () => {
    const user = await registerUser();
    const sub = String(claimsOf(user.token).sub);
    expect(sub).toMatch(/^[0-9a-f-]{36}$/);
    for (const username of [sub, sub.toUpperCase(), 'admin', `${user.email} `.replace('@', ' at ')]) {
      const res = await login(username, user.password);
      expectProblem(res, 400, '/problems/validation-error');
      expect(res.body.errors[0].path).toBe('email');
    }
    expect((await login(` ${user.email.toUpperCase()} `, user.password)).status).toBe(200);
  });
});

describe('a reset or change of password voids the other reset links (row 8)', () => {
  it('of two links, the one not used stops working after the reset', async () => {
    const user = await registerUser();
    expect((await post('/auth/forgot-password', { email: user.email })).status).toBe(202);
    const older = await linkInMail(user.email, '/reset-password');
    expect((await post('/auth/forgot-password', { email: user.email })).status).toBe(202);
    let newer = await linkInMail(user.email, '/reset-password');
    for (let i = 0; newer.token === older.token && i < 50; i++) newer = await linkInMail(user.email, '/reset-password');
    expect(newer.token).not.toBe(older.token);

    expect((await post('/auth/reset-password', { token: newer.token, password: 'Newer1Password' })).status).toBe(204);
    expectProblem(await post('/auth/reset-password', { token: older.token, password: 'Older1Password' }), 400, '/problems/invalid-token');
    expect((await login(user.email, 'Newer1Password')).status).toBe(200);
    expectProblem(await login(user.email, 'Older1Password'), 401, '/problems/unauthorized');
  });

  it('a link asked for before a change of password stops working; one asked for after works', async () => {
    const user = await registerUser();
    expect((await post('/auth/forgot-password', { email: user.email })).status).toBe(202);
    const older = await linkInMail(user.email, '/reset-password');
    expect((await post('/auth/change-password', { currentPassword: user.password, newPassword: 'Change2Password' }, user.token)).status).toBe(204);
    expectProblem(await post('/auth/reset-password', { token: older.token, password: 'Older2Password' }), 400, '/problems/invalid-token');
    expect((await login(user.email, 'Change2Password')).status).toBe(200);

    expect((await post('/auth/forgot-password', { email: user.email })).status).toBe(202);
    let fresh = await linkInMail(user.email, '/reset-password');
    for (let i = 0; fresh.token === older.token && i < 50; i++) fresh = await linkInMail(user.email, '/reset-password');
    expect((await post('/auth/reset-password', { token: fresh.token, password: 'Fresh2Password' })).status).toBe(204);
  });
});
