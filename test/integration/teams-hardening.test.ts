/**
 * Issue 19, rows 2, 3, 6, 9, 12 and 14 (the first two), against the local stack with real concurrency:
 * - invitation e-mail can't be a spam or phishing channel (caps per account and per address, Burnrate's words first);
 * - with seats full, POST /invitations tells nothing about the address (no enumeration oracle);
 * - concurrent PATCH and DELETE of one user never answer 500;
 * - demoting or removing an admin revokes the invitations that admin sent;
 * - GET /auth/invitation tells the invitation page the company, from the server;
 * - concurrent accepts of one invitation: the losers get 400 invalid-token; an expired invitation takes no seat.
 */
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import type { RouteRole } from '#shared/routes.ts';
import { billingStatus } from '#shared/billing/status.ts';
import { invite as inviteDirect } from '#shared/invitations/service.ts';
import { api, pointAtStack, registerUser, setPlan, stack, uniqueEmail, type ApiResponse } from './harness.ts';
import { linkInMail, mailTo } from './outbox.ts';

const PASSWORD = 'Corr3ct-Horse';
const DAY = 86_400_000;

function expectProblem(res: ApiResponse, status: number, type: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ type, status });
}

const invite = (admin: { token: string }, email: string, role: RouteRole = 'viewer') => api('/invitations', { method: 'POST', token: admin.token, body: { email, role } });
const revoke = (admin: { token: string }, id: string) => api(`/invitations/${id}`, { method: 'DELETE', token: admin.token });
const accept = (token: string, firstName = 'Grace') => api('/auth/accept-invitation', { method: 'POST', body: { token, password: PASSWORD, firstName, lastName: 'Hopper' } });

/** Invites `email` as `role` and accepts the link: the new user's session. */
async function join(admin: { token: string }, role: RouteRole, email = uniqueEmail(role)) {
  expect((await invite(admin, email, role)).status).toBe(201);
  const accepted = await accept((await linkInMail(email, '/accept-invitation')).token);
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
  return { email, userId: accepted.body.userId as string, token: accepted.body.token as string };
}

describe('invitation e-mail caps (row 2)', () => {
  it('invite → revoke → invite to one address: the 4th e-mail of the day is a 429 with Retry-After, and only 3 arrive', async () => {
    const admin = await registerUser();
    const target = uniqueEmail('inbox');
    for (let i = 0; i < 3; i++) {
      const res = await invite(admin, target);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect((await revoke(admin, res.body.id)).status).toBe(204);
    }
    const fourth = await invite(admin, target);
    expectProblem(fourth, 429, '/problems/too-many-requests');
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(23 * 3600);
    // Another account can't reach that inbox either: the cap is the address's.
    expectProblem(await invite(await registerUser(), target), 429, '/problems/too-many-requests');
    expect(await mailTo(target)).toHaveLength(3);
  });

  it('one account sends at most 20 invitation e-mails a day (revoking gives none back); the 21st is a 429', async () => {
    const admin = await registerUser();
    await setPlan(admin.accountId, 'GROWTH');
    const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => invite(admin, uniqueEmail(`burst${i}`))));
    expect(sent.map((r) => r.status)).toEqual(Array(20).fill(201));
    for (const res of sent) expect((await revoke(admin, res.body.id)).status).toBe(204);
    const extra = await invite(admin, uniqueEmail('burst-extra'));
    expectProblem(extra, 429, '/problems/too-many-requests');
    expect(Number(extra.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('Subject and first line are Burnrate’s words; the company and inviter names come later, quoted', async () => {
    const lure = 'ACTION REQUIRED: claim $500 at http://evil.example/x';
    const admin = await registerUser({ companyName: lure, firstName: 'URGENT', lastName: 'wire $500 now' });
    const target = uniqueEmail('phish');
    expect((await invite(admin, target, 'member')).status).toBe(201);
    const { mail } = await linkInMail(target, '/accept-invitation');
    expect(mail.subject).toBe('[Burnrate] You\'re invited to join a team on Burnrate');
    const body = mail.text.split(/\r?\n\r?\n/).slice(1).join('\n\n').replace(/=\r?\n/g, '');
    const lines = body.split(/\r?\n/).filter((line) => line.trim() !== '');
    expect(lines[0]).not.toMatch(/URGENT|ACTION|evil|\$500/);
    expect(body).toContain(`"${lure}"`);
    expect(body).toContain('"URGENT wire $500 now"');
    expect(body.indexOf(lure)).toBeGreaterThan(body.indexOf(lines[0]!) + lines[0]!.length);
  });
});

describe('no enumeration through invitations (row 3)', () => {
  it('seats full: a registered and an unknown address both answer 429 user-limit-reached; seats free: the registered one 409', async () => {
    const admin = await registerUser();
    const registered = await registerUser();
    expect((await invite(admin, uniqueEmail('seat1'))).status).toBe(201);
    const second = await invite(admin, uniqueEmail('seat2'));
    expect(second.status).toBe(201);
    const probes = await Promise.all([registered.email, uniqueEmail('unknown'), registered.email.toUpperCase()].map((email) => invite(admin, email)));
    for (const res of probes) expectProblem(res, 429, '/problems/user-limit-reached');

    expect((await revoke(admin, second.body.id)).status).toBe(204);
    expectProblem(await invite(admin, registered.email), 409, '/problems/email-taken');
  });
});

describe('concurrent changes of one user never answer 500 (row 6)', () => {
  it('30 PATCHes of one user at once all answer 200; its role is the one of the last to win', async () => {
    const admin = await registerUser();
    await setPlan(admin.accountId, 'GROWTH');
    const member = await join(admin, 'member');
    const roles = Array.from({ length: 30 }, (_, i) => (['viewer', 'member', 'admin'] as const)[i % 3]);
    const results = await Promise.all(roles.map((role) => api(`/users/${member.userId}`, { method: 'PATCH', token: admin.token, body: { role } })));
    expect(results.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const users = await api('/users', { token: admin.token });
    const after = users.body.items.find((u: { userId: string }) => u.userId === member.userId);
    expect(roles).toContain(after.role);
    // The admin count stayed exact: the owner can step down only if the member ended as admin.
    const stepDown = await api(`/users/${admin.userId}`, { method: 'PATCH', token: admin.token, body: { role: 'member' } });
    expect(stepDown.status).toBe(after.role === 'admin' ? 200 : 409);
  });

  it('two DELETEs of one user (a member, an admin) at once: one 204, one 404; with PATCHes racing them, never a 500', async () => {
    const admin = await registerUser();
    await setPlan(admin.accountId, 'GROWTH');
    for (const role of ['member', 'admin', 'admin'] as const) {
      // An admin too: the loser of two removals of an admin finds the admin count lowered — by the winner, not by a
      // last admin — and must answer 404, not 409 last-admin.
      const member = await join(admin, role);
      const del = () => api(`/users/${member.userId}`, { method: 'DELETE', token: admin.token });
      const patch = (role: RouteRole) => api(`/users/${member.userId}`, { method: 'PATCH', token: admin.token, body: { role } });
      const [a, b, ...patches] = await Promise.all([del(), del(), patch('viewer'), patch('admin'), patch('member')]);
      expect([a!.status, b!.status].sort()).toEqual([204, 404]);
      for (const res of patches) expect([200, 404]).toContain(res.status);
    }
    expect((await api('/billing/status', { token: admin.token })).body.usage.users).toBe(1);
  });
});

describe('a demoted or removed admin’s invitations end (row 9)', () => {
  it('demoted: the invitation it sent is revoked (its link answers 400); removed: the same', async () => {
    const owner = await registerUser();
    await setPlan(owner.accountId, 'GROWTH');
    for (const action of ['demote', 'remove'] as const) {
      const second = await join(owner, 'admin');
      const target = uniqueEmail(`via-${action}`);
      expect((await invite(second, target, 'admin')).status).toBe(201);
      const { token } = await linkInMail(target, '/accept-invitation');
      const res =
        action === 'demote'
          ? await api(`/users/${second.userId}`, { method: 'PATCH', token: owner.token, body: { role: 'member' } })
          : await api(`/users/${second.userId}`, { method: 'DELETE', token: owner.token });
      expect(res.status).toBeLessThan(300);
      expectProblem(await accept(token), 400, '/problems/invalid-token');
      const pending = await api('/invitations', { token: owner.token });
      expect(pending.body.items.map((i: { email: string }) => i.email)).not.toContain(target);
    }
    // The owner's own invitations stay.
    const kept = uniqueEmail('kept');
    expect((await invite(owner, kept)).status).toBe(201);
    const demoted = await join(owner, 'admin');
    expect((await api(`/users/${demoted.userId}`, { method: 'PATCH', token: owner.token, body: { role: 'viewer' } })).status).toBe(200);
    expect((await accept((await linkInMail(kept, '/accept-invitation')).token)).status).toBe(201);
  });
});

describe('the invitation page reads the company from the server (row 12)', () => {
  it('GET /auth/invitation?token= → {company, email, role, expiresAt}, no auth; a bad, used or revoked token: 400', async () => {
    const admin = await registerUser({ companyName: 'Analytical Engines Ltd' });
    const target = uniqueEmail('page');
    const created = await invite(admin, target, 'member');
    const { url, token } = await linkInMail(target, '/accept-invitation');
    expect(new URL(url).searchParams.has('company')).toBe(false);
    const shown = await api(`/auth/invitation?token=${token}`);
    expect(shown.status, JSON.stringify(shown.body)).toBe(200);
    expect(shown.body).toEqual({ company: 'Analytical Engines Ltd', email: target, role: 'member', expiresAt: created.body.expiresAt });
    for (const bad of ['A'.repeat(43), 'short', '']) expectProblem(await api(`/auth/invitation?token=${bad}`), 400, bad === '' ? '/problems/validation-error' : '/problems/invalid-token');
    expect((await accept(token)).status).toBe(201);
    expectProblem(await api(`/auth/invitation?token=${token}`), 400, '/problems/invalid-token');
  });
});

describe('accepting races and expired invitations (row 14)', () => {
  it('5 concurrent accepts of one invitation: one 201, four 400 invalid-token', async () => {
    const admin = await registerUser();
    const target = uniqueEmail('race');
    expect((await invite(admin, target, 'member')).status).toBe(201);
    const { token } = await linkInMail(target, '/accept-invitation');
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => accept(token, `Racer${i}`)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const res of results.filter((r) => r.status !== 201)) expectProblem(res, 400, '/problems/invalid-token');
    expect((await api('/users', { token: admin.token })).body.items).toHaveLength(2);
  });

  describe('an expired invitation takes no seat (the clock moved 8 days on)', () => {
    let restore: () => void;
    beforeAll(() => {
      restore = pointAtStack({ APP_URL: 'http://localhost', OUTBOX_DIR: stack().outboxDir });
    });
    afterAll(() => restore());

    it('usage.users counts users and unexpired invitations only; a new invitation fits in the freed seats', async () => {
      const admin = await registerUser();
      expect((await invite(admin, uniqueEmail('exp1'))).status).toBe(201);
      expect((await invite(admin, uniqueEmail('exp2'))).status).toBe(201);
      expect((await billingStatus(admin.accountId)).usage.users).toBe(3);
      const later = new Date(Date.now() + 8 * DAY);
      expect((await billingStatus(admin.accountId, later)).usage.users).toBe(1);
      const auth = { accountId: admin.accountId, userId: admin.userId, email: admin.email };
      await inviteDirect(auth, { email: uniqueEmail('exp3'), role: 'viewer' }, later);
      expect((await billingStatus(admin.accountId, later)).usage.users).toBe(2);
    });
  });
});
