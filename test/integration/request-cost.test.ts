/**
 * Request cost: how many DynamoDB requests each API call makes. The stack of the integration tests runs with
 * COUNT_DB_REQUESTS=1 (global-setup.ts), so the local gateway answers every call with `x-dynamodb-requests: <n>`
 * and `x-dynamodb-commands: Query=1,BatchGetItem=1`, counted by a middleware on the handlers' own DynamoDB client
 * (local/gateway.ts).
 *
 * Every GET route of the route table is called with real data present (20 discovered keys with 30 days of spend,
 * ACCOUNT and KEY budgets, rules of every type, triggered and acknowledged alerts, ingest keys): each must cost at
 * most 2 requests and never a Scan. The write routes are called too; their counts are recorded (no Scan
 * allowed, no bound). The whole table is printed at the end.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { routes } from '#shared/routes.ts';
import { signStripe, stripeEvent, subscriptionObject } from './stripe-fixtures.ts';
import { api, clearOfUtcMidnight, DATED_FILE_MS, dynamo, registerUser, setPlan, stack, uniqueEmail, type ApiOptions, type ApiResponse, type RegisteredUser } from './harness.ts';
import { linkInMail } from './outbox.ts';

const MAX_READ_REQUESTS = 2;
const DAY = 86_400_000;
const KEY_COUNT = 20;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------------------------
// Measuring

interface Measurement {
  /** The route table's key: `GET /keys/{hash}`. */
  route: string;
  /** What was asked of it: `366-day range`. */
  detail: string;
  status: number;
  requests: number;
  commands: Map<string, number>;
}

const measurements: Measurement[] = [];

/** `Query=1,BatchGetItem=1` → its map (an empty header: no requests). */
function parseCommands(header: string): Map<string, number> {
  const commands = new Map<string, number>();
  for (const part of header.split(',').filter(Boolean)) {
    const [name, count] = part.split('=');
    commands.set(name!, Number(count));
  }
  return commands;
}

/** One call of `route`, its DynamoDB request count read from the response and recorded. */
async function measure(route: string, detail: string, path: string, options: ApiOptions = {}): Promise<ApiResponse> {
  const method = route.split(' ')[0]!;
  const res = await api(path, { ...options, method });
  const total = res.headers.get('x-dynamodb-requests');
  const header = res.headers.get('x-dynamodb-commands');
  expect(total, `${route} (${detail}) carries x-dynamodb-requests: is COUNT_DB_REQUESTS=1 set on the stack?`).not.toBeNull();
  expect(header, `${route} (${detail}) carries x-dynamodb-commands`).not.toBeNull();
  const commands = parseCommands(header!);
  expect([...commands.values()].reduce((s, n) => s + n, 0), `${route} (${detail}): the commands add up to the total`).toBe(Number(total));
  measurements.push({ route, detail, status: res.status, requests: Number(total), commands });
  return res;
}

/** `measure`, and the status must be `status`. */
async function expectMeasured(status: number, route: string, detail: string, path: string, options: ApiOptions = {}): Promise<ApiResponse> {
  const res = await measure(route, detail, path, options);
  expect(res.status, `${route} (${detail}): ${JSON.stringify(res.body)}`).toBe(status);
  return res;
}

const routeKeys = routes.map((r) => `${r.method} ${r.path}`);
const readRoutes = routeKeys.filter((k) => k.startsWith('GET '));
const writeRoutes = routeKeys.filter((k) => !k.startsWith('GET '));

// ---------------------------------------------------------------------------------------------------------------
// The data: one account with everything a dashboard shows, one more for billing

interface Fixture {
  user: RegisteredUser;
  ingestKey: string;
  keyHashes: string[];
  /** A second account that went through checkout (a Stripe customer, a portal session, webhook events). */
  billingUser: RegisteredUser;
  /** The link token of a pending invitation of the main account (GET /auth/invitation). */
  pendingInvitationToken: string;
  /** An asynchronous export of the main account. */
  exportId: string;
  /** The billing account's Anthropic connection (the local stand-in). */
  connectionId: string;
}

let fixture: Fixture;

const spendEvent = (keyHash: string, costUsd: number, timestamp: number, requestId = randomUUID()) => ({
  requestId,
  keyHash,
  keyHint: `sk-...${keyHash.slice(0, 4)}`,
  provider: keyHash.charCodeAt(0) % 2 ? 'openai' : 'anthropic',
  model: keyHash.charCodeAt(0) % 2 ? 'gpt-4o-mini' : 'claude-3-5-haiku',
  inputTokens: 1200,
  cachedInputTokens: 200,
  outputTokens: 300,
  costUsd,
  timestamp: new Date(timestamp).toISOString(),
});

/** Signed like Stripe signs (the stand-in's secret). */
async function deliverStripe(detail: string, event: Record<string, unknown>): Promise<ApiResponse> {
  const payload = JSON.stringify(event);
  const signature = signStripe(payload);
  return expectMeasured(200, 'POST /billing/webhook', detail, '/billing/webhook', {
    rawBody: payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
  });
}



/** Seeds the data through the API — every write route is measured on the way. */
async function seed(): Promise<Fixture> {
  // --- auth ------------------------------------------------------------------------------------------------------
  const password = `Pw${randomBytes(6).toString('hex')}9`;
  const email = `cost-${randomBytes(6).toString('hex')}@example.com`;
  const reg = await expectMeasured(201, 'POST /auth/register', 'new account', '/auth/register', {
    body: { email, password, firstName: 'Ada', lastName: 'Lovelace', companyName: 'Cost Co' },
  });
  const user = { email, password, firstName: 'Ada', lastName: 'Lovelace', companyName: 'Cost Co', ...reg.body, body: reg.body } as RegisteredUser;
  await setPlan(user.accountId, 'SCALE');
  await expectMeasured(200, 'POST /auth/login', 'email + password', '/auth/login', { body: { email, password } });
  await expectMeasured(200, 'POST /auth/refresh', 'refresh token', '/auth/refresh', { body: { refreshToken: user.refreshToken } });
  const auth = { token: user.token };

  // --- ingest keys -----------------------------------------------------------------------------------------------
  const created = await expectMeasured(201, 'POST /ingest-keys', 'named', '/ingest-keys', { ...auth, body: { name: 'proxy' } });
  const ingestKey = created.body.key as string;
  const spare = await expectMeasured(201, 'POST /ingest-keys', 'second key', '/ingest-keys', { ...auth, body: {} });
  await expectMeasured(204, 'DELETE /ingest-keys/{id}', 'revoke', `/ingest-keys/${spare.body.id}`, auth);
  await expectMeasured(201, 'POST /ingest-keys', 'third key', '/ingest-keys', { ...auth, body: { name: 'batch jobs' } });

  // --- rules before the first events, so discovery and thresholds fire --------------------------------------------
  const ruleBody = { channels: ['email'], isActive: true };
  await expectMeasured(201, 'POST /alert-rules', 'new_key', '/alert-rules', { ...auth, body: { ...ruleBody, type: 'new_key', name: 'New key', config: {} } });
  const daily = await expectMeasured(201, 'POST /alert-rules', 'cost_threshold daily', '/alert-rules', {
    ...auth,
    body: { ...ruleBody, type: 'cost_threshold', name: 'Daily $1', config: { threshold: 1, period: 'daily' } },
  });
  await expectMeasured(201, 'POST /alert-rules', 'spend_spike', '/alert-rules', {
    ...auth,
    body: { ...ruleBody, type: 'spend_spike', name: 'Spike', config: { multiplier: 2, minSpend: 0.5 } },
  });
  const accountBudget = await expectMeasured(201, 'POST /budgets', 'ACCOUNT', '/budgets', {
    ...auth,
    body: { name: 'Company', monthlyLimit: 40, alertThreshold: 50, scope: 'ACCOUNT' },
  });

  // --- events: 20 keys, 30 days of history (5 events a key), then today's spend -----------------------------------
  const keyHashes = Array.from({ length: KEY_COUNT }, () => sha256(`sk-cost-${randomUUID()}`));
  const now = Date.now();
  const history = keyHashes.flatMap((hash, k) =>
    Array.from({ length: 5 }, (_, i) => spendEvent(hash, 0.01 * (1 + ((k + i) % 7)), now - (1 + ((k * 5 + i) % 30)) * DAY)),
  );
  const ingestHeaders = { headers: { 'x-api-key': ingestKey } };
  const first = await expectMeasured(200, 'POST /ingest', `${history.length} events, ${KEY_COUNT} new keys`, '/ingest', {
    ...ingestHeaders,
    body: { events: history },
  });
  expect(first.body).toMatchObject({ accepted: history.length, duplicates: 0, rejected: [] });

  // KEY-scoped budget and rule (they need a discovered key).
  await expectMeasured(201, 'POST /budgets', 'KEY', '/budgets', {
    ...auth,
    body: { name: 'Key 0', monthlyLimit: 2, alertThreshold: 80, scope: 'KEY', keyHash: keyHashes[0] },
  });
  await expectMeasured(201, 'POST /budgets', 'KEY (second)', '/budgets', {
    ...auth,
    body: { monthlyLimit: 100, alertThreshold: 90, scope: 'KEY', keyHash: keyHashes[1] },
  });
  await expectMeasured(201, 'POST /alert-rules', 'cost_threshold monthly, KEY', '/alert-rules', {
    ...auth,
    body: { ...ruleBody, type: 'cost_threshold', name: 'Key 0 monthly', config: { threshold: 1.5, period: 'monthly', keyHash: keyHashes[0] } },
  });

  const today = Array.from({ length: 100 }, (_, i) => spendEvent(keyHashes[i % KEY_COUNT]!, i % KEY_COUNT === 0 ? 0.5 : 0.05, now - i * 1000));
  const steady = await expectMeasured(200, 'POST /ingest', '100 events, known keys, alerts fire', '/ingest', { ...ingestHeaders, body: { events: today } });
  expect(steady.body).toMatchObject({ accepted: 100, duplicates: 0 });
  const repeat = await expectMeasured(200, 'POST /ingest', '100 duplicates', '/ingest', { ...ingestHeaders, body: { events: today } });
  expect(repeat.body).toMatchObject({ accepted: 0, duplicates: 100 });
  const more = Array.from({ length: 100 }, (_, i) => spendEvent(keyHashes[i % KEY_COUNT]!, 0.01, now - i * 1000));
  await expectMeasured(200, 'POST /ingest', '100 events, known keys, no new alerts', '/ingest', { ...ingestHeaders, body: { events: more } });

  // --- updates, acknowledgement, deletes ---------------------------------------------------------------------------
  await expectMeasured(200, 'PATCH /keys/{hash}', 'label', `/keys/${keyHashes[0]}`, { ...auth, body: { label: 'Production' } });
  await expectMeasured(200, 'PATCH /budgets/{id}', 'monthlyLimit', `/budgets/${accountBudget.body.id}`, { ...auth, body: { monthlyLimit: 45 } });
  await expectMeasured(409, 'POST /budgets/{id}/release', 'a notify budget (nothing stopped: 409 not-stopped)', `/budgets/${accountBudget.body.id}/release`, auth);
  await expectMeasured(409, 'POST /keys/{hash}/release', 'a key no anomaly rule holds (409 not-stopped)', `/keys/${keyHashes[0]}/release`, auth);
  await expectMeasured(200, 'PATCH /alert-rules/{id}', 'threshold', `/alert-rules/${daily.body.id}`, {
    ...auth,
    body: { config: { threshold: 1.25, period: 'daily' } },
  });
  const alerts = await api('/alerts?limit=100', auth);
  expect(alerts.status).toBe(200);
  const types = new Set((alerts.body.items as { type: string }[]).map((a) => a.type));
  expect([...types].sort(), 'the seeded events raised alerts of these types').toEqual(
    expect.arrayContaining(['budget_threshold', 'cost_threshold', 'new_key']),
  );
  await expectMeasured(200, 'PATCH /alerts/{id}/acknowledge', 'first time', `/alerts/${alerts.body.items[0].id}/acknowledge`, auth);
  await expectMeasured(200, 'PATCH /alerts/{id}/acknowledge', 'again', `/alerts/${alerts.body.items[0].id}/acknowledge`, auth);
  await expectMeasured(200, 'POST /alerts/acknowledge', 'two ids', '/alerts/acknowledge', { ...auth, body: { ids: alerts.body.items.slice(1, 3).map((a: { id: string }) => a.id) } });
  // Own prices: a new one (takes a counter slot), a replacement, a deletion.
  await expectMeasured(200, 'PUT /prices/{provider}/{model}', 'new', '/prices/openai/gpt-4o-mini', { ...auth, body: { input: 0.2, output: 0.7 } });
  await expectMeasured(200, 'PUT /prices/{provider}/{model}', 'replace', '/prices/openai/gpt-4o-mini', { ...auth, body: { input: 0.15, output: 0.6 } });
  await api('/prices/custom/doomed', { ...auth, method: 'PUT', body: { input: 1, output: 1 } });
  await expectMeasured(204, 'DELETE /prices/{provider}/{model}', 'existing', '/prices/custom/doomed', auth);
  const doomedBudget = await api('/budgets', { ...auth, method: 'POST', body: { monthlyLimit: 1, alertThreshold: 50, scope: 'ACCOUNT' } });
  await expectMeasured(204, 'DELETE /budgets/{id}', 'existing', `/budgets/${doomedBudget.body.id}`, auth);
  const doomedRule = await api('/alert-rules', { ...auth, method: 'POST', body: { ...ruleBody, type: 'new_key', name: 'Doomed', config: {} } });
  await expectMeasured(204, 'DELETE /alert-rules/{id}', 'existing', `/alert-rules/${doomedRule.body.id}`, auth);
  // A month closed: a year ago (no connection: nothing to settle), so the seeded spend stays in open months.
  const yearAgo = new Date(Date.now() - 366 * DAY).toISOString().slice(0, 7);
  await expectMeasured(200, 'POST /months/{month}/close', 'a past month', `/months/${yearAgo}/close`, { ...auth, method: 'POST' });

  // --- the team: invitations, accept, roles, removal -------------------------------------------------------------
  const inviteeEmail = uniqueEmail('cost');
  const invitation = await expectMeasured(201, 'POST /invitations', 'member', '/invitations', { ...auth, body: { email: inviteeEmail, role: 'member' } });
  const { token: inviteToken } = await linkInMail(inviteeEmail, '/accept-invitation');
  const joined = await expectMeasured(201, 'POST /auth/accept-invitation', 'valid link', '/auth/accept-invitation', {
    body: { token: inviteToken, password: 'Corr3ct-Horse', firstName: 'Cost', lastName: 'Counter' },
  });
  await expectMeasured(200, 'PATCH /users/{userId}', 'member → viewer', `/users/${joined.body.userId}`, { ...auth, body: { role: 'viewer' } });
  await expectMeasured(204, 'DELETE /users/{userId}', 'a viewer', `/users/${joined.body.userId}`, auth);
  const revoked = await api('/invitations', { ...auth, method: 'POST', body: { email: uniqueEmail('cost-revoked'), role: 'viewer' } });
  await expectMeasured(204, 'DELETE /invitations/{id}', 'pending', `/invitations/${revoked.body.id}`, auth);
  const pendingEmail = uniqueEmail('cost-pending');
  await api('/invitations', { ...auth, method: 'POST', body: { email: pendingEmail, role: 'viewer' } });
  const { token: pendingInvitationToken } = await linkInMail(pendingEmail, '/accept-invitation');
  expect(invitation.body.status).toBe('pending');

  // --- identity: profile, verified e-mail, passwords (on users of their own: a password change ends sessions) --------
  await expectMeasured(200, 'PATCH /auth/me', 'names + alertEmails', '/auth/me', { ...auth, body: { firstName: 'Ada', alertEmails: true } });
  const { token: verifyToken } = await linkInMail(email, '/verify-email');
  await expectMeasured(202, 'POST /auth/resend-verification', 'unverified', '/auth/resend-verification', auth);
  await expectMeasured(200, 'POST /auth/verify-email', 'valid link', '/auth/verify-email', { body: { token: verifyToken } });
  await expectMeasured(409, 'POST /auth/resend-verification', 'verified already', '/auth/resend-verification', auth);
  const resetter = await registerUser();
  await expectMeasured(202, 'POST /auth/forgot-password', 'known address', '/auth/forgot-password', { body: { email: resetter.email } });
  await expectMeasured(202, 'POST /auth/forgot-password', 'unknown address', '/auth/forgot-password', { body: { email: uniqueEmail('cost-nobody') } });
  const { token: resetToken } = await linkInMail(resetter.email, '/reset-password');
  await expectMeasured(204, 'POST /auth/reset-password', 'valid link', '/auth/reset-password', { body: { token: resetToken, password: 'Reset9Password' } });
  await expectMeasured(400, 'POST /auth/reset-password', 'used link', '/auth/reset-password', { body: { token: resetToken, password: 'Reset9Password' } });
  const changer = await registerUser();
  await expectMeasured(400, 'POST /auth/change-password', 'wrong current password', '/auth/change-password', {
    token: changer.token,
    body: { currentPassword: 'Wrong9Password', newPassword: 'Changed9Password' },
  });
  await expectMeasured(204, 'POST /auth/change-password', 'right current password', '/auth/change-password', {
    token: changer.token,
    body: { currentPassword: changer.password, newPassword: 'Changed9Password' },
  });

  // --- billing, on an account of its own ---------------------------------------------------------------------------
  const billingUser = await registerUser();
  const billingAuth = { token: billingUser.token };
  await expectMeasured(201, 'POST /billing/checkout', 'GROWTH, first checkout', '/billing/checkout', { ...billingAuth, body: { plan: 'GROWTH' } });
  await expectMeasured(201, 'POST /billing/checkout', 'GROWTH, again', '/billing/checkout', { ...billingAuth, body: { plan: 'GROWTH' } });
  await expectMeasured(201, 'POST /billing/portal', 'customer exists', '/billing/portal', { ...billingAuth, body: {} });
  await expectMeasured(200, 'POST /webhook-secret/rotate', 'no secret yet (creates one, then rotates)', '/webhook-secret/rotate', billingAuth);
  await expectMeasured(200, 'POST /webhook-secret/rotate', 'again', '/webhook-secret/rotate', billingAuth);
  const account = await dynamo().send(
    new GetCommand({ TableName: stack().tableName, Key: keys.account(billingUser.accountId), ConsistentRead: true }),
  );
  const customer = account.Item!.stripeCustomerId as string;
  const subscription = subscriptionObject({ accountId: billingUser.accountId, customer });

  const created2 = stripeEvent('customer.subscription.created', subscription);
  await deliverStripe('subscription.created, applied', created2);
  await deliverStripe('the same event replayed', created2);
  await deliverStripe('ignored type', stripeEvent('charge.succeeded', { id: 'ch_test', object: 'charge', customer }));

  // An asynchronous export: the start (a transaction of the export and its slot); its status is a read case.
  const exportJob = await expectMeasured(202, 'POST /spend/exports', 'this month (export + slot in one transaction)', '/spend/exports', {
    method: 'POST',
    token: user.token,
    body: {},
  });

  // Provider connections (the local stand-ins): create (one provider check), rename, sync now; one deleted (the
  // billing account: the main one keeps its 20 keys).
  const adminKeyOf = async (url: string) => ((await (await fetch(`${url}/_burnrate/state`)).json()) as { adminKey: string }).adminKey;
  const connection = await expectMeasured(201, 'POST /connections', 'anthropic (one provider check)', '/connections', {
    ...billingAuth,
    body: { provider: 'anthropic', adminKey: await adminKeyOf(stack().anthropicAdmin.url) },
  });
  const connectionId = connection.body.id as string;
  await expectMeasured(200, 'PATCH /connections/{id}', 'rename', `/connections/${connectionId}`, { ...billingAuth, body: { name: 'Anthropic org' } });
  await expectMeasured(202, 'POST /connections/{id}/sync', 'first in the minute', `/connections/${connectionId}/sync`, billingAuth);
  // A key of the connection in a workspace (as a sync writes it), then the workspace's tags.
  const workspaceKey = sha256(`anthropic:request-cost-${randomUUID()}`);
  await dynamo().send(
    new PutCommand({
      TableName: stack().tableName,
      Item: { ...keys.providerKey(billingUser.accountId, workspaceKey), ...keys.providerKeyIndex(billingUser.accountId, workspaceKey), keyHash: workspaceKey, provider: 'anthropic', source: 'connection', connectionId, project: { id: 'wrkspc_cost', name: 'Cost' }, firstSeenAt: new Date().toISOString(), lastSeenAt: new Date().toISOString() },
    }),
  );
  await expectMeasured(200, 'PATCH /projects/{connectionId}/{projectId}', 'tags (1 key)', `/projects/${connectionId}/wrkspc_cost`, { ...billingAuth, body: { tags: { team: 'platform' } } });
  await expectMeasured(200, 'PATCH /keys/{hash}', 'tags (a key of a tagged workspace)', `/keys/${workspaceKey}`, { ...billingAuth, body: { tags: { env: 'prod' } } });
  const doomedConnection = await api('/connections', {
    ...billingAuth,
    method: 'POST',
    body: { provider: 'openai', adminKey: await adminKeyOf(stack().openaiAdmin.url) },
  });
  await expectMeasured(204, 'DELETE /connections/{id}', 'existing', `/connections/${doomedConnection.body.id}`, billingAuth);

  return { user, ingestKey, keyHashes, billingUser, pendingInvitationToken, exportId: exportJob.body.id as string, connectionId };
}

// ---------------------------------------------------------------------------------------------------------------
// The read cases: every GET route of the route table, some in several shapes

interface ReadCase {
  route: string;
  detail: string;
  /** Path relative to /api, with any unmeasured preparation (a first page for its cursor) done here. */
  path: (f: Fixture) => string | Promise<string>;
  /** Whose token (default: the main account's); `none` for public routes; `ingestKey`: the main account's ingest key. */
  as?: 'main' | 'billing' | 'none' | 'ingestKey';
  /** A bound above MAX_READ_REQUESTS, with the reason in `detail` (README "Spend insight"). */
  max?: number;
}

async function cursorAfterFirstPage(path: string, token: string): Promise<string> {
  const res = await api(path, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.nextCursor, `${path} has a second page`).toEqual(expect.any(String));
  return res.body.nextCursor as string;
}

const readCaseList: ReadCase[] = [
  { route: 'GET /health', detail: '', path: () => '/health', as: 'none' },
  { route: 'GET /openapi.json', detail: '', path: () => '/openapi.json', as: 'none' },
  { route: 'GET /auth/me', detail: '', path: () => '/auth/me' },
  { route: 'GET /ingest-keys', detail: '2 live, 1 revoked', path: () => '/ingest-keys' },
  { route: 'GET /keys', detail: `${KEY_COUNT} keys, default page`, path: () => '/keys' },
  {
    route: 'GET /keys',
    detail: 'second page (limit 5, cursor)',
    path: async (f) => `/keys?limit=5&cursor=${encodeURIComponent(await cursorAfterFirstPage('/keys?limit=5', f.user.token))}`,
  },
  { route: 'GET /keys', detail: 'search, provider, sort=name desc', path: (f) => `/keys?q=${f.keyHashes[0]!.slice(0, 6)}&provider=openai&sort=name&order=desc&limit=5` },
  // The key, its days, and what holds it stopped (stoppedBy: one Query of the enforcement states), read at once.
  { route: 'GET /keys/{hash}', detail: 'default range (month to date)', path: (f) => `/keys/${f.keyHashes[0]}`, max: 3 },
  {
    route: 'GET /keys/{hash}',
    detail: '366-day range',
    path: (f) => `/keys/${f.keyHashes[0]}?from=${isoDay(Date.now() - 365 * DAY)}&to=${isoDay(Date.now())}`,
    max: 3,
  },
  { route: 'GET /keys/{hash}', detail: 'unknown key (404)', path: () => `/keys/${sha256('never seen')}`, max: 3 },
  // The key, its last 24 hours (on its item) and its baseline days, and the rule holds on it.
  { route: 'GET /keys/{hash}/incident', detail: 'a key no rule holds', path: (f) => `/keys/${f.keyHashes[0]}/incident`, max: 4 },
  { route: 'GET /budgets', detail: '1 ACCOUNT + 2 KEY budgets', path: () => '/budgets' },
  { route: 'GET /ingest/blocks', detail: "the reporter's block list (none stopped)", path: () => '/ingest/blocks', as: 'ingestKey' },
  { route: 'GET /enforcement-actions', detail: 'default page', path: () => '/enforcement-actions' },
  // Filtered as it reads: one Query of at most 500 acts (none here: the bound is the Query's, not the page's).
  { route: 'GET /enforcement-actions', detail: 'provider and result filters', path: () => '/enforcement-actions?provider=anthropic&result=failed&limit=100' },
  { route: 'GET /months', detail: '34 months (closed ones and the connections: 2 Queries)', path: () => `/months?from=${isoDay(Date.now() - 1030 * DAY).slice(0, 7)}&to=${isoDay(Date.now()).slice(0, 7)}` },
  ...(['day', 'model', 'provider', 'key'] as const).flatMap((groupBy): ReadCase[] => [
    { route: 'GET /spend', detail: `groupBy=${groupBy}, month to date`, path: () => `/spend?groupBy=${groupBy}` },
    {
      route: 'GET /spend',
      detail: `groupBy=${groupBy}, 366 days${groupBy === 'key' ? ' (whole months + a day-by-day head: 2 Queries + BatchGetItem)' : ''}`,
      path: () => `/spend?groupBy=${groupBy}&from=${isoDay(Date.now() - 365 * DAY)}&to=${isoDay(Date.now())}`,
      ...(groupBy === 'key' ? { max: 3 } : {}),
    },
  ]),
  { route: 'GET /spend', detail: 'provider filter, month to date (range, window, previous: one Query)', path: () => '/spend?provider=openai&compare=previous' },
  // + the key (GetItem): coverage answers for the key's own connection only.
  { route: 'GET /spend', detail: 'keyHash filter by model, 31 days, compare (+ the key for its coverage)', path: (f) => `/spend?groupBy=model&keyHash=${f.keyHashes[0]}&from=${isoDay(Date.now() - 30 * DAY)}&to=${isoDay(Date.now())}&compare=previous`, max: 3 },
  { route: 'GET /spend', detail: 'compare=previous by day (the previous days in the same Query)', path: () => '/spend?compare=previous' },
  { route: 'GET /spend', detail: 'compare=previous by model (+ a Query of the previous days)', path: () => '/spend?groupBy=model&compare=previous', max: 3 },
  {
    route: 'GET /spend',
    detail: 'groupBy=key of one model (export rows Query + the days Query + 2 BatchGetItem)',
    path: () => '/spend?groupBy=key&provider=openai&model=gpt-4o',
    max: 4,
  },
  { route: 'GET /spend/export', detail: '31 days (rows Query + labels Query + settled days Query + connections Query)', path: () => `/spend/export?from=${isoDay(Date.now() - 30 * DAY)}&to=${isoDay(Date.now())}`, max: 4 },
  { route: 'GET /spend/exports/{id}', detail: 'the status (GetItem; once ready, a link signed without a call)', path: (f) => `/spend/exports/${f.exportId}` },
  { route: 'GET /prices', detail: 'built-in + 1 own', path: () => '/prices' },
  { route: 'GET /connections', detail: '1 connection', path: () => '/connections', as: 'billing' },
  { route: 'GET /projects', detail: 'keys and projects’ tags (one Query)', path: () => '/projects', as: 'billing' },
  { route: 'GET /customers', detail: 'the month’s customers (one Query)', path: () => '/customers' },
  { route: 'GET /connections/{id}', detail: 'existing', path: (f) => `/connections/${f.connectionId}`, as: 'billing' },
  {
    route: 'GET /connections/{id}/reconciliation',
    detail: '92 days',
    path: (f) => `/connections/${f.connectionId}/reconciliation?from=${isoDay(Date.now() - 91 * DAY)}&to=${isoDay(Date.now())}`,
    as: 'billing',
  },
  { route: 'GET /alert-rules', detail: '4 rules (incl. a KEY rule)', path: () => '/alert-rules' },
  { route: 'GET /alerts', detail: 'default', path: () => '/alerts' },
  { route: 'GET /alerts', detail: '?status=acknowledged', path: () => '/alerts?status=acknowledged' },
  { route: 'GET /alerts', detail: 'type and keyHash filters', path: (f) => `/alerts?type=cost_threshold&keyHash=${f.keyHashes[0]}` },
  {
    route: 'GET /alerts',
    detail: 'second page (limit 2, cursor)',
    path: async (f) => `/alerts?limit=2&cursor=${encodeURIComponent(await cursorAfterFirstPage('/alerts?limit=2', f.user.token))}`,
  },
  { route: 'GET /webhook-secret', detail: 'first call (creates it)', path: () => '/webhook-secret' },
  { route: 'GET /webhook-secret', detail: 'later call', path: () => '/webhook-secret' },
  { route: 'GET /users', detail: 'the admin', path: () => '/users' },
  { route: 'GET /invitations', detail: '1 pending, 2 settled', path: () => '/invitations' },
  { route: 'GET /auth/invitation', detail: 'a pending invitation’s link', path: (f) => `/auth/invitation?token=${f.pendingInvitationToken}`, as: 'none' },
  { route: 'GET /billing/status', detail: 'SCALE, set directly', path: () => '/billing/status' },
  { route: 'GET /billing/status', detail: 'GROWTH via webhook', path: () => '/billing/status', as: 'billing' },
];

/** GET /spend answers its coverage too: ONE more Query (the account item and its connections, docs/features/spend-and-exports.md). */
const readCases: ReadCase[] = readCaseList.map((c) => (c.route === 'GET /spend' ? { ...c, max: (c.max ?? MAX_READ_REQUESTS) + 1 } : c));

// ---------------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  await clearOfUtcMidnight(DATED_FILE_MS);
  fixture = await seed();
}, DATED_FILE_MS + 120_000);

afterAll(() => {
  if (measurements.length === 0) return;
  const rows = [
    ['route', 'call', 'status', 'requests', 'by command'],
    ...measurements.map((m) => [m.route, m.detail, String(m.status), String(m.requests), [...m.commands].map(([c, n]) => `${c} ${n}`).join(', ') || '–']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 2 || i === 3 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  console.log(
    [
      `DynamoDB requests per API call (reads: ≤ ${MAX_READ_REQUESTS}, no Scan; writes: recorded, no Scan)`,
      line(rows[0]!),
      widths.map((w) => '-'.repeat(w)).join('  '),
      ...rows.slice(1).map(line),
    ].join('\n'),
  );
});

describe('request cost of read endpoints', () => {
  it('every GET route of the route table has a case here', () => {
    expect(new Set(readCases.map((c) => c.route))).toEqual(new Set(readRoutes));
  });

  it.each(readCases)(`$route $detail: ≤ ${MAX_READ_REQUESTS} DynamoDB requests, no Scan`, async (c) => {
    const token = c.as === 'none' || c.as === 'ingestKey' ? undefined : c.as === 'billing' ? fixture.billingUser.token : fixture.user.token;
    const headers = c.as === 'ingestKey' ? { 'x-api-key': fixture.ingestKey } : undefined;
    const expected = c.detail.includes('(404)') ? 404 : 200;
    const res = await expectMeasured(expected, c.route, c.detail, await c.path(fixture), { token, ...(headers ? { headers } : {}) });
    const m = measurements.at(-1)!;
    expect(m.commands.has('Scan'), `${c.route} uses Scan`).toBe(false);
    expect(m.requests, `${c.route} (${c.detail}): ${[...m.commands].map(([n, k]) => `${n}=${k}`).join(',')}`).toBeLessThanOrEqual(c.max ?? MAX_READ_REQUESTS);
    if (c.route === 'GET /keys/{hash}' && c.detail === '366-day range') expect(res.body.breakdown.daily).toHaveLength(366);
    if (c.route === 'GET /keys' && c.detail.startsWith(`${KEY_COUNT}`)) expect(res.body.items).toHaveLength(KEY_COUNT);
    if (c.route === 'GET /budgets') expect(res.body.items).toHaveLength(3);
    if (c.route === 'GET /billing/status') expect(res.body.plan).toBe(c.as === 'billing' ? 'GROWTH' : 'SCALE');
  });
});

describe('request cost of write endpoints', () => {
  it('every non-GET route was called while seeding, none used Scan', () => {
    const called = new Set(measurements.filter((m) => !m.route.startsWith('GET ')).map((m) => m.route));
    expect([...called].sort()).toEqual([...writeRoutes].sort());
    const scans = measurements.filter((m) => m.commands.has('Scan')).map((m) => `${m.route} (${m.detail})`);
    expect(scans).toEqual([]);
  });
});
