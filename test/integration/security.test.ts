/**
 * The security suite, generated from the route table (shared/routes.ts) so a new route is covered the day it lands:
 *  - every `jwt` route refuses every kind of bad bearer token with 401 problem+json;
 *  - every route with an `{id}`/`{hash}` answers 404 to another account's id (and to a malformed one), and the
 *    owner's resource is unchanged afterwards — read back through the API and item by item in DynamoDB;
 *  - the `ingestKey` route refuses missing, wrong, revoked and user credentials with 401; the `stripe` route
 *    refuses unsigned and wrongly signed bodies with 400;
 *  - no mass assignment: `accountId`, `spend`, `id`, `createdAt` added to any valid body is a 400, nothing written.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes, type Route } from '#shared/routes.ts';
import { ID_PREFIX, type IdKind } from '#shared/ids.ts';
import { api, stack, type ApiResponse } from './harness.ts';
import { BAD_TOKENS, cognitoSignIn, type CognitoSession } from './tokens.ts';
import { createTenant, diffSnapshots, snapshot, type FuzzEnv } from '../fuzz/run.ts';
import { fillPath, ownId, paramKinds, routeKey, sampleValidBody, specOf, type ParamKind, type Tenant } from '../fuzz/arbitraries.ts';

const PROBLEM = 'application/problem+json';
const env = (): FuzzEnv => ({ info: stack() });

const jwtRoutes = routes.filter((r) => r.auth === 'jwt');
// Own prices (`/prices/{provider}/{model}`) name no stored resource of an account: every account has its own price of
// every model, so another account's PUT sets ITS price. Their isolation is tested below, not as an id.
const paramRoutes = routes.filter((r) => /\{\w+\}/.test(r.path) && !Object.values(paramKinds(r)).includes('name'));
const paramPaths = [...new Set(paramRoutes.map((r) => r.path))];

/** The route's path with each parameter naming the tenant's own resource of that kind. */
const ownPath = (route: Route, t: Tenant) =>
  fillPath(route.path, Object.fromEntries(Object.entries(paramKinds(route)).map(([name, kind]) => [name, ownId(t, kind)])));

/** A body the route's schema accepts (undefined for a route that reads none). */
function bodyFor(route: Route, t: Tenant): Record<string, unknown> | undefined {
  const body = sampleValidBody(route, t);
  if (body && route.path === '/auth/register') body.email = `security-${randomBytes(6).toString('hex')}@example.com`;
  return body;
}

function expectProblem(res: ApiResponse, status: number, type?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toBe(PROBLEM);
  expect(res.body).toMatchObject({ status, ...(type ? { type } : {}) });
  expect(typeof res.body.title).toBe('string');
}

/** How the owner sees a resource through the API (lists for what has no GET by id). */
async function readBack(t: Tenant, kind: ParamKind): Promise<unknown> {
  const auth = { token: t.token };
  const find = async (path: string, id: string) => {
    const res = await api(path, auth);
    expect(res.status).toBe(200);
    return (res.body.items as Array<{ id: string }>).find((item) => item.id === id);
  };
  switch (kind) {
    case 'key': {
      const res = await api(`/keys/${t.keyHash}`, auth);
      expect(res.status).toBe(200);
      return res.body;
    }
    case 'budget':
      return find('/budgets', t.budgetId);
    case 'rule':
      return find('/alert-rules', t.ruleId);
    case 'alert':
      return find('/alerts', t.alertId);
    case 'ingestKey':
      return find('/ingest-keys', t.ingestKeyId);
    case 'invitation':
      return find('/invitations', t.invitationId);
    case 'export': {
      const res = await api(`/spend/exports/${t.exportId}`, auth);
      expect(res.status).toBe(200);
      // A new link each time: the export itself is what must be unchanged.
      return { ...res.body, url: typeof res.body.url, expiresAt: typeof res.body.expiresAt };
    }
    case 'connection': {
      const res = await api(`/connections/${t.connectionId}`, auth);
      expect(res.status).toBe(200);
      return res.body;
    }
    case 'user': {
      const res = await api('/users', auth);
      expect(res.status).toBe(200);
      return (res.body.items as Array<{ userId: string }>).find((item) => item.userId === t.userId);
    }
    default:
      throw new Error(`no read-back for ${kind}`);
  }
}

let victim: Tenant;
let attacker: Tenant;
let victimSession: CognitoSession;

beforeAll(async () => {
  [victim, attacker] = await Promise.all([createTenant(env()), createTenant(env())]);
  victimSession = await cognitoSignIn(stack(), victim.email, victim.password);
});

// ------------------------------------------------------------------------------------------------------------

describe('every jwt route refuses a bad bearer token with 401 problem+json', () => {
  let before: { victim: Map<string, string>; attacker: Map<string, string> };
  beforeAll(async () => {
    before = { victim: await snapshot(env(), victim.accountId), attacker: await snapshot(env(), attacker.accountId) };
  });

  // Tokens forged from the victim's real session, aimed at the attacker's account; the path names the victim's
  // real resources and the body passes validation, so nothing but the token can refuse the request.
  const cases = jwtRoutes.flatMap((route) => BAD_TOKENS.map(([kind, forge]) => ({ route, forge, name: `${routeKey(route)}: ${kind}` })));

  it.each(cases)('$name', async ({ route, forge }) => {
    const token = forge({ stack: stack(), session: victimSession, victimAccountId: attacker.accountId });
    const body = bodyFor(route, victim);
    const res = await api(ownPath(route, victim), { method: route.method, token, ...(body ? { body } : {}) });
    expectProblem(res, 401, '/problems/unauthorized');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('and nothing changed in either account', async () => {
    expect(diffSnapshots(before.victim, await snapshot(env(), victim.accountId))).toEqual([]);
    expect(diffSnapshots(before.attacker, await snapshot(env(), attacker.accountId))).toEqual([]);
  });

  it('while the real ID token gets through on every jwt GET route', async () => {
    for (const route of jwtRoutes.filter((r) => r.method === 'GET')) {
      const res = await api(ownPath(route, victim), { token: victimSession.idToken });
      expect(res.status, `${routeKey(route)}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  });
});

// ------------------------------------------------------------------------------------------------------------

describe("another account's id is a 404, and the owner's resource is unchanged", () => {
  it('every parameterized path has a resource kind this suite can create and read back', () => {
    expect(paramPaths.length).toBeGreaterThan(0);
    for (const route of paramRoutes) {
      for (const kind of Object.values(paramKinds(route))) expect(['key', 'budget', 'rule', 'alert', 'ingestKey', 'user', 'invitation', 'export', 'connection']).toContain(kind);
    }
  });

  const crossAccount = paramRoutes.map((route) => ({ route, name: routeKey(route) }));

  it.each(crossAccount)('$name as another account → 404', async ({ route }) => {
    const kinds = Object.values(paramKinds(route));
    const apiBefore = await Promise.all(kinds.map((kind) => readBack(victim, kind)));
    const itemsBefore = await snapshot(env(), victim.accountId);
    expect(apiBefore.every((view) => view !== undefined)).toBe(true);

    // The attacker names the victim's resource, with a body that passes validation (and would suit the victim's
    // resource): only ownership can refuse it.
    const body = bodyFor(route, victim);
    const res = await api(ownPath(route, victim), { method: route.method, token: attacker.token, ...(body ? { body } : {}) });
    expectProblem(res, 404, '/problems/not-found');

    expect(await Promise.all(kinds.map((kind) => readBack(victim, kind)))).toEqual(apiBefore);
    expect(diffSnapshots(itemsBefore, await snapshot(env(), victim.accountId))).toEqual([]);
  });

  /** Ids that name nothing of the owner's: `[what, make]` for the kind of the path's first parameter. */
  const wrongIds = (kind: ParamKind): Array<[string, (t: Tenant) => string]> =>
    kind === 'key'
      ? [
          ['a word', () => 'nope'],
          ['upper-case hex', (t) => t.keyHash.toUpperCase()],
          ['one character short', (t) => t.keyHash.slice(1)],
          ['one character too many', (t) => `${t.keyHash}0`],
          ['an id of another kind', (t) => t.budgetId],
          ['well-formed but unknown', () => 'f'.repeat(64)],
        ]
      : [
          ['a word', () => 'nope'],
          ['its prefix with a short id', () => `${ID_PREFIX[kind as IdKind]}_123`],
          ['lower-cased', (t) => ownId(t, kind).toLowerCase()],
          ['one character too many', (t) => `${ownId(t, kind)}0`],
          ['an id of another kind', (t) => (kind === 'budget' ? t.ruleId : t.budgetId)],
          ['well-formed but unknown', () => `${ID_PREFIX[kind as IdKind]}_${'Z'.repeat(26)}`],
        ];
  const malformed = paramRoutes.flatMap((route) => {
    const [param, kind] = Object.entries(paramKinds(route))[0]!;
    return wrongIds(kind).map(([what, make]) => ({ route, param, make, name: `${routeKey(route)} with {${param}} ${what}` }));
  });

  it.each(malformed)('$name → 404', async ({ route, param, make }) => {
    const value = make(victim);
    const itemsBefore = await snapshot(env(), victim.accountId);
    const path = fillPath(route.path, { ...Object.fromEntries(Object.entries(paramKinds(route)).map(([n, k]) => [n, ownId(victim, k)])), [param]: value });
    const body = bodyFor(route, victim);
    const res = await api(path, { method: route.method, token: victim.token, ...(body ? { body } : {}) });
    expectProblem(res, 404, '/problems/not-found');
    expect(diffSnapshots(itemsBefore, await snapshot(env(), victim.accountId))).toEqual([]);
  });

  it("own prices are per account: another account's PUT and DELETE of the same model never touch the owner's", async () => {
    const put = await api('/prices/openai/isolation-model', { method: 'PUT', token: victim.token, body: { input: 1, output: 1 } });
    expect(put.status).toBe(200);
    const before = await snapshot(env(), victim.accountId);
    expect((await api('/prices/openai/isolation-model', { method: 'PUT', token: attacker.token, body: { input: 9, output: 9 } })).status).toBe(200);
    expect((await api('/prices/openai/isolation-model', { method: 'DELETE', token: attacker.token })).status).toBe(204);
    expectProblem(await api('/prices/openai/isolation-model', { method: 'DELETE', token: attacker.token }), 404, '/problems/not-found');
    expect(diffSnapshots(before, await snapshot(env(), victim.accountId))).toEqual([]);
    const mine = (await api('/prices', { token: victim.token })).body.items.find((p: { model: string }) => p.model === 'isolation-model');
    expect(mine).toMatchObject({ source: 'account', input: 1, output: 1 });
    const theirs = (await api('/prices', { token: attacker.token })).body.items.find((p: { model: string }) => p.model === 'isolation-model');
    expect(theirs).toBeUndefined();
  });

  it("the victim's ingest key still works after the attacker tried to delete it", async () => {
    const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': victim.ingestKey }, body: { events: [] } });
    // Past authentication (a 401 would mean the key was revoked): the empty batch itself is a 400.
    expectProblem(res, 400);
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('machine credentials', () => {
  const ingestRoutes = routes.filter((r) => r.auth === 'ingestKey');
  const stripeRoutes = routes.filter((r) => r.auth === 'stripe');

  it('the route table has an ingestKey route and a stripe route', () => {
    expect(ingestRoutes.length).toBeGreaterThan(0);
    expect(stripeRoutes.length).toBeGreaterThan(0);
  });

  let revokedKey = '';
  beforeAll(async () => {
    const created = await api('/ingest-keys', { method: 'POST', token: victim.token, body: { name: 'to revoke' } });
    expect(created.status).toBe(201);
    expect((await api(`/ingest-keys/${created.body.id}`, { method: 'DELETE', token: victim.token })).status).toBe(204);
    revokedKey = created.body.key;
  });

  const badKeys: Array<[string, (t: Tenant) => Record<string, string>]> = [
    ['no key', () => ({})],
    ['a wrong key of the right shape', () => ({ 'x-api-key': `brk_${randomBytes(32).toString('base64url')}` })],
    ['a malformed key', () => ({ 'x-api-key': 'not-a-key' })],
    ['a revoked key', () => ({ 'x-api-key': revokedKey })],
    ["the account's user JWT instead of a key", (t) => ({ 'x-api-key': t.token })],
    ["the account's user JWT as a bearer token, no key", (t) => ({ authorization: `Bearer ${t.token}` })],
  ];
  const ingestCases = ingestRoutes.flatMap((route) => badKeys.map(([name, headers]) => ({ route, headers, name: `${routeKey(route)}: ${name}` })));

  it.each(ingestCases)('$name → 401', async ({ route, headers }) => {
    const keyHash = createHash('sha256').update(`sk-${randomUUID()}`).digest('hex');
    const events = [{ requestId: randomUUID(), keyHash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd: 1 }];
    const res = await api(route.path, { method: route.method, headers: headers(victim), ...(route.method === 'GET' ? {} : { body: { events } }) });
    expectProblem(res, 401, '/problems/unauthorized');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey');
    // The event reached no account.
    expect((await api(`/keys/${keyHash}`, { token: victim.token })).status).toBe(404);
  });

  const event = () =>
    JSON.stringify({ id: `evt_${randomBytes(8).toString('hex')}`, object: 'event', type: 'customer.created', created: Math.floor(Date.now() / 1000), data: { object: { id: 'cus_x', object: 'customer' } } });
  /** Stripe's scheme: `t=<time>,v1=<HMAC-SHA256 of "<time>.<payload>">`. */
  const hmac = (payload: string, secret: string, t: number) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex')}`;
  const now = () => Math.floor(Date.now() / 1000);
  const badSignatures: Array<[string, (payload: string) => string | undefined]> = [
    ['no signature', () => undefined],
    ['a junk signature', () => 'garbage'],
    ['another secret', (payload) => hmac(payload, 'whsec_someone_else', now())],
    ['a signature older than 300 s', (payload) => hmac(payload, stack().stripeWebhookSecret, now() - 600)],
    ['a signature over another body', (payload) => hmac(`${payload} `, stack().stripeWebhookSecret, now())],
  ];
  const stripeCases = stripeRoutes.flatMap((route) => badSignatures.map(([name, sign]) => ({ route, sign, name: `${routeKey(route)}: ${name}` })));

  it.each(stripeCases)('$name → 400', async ({ route, sign }) => {
    const payload = event();
    const signature = sign(payload);
    const res = await api(route.path, {
      method: route.method,
      rawBody: payload,
      headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'stripe-signature': signature }) },
    });
    expectProblem(res, 400, '/problems/invalid-signature');
  });

  it('while a correctly signed event is taken (200)', async () => {
    for (const route of stripeRoutes) {
      const payload = event();
      const res = await api(route.path, {
        method: route.method,
        rawBody: payload,
        headers: { 'content-type': 'application/json', 'stripe-signature': hmac(payload, stack().stripeWebhookSecret, now()) },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('no mass assignment: a valid body plus a field no schema has is a 400, and nothing is written', () => {
  let owner: Tenant;
  beforeAll(async () => {
    owner = await createTenant(env());
  });

  // Which routes read a JSON body is the fuzz spec's knowledge (it holds the same zod schemas the handlers use).
  const bodyRoutes = routes.filter((route) => specOf(route).body !== undefined);
  const extras: Array<[string, (t: Tenant, other: Tenant) => unknown]> = [
    ['accountId', (_t, other) => other.accountId],
    ['spend', () => ({ monthToDate: 0, total: 1_000_000 })],
    ['id', (t) => t.budgetId],
    ['createdAt', () => '2020-01-01T00:00:00.000Z'],
  ];
  const cases = bodyRoutes.flatMap((route) => extras.map(([field, value]) => ({ route, field, value, name: `${routeKey(route)} + ${field}` })));

  it('covers every route that reads a body', () => {
    expect(bodyRoutes.map(routeKey)).toEqual(expect.arrayContaining(['POST /budgets', 'PATCH /budgets/{id}', 'POST /alert-rules', 'POST /ingest', 'POST /auth/register']));
  });

  it.each(cases)('$name → 400', async ({ route, field, value }) => {
    const body = bodyFor(route, owner)!;
    body[field] = value(owner, attacker);
    const itemsBefore = await snapshot(env(), owner.accountId);
    const headers: Record<string, string> = route.auth === 'ingestKey' ? { 'x-api-key': owner.ingestKey } : {};
    const res = await api(ownPath(route, owner), { method: route.method, token: route.auth === 'jwt' ? owner.token : undefined, headers, body });
    expectProblem(res, 400, '/problems/validation-error');
    expect(res.body.errors).toEqual(expect.arrayContaining([{ path: field, message: expect.any(String) }]));
    expect(diffSnapshots(itemsBefore, await snapshot(env(), owner.accountId))).toEqual([]);
    if (route.path === '/auth/register') {
      // No account was made: its credentials do not sign in.
      const login = await api('/auth/login', { method: 'POST', body: { email: body.email, password: body.password } });
      expect(login.status).toBe(401);
    }
  });

  it('and an ingested event carrying one of them is refused on its own, nothing accepted', async () => {
    const keyHash = createHash('sha256').update(`sk-${randomUUID()}`).digest('hex');
    const events = extras.map(([field, value]) => ({
      requestId: randomUUID(),
      keyHash,
      provider: 'openai',
      model: 'gpt-4o',
      inputTokens: 1,
      outputTokens: 1,
      [field]: value(owner, attacker),
    }));
    const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': owner.ingestKey }, body: { events } });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(0);
    expect(res.body.rejected.map((r: { code: string }) => r.code)).toEqual(extras.map(() => 'invalid_event'));
    expect((await api(`/keys/${keyHash}`, { token: owner.token })).status).toBe(404);
  });
});
