/**
 * A team in one account, against the local stack: invitations by e-mail (links read from the outbox), roles on
 * every route from the route table, the users list, role changes, removal, seats and the last admin.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes, type RouteRole } from '#shared/routes.ts';
import { keys } from '#shared/db/keys.ts';
import { api, dynamo, registerUser, stack, uniqueEmail, type RegisteredUser } from './harness.ts';
import { linkInMail } from './outbox.ts';

const PROBLEM = 'application/problem+json';
const PASSWORD = 'Corr3ct-Horse';

interface Member {
  email: string;
  userId: string;
  token: string;
  refreshToken: string;
}

async function invite(admin: { token: string }, email: string, role: RouteRole) {
  return api('/invitations', { method: 'POST', token: admin.token, body: { email, role } });
}

/** Invites `role`, reads the link out of the outbox, accepts it: the new user's session. */
async function join(admin: { token: string; accountId: string }, role: RouteRole): Promise<Member> {
  const email = uniqueEmail(role);
  const invited = await invite(admin, email, role);
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  const { url, token } = await linkInMail(email, '/accept-invitation');
  expect(url.startsWith(stack().apiUrl.replace(/\/api$/, ''))).toBe(true);
  const accepted = await api('/auth/accept-invitation', { method: 'POST', body: { token, password: PASSWORD, firstName: 'Grace', lastName: role } });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
  expect(accepted.body.accountId).toBe(admin.accountId);
  return { email, userId: accepted.body.userId, token: accepted.body.token, refreshToken: accepted.body.refreshToken };
}

async function accountPartition(accountId: string) {
  const res = await dynamo().send(
    new QueryCommand({ TableName: stack().tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.account(accountId).pk }, ConsistentRead: true }),
  );
  return JSON.stringify(res.Items);
}

describe('invitations', () => {
  it('invite → e-mail with a link into the dashboard → accept: a verified user of the account with the invited role', async () => {
    const admin = await registerUser();
    const email = uniqueEmail('invitee');
    const res = await invite(admin, email, 'member');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^inv_/),
      email,
      role: 'member',
      status: 'pending',
      invitedBy: admin.userId,
      expiresAt: expect.any(String),
      createdAt: expect.any(String),
    });
    expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBe(7 * 86_400_000);
    const listed = await api('/invitations', { token: admin.token });
    expect(listed.body).toEqual({ items: [res.body], nextCursor: null });

    const { token, mail } = await linkInMail(email, '/accept-invitation');
    expect(mail.subject).toMatch(/^\[Burnrate\] You're invited to /);
    expect(token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const accepted = await api('/auth/accept-invitation', { method: 'POST', body: { token, password: PASSWORD, firstName: 'Grace', lastName: 'Hopper' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body).toEqual({ accountId: admin.accountId, userId: expect.stringMatching(/^usr_/), token: expect.any(String), refreshToken: expect.any(String), expiresIn: expect.any(Number) });
    const me = await api('/auth/me', { token: accepted.body.token });
    expect(me.body.user).toMatchObject({ email, role: 'member', emailVerified: true, alertEmails: true });
    expect(me.body.account.accountId).toBe(admin.accountId);

    const users = await api('/users', { token: accepted.body.token });
    expect(users.status).toBe(200);
    expect(users.body.items.map((u: { email: string }) => u.email)).toEqual([admin.email, email]);
    expect((await api('/invitations', { token: admin.token })).body.items).toEqual([]);
    // The link works once.
    const again = await api('/auth/accept-invitation', { method: 'POST', body: { token, password: PASSWORD, firstName: 'G', lastName: 'H' } });
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toBe(PROBLEM);
    expect(again.body.type).toBe('/problems/invalid-token');
    // Login works with the chosen password.
    expect((await api('/auth/login', { method: 'POST', body: { email, password: PASSWORD } })).status).toBe(200);
  });

  it('refuses an address that has a user (409 email-taken) and a second pending invitation to one address (409)', async () => {
    const admin = await registerUser();
    const other = await registerUser();
    const taken = await invite(admin, other.email, 'viewer');
    expect(taken.status).toBe(409);
    expect(taken.body.type).toBe('/problems/email-taken');
    const email = uniqueEmail('twice');
    expect((await invite(admin, email, 'viewer')).status).toBe(201);
    const twice = await invite(admin, email, 'member');
    expect(twice.status).toBe(409);
    expect(twice.body.type).toBe('/problems/invitation-pending');
  });

  it('a revoked invitation’s link stops working; unknown and malformed tokens are 400 invalid-token', async () => {
    const admin = await registerUser();
    const email = uniqueEmail('revoked');
    const res = await invite(admin, email, 'viewer');
    const { token } = await linkInMail(email, '/accept-invitation');
    expect((await api(`/invitations/${res.body.id}`, { method: 'DELETE', token: admin.token })).status).toBe(204);
    expect((await api(`/invitations/${res.body.id}`, { method: 'DELETE', token: admin.token })).status).toBe(404);
    for (const bad of [token, 'A'.repeat(43), 'short']) {
      const accepted = await api('/auth/accept-invitation', { method: 'POST', body: { token: bad, password: PASSWORD, firstName: 'A', lastName: 'B' } });
      expect(accepted.status).toBe(400);
      expect(accepted.body.type).toBe('/problems/invalid-token');
    }
    // Nothing was created for the address: it can still register.
    expect((await api('/auth/login', { method: 'POST', body: { email, password: PASSWORD } })).status).toBe(401);
  });

  it('another account’s invitation id answers 404', async () => {
    const a = await registerUser();
    const b = await registerUser();
    const res = await invite(a, uniqueEmail('x'), 'viewer');
    expect((await api(`/invitations/${res.body.id}`, { method: 'DELETE', token: b.token })).status).toBe(404);
    expect((await api('/invitations', { token: a.token })).body.items).toHaveLength(1);
  });
});

describe('seats', () => {
  it('FREE has 3 seats: users plus pending invitations; a revoked invitation gives its seat back', async () => {
    const admin = await registerUser();
    const first = await invite(admin, uniqueEmail('s1'), 'viewer');
    expect((await invite(admin, uniqueEmail('s2'), 'viewer')).status).toBe(201);
    const full = await invite(admin, uniqueEmail('s3'), 'viewer');
    expect(full.status).toBe(429);
    expect(full.headers.get('content-type')).toBe(PROBLEM);
    expect(full.body.type).toBe('/problems/user-limit-reached');
    expect((await api('/billing/status', { token: admin.token })).body.usage).toMatchObject({ users: 3, userLimit: 3 });
    expect((await api(`/invitations/${first.body.id}`, { method: 'DELETE', token: admin.token })).status).toBe(204);
    expect((await invite(admin, uniqueEmail('s4'), 'viewer')).status).toBe(201);
  });

  it('100 concurrent invitations on a FREE account create exactly the 2 seats left', async () => {
    const admin = await registerUser();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => invite(admin, uniqueEmail(`race${i}`), 'viewer')));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(98);
    const pending = await api('/invitations?limit=100', { token: admin.token });
    expect(pending.body.items).toHaveLength(2);
    expect((await api('/billing/status', { token: admin.token })).body.usage).toMatchObject({ users: 3, userLimit: 3 });
  });
});

describe('roles on every route (the route table × admin, member, viewer)', () => {
  let admin: RegisteredUser;
  let member: Member;
  let viewer: Member;
  beforeAll(async () => {
    admin = await registerUser();
    member = await join(admin, 'member');
    viewer = await join(admin, 'viewer');
  });

  const RANK: Record<RouteRole, number> = { viewer: 0, member: 1, admin: 2 };
  const jwtRoutes = routes.filter((r) => r.auth === 'jwt');
  const fill = (path: string) =>
    path
      .replace('{hash}', 'a'.repeat(64))
      .replace('{userId}', 'usr_01JZ3N5Q8W0000000000000000')
      .replace('{id}', 'bud_01JZ3N5Q8W0000000000000000');

  it('every jwt route names its least role', () => {
    expect(jwtRoutes.filter((r) => !r.role).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it.each(['viewer', 'member'] as const)('%s: a call beyond the role is 403 forbidden and changes nothing; within it, never 403', async (role) => {
    const caller = role === 'viewer' ? viewer : member;
    const before = await accountPartition(admin.accountId);
    const refused: string[] = [];
    for (const route of jwtRoutes) {
      // `{}` is refused by every write but POST /spend/exports (its fields are optional): that one gets a bad date.
      const body = route.path === '/spend/exports' ? { from: 'not-a-date' } : {};
      const res = await api(fill(route.path), { method: route.method, token: caller.token, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body }) });
      const allowed = RANK[role] >= RANK[route.role!];
      if (allowed) {
        expect(res.status, `${route.method} ${route.path} as ${role}: ${JSON.stringify(res.body)}`).not.toBe(403);
      } else {
        expect(res.status, `${route.method} ${route.path} as ${role}`).toBe(403);
        expect(res.headers.get('content-type')).toBe(PROBLEM);
        expect(res.body.type).toBe('/problems/forbidden');
        refused.push(`${route.method} ${route.path}`);
      }
    }
    expect(refused.length).toBeGreaterThan(0);
    // Writes allowed to the role may have changed the account (e.g. the member's PATCH /keys 404s, nothing else
    // writes with these bodies); the refused ones must not have: the partition is as before.
    expect(await accountPartition(admin.accountId)).toBe(before);
  });

  it('the table of docs/features/identity-and-teams.md: viewer reads, member manages budgets and rules, only admin manages keys, team and billing', () => {
    const need = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path)?.role;
    expect(need('GET', '/keys')).toBe('viewer');
    expect(need('GET', '/users')).toBe('viewer');
    expect(need('GET', '/ingest-keys')).toBe('viewer');
    expect(need('PATCH', '/alerts/{id}/acknowledge')).toBe('member');
    expect(need('PATCH', '/keys/{hash}')).toBe('member');
    expect(need('POST', '/budgets')).toBe('member');
    expect(need('DELETE', '/alert-rules/{id}')).toBe('member');
    expect(need('POST', '/ingest-keys')).toBe('admin');
    expect(need('GET', '/webhook-secret')).toBe('admin');
    expect(need('POST', '/invitations')).toBe('admin');
    expect(need('PATCH', '/users/{userId}')).toBe('admin');
    expect(need('POST', '/billing/checkout')).toBe('admin');
    expect(need('POST', '/spend/exports')).toBe('member');
    expect(need('GET', '/spend/exports/{id}')).toBe('viewer');
  });

  it('a viewer promoted to member manages budgets; demoted again it can’t', async () => {
    const budget = { monthlyLimit: 10, alertThreshold: 80, scope: 'ACCOUNT' };
    expect((await api('/budgets', { method: 'POST', token: viewer.token, body: budget })).status).toBe(403);
    const promoted = await api(`/users/${viewer.userId}`, { method: 'PATCH', token: admin.token, body: { role: 'member' } });
    expect(promoted.status, JSON.stringify(promoted.body)).toBe(200);
    expect(promoted.body).toMatchObject({ userId: viewer.userId, role: 'member' });
    const created = await api('/budgets', { method: 'POST', token: viewer.token, body: budget });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await api(`/users/${viewer.userId}`, { method: 'PATCH', token: admin.token, body: { role: 'viewer' } })).status).toBe(200);
    expect((await api(`/budgets/${created.body.id}`, { method: 'DELETE', token: viewer.token })).status).toBe(403);
  });
});

describe('removal and the last admin', () => {
  it('a removed user: its token answers 401 and its refresh token too; its address can register again', async () => {
    const admin = await registerUser();
    const gone = await join(admin, 'member');
    expect((await api('/keys', { token: gone.token })).status).toBe(200);
    expect((await api(`/users/${gone.userId}`, { method: 'DELETE', token: admin.token })).status).toBe(204);
    const afterwards = await api('/keys', { token: gone.token });
    expect(afterwards.status).toBe(401);
    expect(afterwards.headers.get('content-type')).toBe(PROBLEM);
    expect((await api('/auth/refresh', { method: 'POST', body: { refreshToken: gone.refreshToken } })).status).toBe(401);
    expect((await api('/users', { token: admin.token })).body.items).toHaveLength(1);
    expect((await api('/billing/status', { token: admin.token })).body.usage.users).toBe(1);
    const again = await api('/auth/register', {
      method: 'POST',
      body: { email: gone.email, password: PASSWORD, firstName: 'Back', lastName: 'Again', companyName: 'Elsewhere' },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect((await api(`/users/${gone.userId}`, { method: 'DELETE', token: admin.token })).status).toBe(404);
  });

  it('the last admin can be neither demoted nor removed (409 last-admin)', async () => {
    const admin = await registerUser();
    for (const res of [
      await api(`/users/${admin.userId}`, { method: 'PATCH', token: admin.token, body: { role: 'member' } }),
      await api(`/users/${admin.userId}`, { method: 'DELETE', token: admin.token }),
    ]) {
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
      expect(res.body.type).toBe('/problems/last-admin');
    }
    expect((await api('/auth/me', { token: admin.token })).body.user.role).toBe('admin');
  });

  it('two admins demoting each other at the same moment leave exactly one admin', async () => {
    for (let round = 0; round < 3; round++) {
      const first = await registerUser();
      const second = await join(first, 'admin');
      const [a, b] = await Promise.all([
        api(`/users/${second.userId}`, { method: 'PATCH', token: first.token, body: { role: 'viewer' } }),
        api(`/users/${first.userId}`, { method: 'PATCH', token: second.token, body: { role: 'viewer' } }),
      ]);
      const statuses = [a.status, b.status].sort();
      // One demotion wins; the other finds one admin left (409), or — if the winner demoted the caller first —
      // its caller is no admin any more (403).
      expect(statuses[0]).toBe(200);
      expect([403, 409]).toContain(statuses[1]);
      const users = await api('/users', { token: first.token });
      expect(users.body.items.filter((u: { role: string }) => u.role === 'admin')).toHaveLength(1);
    }
  });

  it('another account’s user id answers 404; a bad role 400', async () => {
    const a = await registerUser();
    const b = await registerUser();
    expect((await api(`/users/${b.userId}`, { method: 'PATCH', token: a.token, body: { role: 'viewer' } })).status).toBe(404);
    expect((await api(`/users/${b.userId}`, { method: 'DELETE', token: a.token })).status).toBe(404);
    const bad = await api(`/users/${a.userId}`, { method: 'PATCH', token: a.token, body: { role: 'owner' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('role');
  });
});
