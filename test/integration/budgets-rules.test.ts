import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as budgetsRepo from '#shared/db/budgets.ts';
import { keys } from '#shared/db/keys.ts';
import * as rulesRepo from '#shared/db/rules.ts';
import { api, pointAtStack, dynamo, registerUser, stack, type ApiResponse, type RegisteredUser } from './harness.ts';

const PROBLEM = 'application/problem+json';
const HOOK = 'https://hooks.example.com/burnrate';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BUDGET_ID = /^bud_[0-9A-HJKMNP-TV-Z]{26}$/;
const RULE_ID = /^rul_[0-9A-HJKMNP-TV-Z]{26}$/;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newKeyHash = () => sha256(`sk-test-${randomUUID()}`);

interface Tenant {
  user: RegisteredUser;
  token: string;
  ingestKey: string;
}

async function tenant(): Promise<Tenant> {
  const user = await registerUser();
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'proxy' } });
  expect(res.status).toBe(201);
  return { user, token: user.token, ingestKey: res.body.key };
}

/** Ingests `count` events of `costUsd` each on `keyHash` (discovering the key). */
async function spend(t: Tenant, keyHash: string, costUsd: number, count = 1) {
  const events = Array.from({ length: count }, () => ({
    requestId: randomUUID(),
    keyHash,
    provider: 'openai',
    model: 'gpt-4o-mini',
    inputTokens: 10,
    outputTokens: 5,
    costUsd,
  }));
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, body: { events } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.accepted).toBe(count);
}

const call = (t: Tenant | undefined, method: string, path: string, body?: unknown) =>
  api(path, { method, token: t?.token, ...(body === undefined ? {} : { body }) });

function expectProblem(res: ApiResponse, status: number, type?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toContain(PROBLEM);
  expect(res.body.status).toBe(status);
  if (type) expect(res.body.type).toBe(type);
}

/** A 400 problem whose errors name exactly these paths. */
function expectPaths(res: ApiResponse, paths: string[]) {
  expectProblem(res, 400);
  expect(res.body.type).toMatch(/^\/problems\//);
  expect(res.body.errors.map((e: { path: string }) => e.path).sort(), JSON.stringify(res.body)).toEqual([...paths].sort());
  for (const e of res.body.errors) expect(typeof e.message).toBe('string');
}

// ---------------------------------------------------------------------------------------------------------------
describe('budgets', () => {
  let t: Tenant;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    t = await tenant();
    keyA = newKeyHash();
    keyB = newKeyHash();
    await spend(t, keyA, 0.5, 12); // $6
    await spend(t, keyB, 2.5); // $2.50 → the account: $8.50
  });

  it('POST an ACCOUNT budget → 201 with exactly the API fields and the account month-to-date', async () => {
    const res = await call(t, 'POST', '/budgets', { monthlyLimit: 10, alertThreshold: 80, scope: 'ACCOUNT' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(Object.keys(res.body).sort()).toEqual(
      ['action', 'alertOnForecast', 'alertThreshold', 'createdAt', 'forecast', 'id', 'keyHash', 'monthlyLimit', 'name', 'percentUsed', 'scope', 'spend', 'status', 'updatedAt'].sort(),
    );
    expect(res.body).toEqual({
      id: expect.stringMatching(BUDGET_ID),
      name: null,
      monthlyLimit: 10,
      alertThreshold: 80,
      scope: 'ACCOUNT',
      keyHash: null,
      // the default action; a notify budget carries no `enforcement`, an ACCOUNT one no connectionId/projectId
      action: 'notify',
      spend: { monthToDate: 8.5 },
      percentUsed: 85,
      status: 'warning',
      alertOnForecast: false,
      // all spend is today's, in a new account: no complete day to average yet
      forecast: { monthEnd: 8.5, percentOfLimit: 85 },
      createdAt: expect.stringMatching(ISO),
      updatedAt: res.body.createdAt,
    });
  });

  it('a KEY budget counts only its key; status ok / warning at the threshold exactly / exceeded at the limit exactly', async () => {
    const ok = await call(t, 'POST', '/budgets', { name: '  Key B  ', monthlyLimit: 100, alertThreshold: 50, scope: 'KEY', keyHash: keyB });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body).toMatchObject({ name: 'Key B', scope: 'KEY', keyHash: keyB, spend: { monthToDate: 2.5 }, percentUsed: 2.5, status: 'ok' });

    const warning = await call(t, 'POST', '/budgets', { monthlyLimit: 7.5, alertThreshold: 80, scope: 'KEY', keyHash: keyA });
    expect(warning.body).toMatchObject({ monthlyLimit: 7.5, spend: { monthToDate: 6 }, percentUsed: 80, status: 'warning' });

    const exceeded = await call(t, 'POST', '/budgets', { monthlyLimit: 6, alertThreshold: 99.99, scope: 'KEY', keyHash: keyA });
    expect(exceeded.body).toMatchObject({ monthlyLimit: 6, alertThreshold: 99.99, percentUsed: 100, status: 'exceeded' });

    const account = await call(t, 'POST', '/budgets', { monthlyLimit: 3, alertThreshold: 10, scope: 'ACCOUNT' });
    expect(account.body).toMatchObject({ spend: { monthToDate: 8.5 }, percentUsed: 283.33, status: 'exceeded' });

    const third = await call(t, 'POST', '/budgets', { monthlyLimit: 7.5, alertThreshold: 100, scope: 'KEY', keyHash: keyB });
    expect(third.body).toMatchObject({ percentUsed: 33.33, status: 'ok' });
  });

  it('GET lists every budget newest first, with spend computed at read time', async () => {
    const first = await call(t, 'GET', '/budgets');
    expect(first.status).toBe(200);
    expect(first.body.nextCursor).toBeNull();
    const items = first.body.items as { id: string; createdAt: string }[];
    expect(items).toHaveLength(6);
    expect(items.map((b) => b.id)).toEqual([...items.map((b) => b.id)].sort().reverse());

    await spend(t, keyA, 0.25, 2); // +$0.50 on A: A $6.50, the account $9.00
    const after = await call(t, 'GET', '/budgets');
    const byShape = after.body.items.map((b: any) => [b.scope, b.keyHash, b.monthlyLimit, b.spend.monthToDate, b.percentUsed, b.status]);
    expect(byShape).toEqual([
      ['KEY', keyB, 7.5, 2.5, 33.33, 'ok'],
      ['ACCOUNT', null, 3, 9, 300, 'exceeded'],
      ['KEY', keyA, 6, 6.5, 108.33, 'exceeded'],
      ['KEY', keyA, 7.5, 6.5, 86.67, 'warning'],
      ['KEY', keyB, 100, 2.5, 2.5, 'ok'],
      ['ACCOUNT', null, 10, 9, 90, 'warning'],
    ]);
  });

  it('PATCH changes only the fields sent → 200 the budget; GET shows it', async () => {
    const created = (await call(t, 'POST', '/budgets', { name: 'Team', monthlyLimit: 50, alertThreshold: 80, scope: 'KEY', keyHash: keyA })).body;
    const res = await call(t, 'PATCH', `/budgets/${created.id}`, { monthlyLimit: 6.5, alertThreshold: 75.5 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ...created,
      monthlyLimit: 6.5,
      alertThreshold: 75.5,
      spend: { monthToDate: 6.5 },
      percentUsed: 100,
      status: 'exceeded',
      forecast: { monthEnd: 6.5, percentOfLimit: 100 },
      updatedAt: expect.stringMatching(ISO),
    });
    expect(res.body.updatedAt > created.updatedAt).toBe(true);

    const renamed = await call(t, 'PATCH', `/budgets/${created.id}`, { name: null });
    expect(renamed.body.name).toBeNull();

    // scope ACCOUNT drops the key; back to KEY needs a keyHash
    const widened = await call(t, 'PATCH', `/budgets/${created.id}`, { scope: 'ACCOUNT' });
    expect(widened.body).toMatchObject({ scope: 'ACCOUNT', keyHash: null, spend: { monthToDate: 9 } });
    expectPaths(await call(t, 'PATCH', `/budgets/${created.id}`, { scope: 'KEY' }), ['keyHash']);
    const narrowed = await call(t, 'PATCH', `/budgets/${created.id}`, { scope: 'KEY', keyHash: keyB });
    expect(narrowed.body).toMatchObject({ scope: 'KEY', keyHash: keyB, spend: { monthToDate: 2.5 } });

    const listed = (await call(t, 'GET', '/budgets')).body.items.find((b: { id: string }) => b.id === created.id);
    expect(listed).toEqual(narrowed.body);
  });

  it('DELETE → 204, then it is gone (404 on PATCH and DELETE)', async () => {
    const created = (await call(t, 'POST', '/budgets', { monthlyLimit: 1, alertThreshold: 1, scope: 'ACCOUNT' })).body;
    const res = await call(t, 'DELETE', `/budgets/${created.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    const ids = (await call(t, 'GET', '/budgets')).body.items.map((b: { id: string }) => b.id);
    expect(ids).not.toContain(created.id);
    expectProblem(await call(t, 'DELETE', `/budgets/${created.id}`), 404, '/problems/not-found');
    expectProblem(await call(t, 'PATCH', `/budgets/${created.id}`, { monthlyLimit: 2 }), 404, '/problems/not-found');
  });

  it('a KEY budget on a key the account does not have → 400 at keyHash', async () => {
    expectPaths(await call(t, 'POST', '/budgets', { monthlyLimit: 1, alertThreshold: 50, scope: 'KEY', keyHash: newKeyHash() }), ['keyHash']);
    const created = (await call(t, 'POST', '/budgets', { monthlyLimit: 1, alertThreshold: 50, scope: 'ACCOUNT' })).body;
    expectPaths(await call(t, 'PATCH', `/budgets/${created.id}`, { scope: 'KEY', keyHash: newKeyHash() }), ['keyHash']);
  });

  const valid = { monthlyLimit: 10, alertThreshold: 80, scope: 'ACCOUNT' };
  it.each([
    ['monthlyLimit 0', { ...valid, monthlyLimit: 0 }, ['monthlyLimit']],
    ['monthlyLimit negative', { ...valid, monthlyLimit: -1 }, ['monthlyLimit']],
    ['monthlyLimit past 1,000,000,000', { ...valid, monthlyLimit: 1_000_000_001 }, ['monthlyLimit']],
    ['monthlyLimit with 7 decimals', { ...valid, monthlyLimit: 1.0000001 }, ['monthlyLimit']],
    ['monthlyLimit as a string', { ...valid, monthlyLimit: '10' }, ['monthlyLimit']],
    ['alertThreshold 0', { ...valid, alertThreshold: 0 }, ['alertThreshold']],
    ['alertThreshold past 100', { ...valid, alertThreshold: 100.5 }, ['alertThreshold']],
    ['alertThreshold with 3 decimals', { ...valid, alertThreshold: 12.345 }, ['alertThreshold']],
    ['an unknown scope', { ...valid, scope: 'ORG' }, ['scope']],
    ['KEY without keyHash', { ...valid, scope: 'KEY' }, ['keyHash']],
    ['ACCOUNT with a keyHash', { ...valid, keyHash: 'a'.repeat(64) }, ['keyHash']],
    ['a malformed keyHash', { ...valid, scope: 'KEY', keyHash: 'A'.repeat(64) }, ['keyHash']],
    ['an empty name', { ...valid, name: ' ' }, ['name']],
    ['a name of 101 characters', { ...valid, name: 'x'.repeat(101) }, ['name']],
    ['unknown fields', { ...valid, accountId: 'br_x', spend: 0 }, ['accountId', 'spend']],
    ['nothing', {}, ['alertThreshold', 'monthlyLimit', 'scope']],
  ])('POST refuses %s → 400 with paths', async (_name, body, paths) => {
    expectPaths(await call(t, 'POST', '/budgets', body), paths);
  });

  it('PATCH refuses an empty body, unknown fields and bad values → 400 with paths; a non-object body → 400', async () => {
    const created = (await call(t, 'POST', '/budgets', valid)).body;
    const path = `/budgets/${created.id}`;
    const empty = await call(t, 'PATCH', path, {});
    expectProblem(empty, 400);
    expect(empty.body.detail ?? '').not.toBe('');
    expectPaths(await call(t, 'PATCH', path, { id: 'bud_x' }), ['id']);
    expectPaths(await call(t, 'PATCH', path, { monthlyLimit: 0 }), ['monthlyLimit']);
    expectPaths(await call(t, 'PATCH', path, { keyHash: 'a'.repeat(64) }), ['keyHash']);
    expectProblem(await api(path, { method: 'PATCH', token: t.token, rawBody: '[1]' }), 400);
    expectProblem(await api(path, { method: 'PATCH', token: t.token, rawBody: '{"monthlyLimit":' }), 400);
    // nothing changed
    const listed = (await call(t, 'GET', '/budgets')).body.items.find((b: { id: string }) => b.id === created.id);
    expect(listed).toEqual(created);
  });

  it('an id that is malformed or of another kind → 404', async () => {
    expectProblem(await call(t, 'PATCH', '/budgets/nope', { monthlyLimit: 1 }), 404);
    expectProblem(await call(t, 'DELETE', '/budgets/rul_01KAAAAAAAAAAAAAAAAAAAAAAA'), 404);
    expectProblem(await call(t, 'DELETE', '/budgets/bud_01KAAAAAAAAAAAAAAAAAAAAAAA'), 404);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe('alert rules', () => {
  let t: Tenant;
  let key: string;
  const example = { type: 'cost_threshold', name: 'Daily cap', config: { threshold: 50, period: 'daily' }, channels: ['email'], isActive: true };

  beforeAll(async () => {
    t = await tenant();
    key = newKeyHash();
    await spend(t, key, 1);
  });

  it('POST the contract example → 201 with exactly the API fields', async () => {
    const res = await call(t, 'POST', '/alert-rules', example);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      ['channels', 'config', 'createdAt', 'id', 'isActive', 'lastTriggeredAt', 'name', 'type', 'updatedAt'].sort(),
    );
    expect(res.body).toEqual({
      id: expect.stringMatching(RULE_ID),
      type: 'cost_threshold',
      name: 'Daily cap',
      config: { threshold: 50, period: 'daily' },
      channels: ['email'],
      isActive: true,
      createdAt: expect.stringMatching(ISO),
      updatedAt: res.body.createdAt,
      lastTriggeredAt: null,
    });
  });

  it('each type with its own config; isActive defaults to true; configs come back exactly as given', async () => {
    const keyed = await call(t, 'POST', '/alert-rules', {
      type: 'cost_threshold',
      name: 'Key week',
      config: { threshold: 12.345678, period: 'weekly', keyHash: key, webhookUrl: HOOK },
      channels: ['email', 'webhook'],
    });
    expect(keyed.status, JSON.stringify(keyed.body)).toBe(201);
    expect(keyed.body).toMatchObject({
      config: { threshold: 12.345678, period: 'weekly', keyHash: key, webhookUrl: HOOK },
      channels: ['email', 'webhook'],
      isActive: true,
    });
    const newKey = await call(t, 'POST', '/alert-rules', { type: 'new_key', name: 'New key', config: {}, channels: ['email'], isActive: false });
    expect(newKey.body).toMatchObject({ type: 'new_key', config: {}, isActive: false });
    const spike = await call(t, 'POST', '/alert-rules', {
      type: 'spend_spike',
      name: 'Spike',
      config: { multiplier: 1.5, minSpend: 0, webhookUrl: HOOK },
      channels: ['webhook'],
    });
    expect(spike.status, JSON.stringify(spike.body)).toBe(201);
    expect(spike.body).toMatchObject({ type: 'spend_spike', config: { multiplier: 1.5, minSpend: 0, webhookUrl: HOOK }, channels: ['webhook'] });

    const list = await call(t, 'GET', '/alert-rules');
    expect(list.status).toBe(200);
    expect(list.body.nextCursor).toBeNull();
    expect(list.body.items.slice(0, 3)).toEqual([spike.body, newKey.body, keyed.body]);
  });

  it('PATCH merges; the type cannot change; webhook needs config.webhookUrl', async () => {
    const created = (await call(t, 'POST', '/alert-rules', example)).body;
    const path = `/alert-rules/${created.id}`;

    const paused = await call(t, 'PATCH', path, { isActive: false, name: ' Paused ' });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body).toEqual({ ...created, isActive: false, name: 'Paused', updatedAt: expect.stringMatching(ISO) });
    expect(paused.body.updatedAt > created.updatedAt).toBe(true);

    for (const patch of [{ type: 'spend_spike' }, { type: 'spend_spike', config: { multiplier: 3, minSpend: 10 } }]) {
      const refused = await call(t, 'PATCH', path, patch);
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toBe('The type of an alert rule cannot be changed.');
      expect(refused.body.errors).toEqual([{ path: 'type', message: expect.stringContaining('type cannot be changed') }]);
    }
    expectPaths(await call(t, 'PATCH', path, { config: { threshold: 0, period: 'daily' } }), ['config.threshold']);
    expectPaths(await call(t, 'PATCH', path, { channels: ['webhook'] }), ['config.webhookUrl']);

    const same = await call(t, 'PATCH', path, { type: created.type, config: { threshold: 7, period: 'weekly' } });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body).toMatchObject({ type: created.type, config: { threshold: 7, period: 'weekly' }, name: 'Paused', isActive: false });

    const hooked = await call(t, 'PATCH', path, { channels: ['webhook'], config: { threshold: 7, period: 'weekly', webhookUrl: HOOK } });
    expect(hooked.body).toMatchObject({ channels: ['webhook'], config: { webhookUrl: HOOK } });
    // dropping the webhook channel without dropping the URL is refused
    expectPaths(await call(t, 'PATCH', path, { channels: ['email'] }), ['config.webhookUrl']);

    const listed = (await call(t, 'GET', '/alert-rules')).body.items.find((r: { id: string }) => r.id === created.id);
    expect(listed).toEqual(hooked.body);
  });

  it('a cost_threshold on a key the account does not have → 400 at config.keyHash', async () => {
    expectPaths(await call(t, 'POST', '/alert-rules', { ...example, config: { threshold: 1, period: 'daily', keyHash: newKeyHash() } }), [
      'config.keyHash',
    ]);
    const created = (await call(t, 'POST', '/alert-rules', example)).body;
    expectPaths(await call(t, 'PATCH', `/alert-rules/${created.id}`, { config: { threshold: 1, period: 'daily', keyHash: newKeyHash() } }), [
      'config.keyHash',
    ]);
  });

  it('DELETE → 204, then 404', async () => {
    const created = (await call(t, 'POST', '/alert-rules', example)).body;
    expect((await call(t, 'DELETE', `/alert-rules/${created.id}`)).status).toBe(204);
    const ids = (await call(t, 'GET', '/alert-rules')).body.items.map((r: { id: string }) => r.id);
    expect(ids).not.toContain(created.id);
    expectProblem(await call(t, 'DELETE', `/alert-rules/${created.id}`), 404, '/problems/not-found');
    expectProblem(await call(t, 'PATCH', `/alert-rules/${created.id}`, { isActive: true }), 404, '/problems/not-found');
    expectProblem(await call(t, 'PATCH', '/alert-rules/bud_01KAAAAAAAAAAAAAAAAAAAAAAA', { isActive: true }), 404);
  });

  it.each([
    ['an unknown type', { ...example, type: 'budget' }, ['type']],
    ['no name', { type: 'new_key', config: {}, channels: ['email'] }, ['name']],
    ['threshold 0', { ...example, config: { threshold: 0, period: 'daily' } }, ['config.threshold']],
    ['threshold with 7 decimals', { ...example, config: { threshold: 0.0000001, period: 'daily' } }, ['config.threshold']],
    ['threshold past 1,000,000,000', { ...example, config: { threshold: 2_000_000_000, period: 'daily' } }, ['config.threshold']],
    ['an unknown period', { ...example, config: { threshold: 1, period: 'hourly' } }, ['config.period']],
    ['another type’s config field', { ...example, config: { threshold: 1, period: 'daily', minSpend: 1 } }, ['config.minSpend']],
    ['a new_key config with fields', { type: 'new_key', name: 'N', config: { period: 'daily' }, channels: ['email'] }, ['config.period']],
    ['multiplier below 1.5', { type: 'spend_spike', name: 'S', config: { multiplier: 1.4, minSpend: 0 }, channels: ['email'] }, ['config.multiplier']],
    ['negative minSpend', { type: 'spend_spike', name: 'S', config: { multiplier: 2, minSpend: -1 }, channels: ['email'] }, ['config.minSpend']],
    ['no channels', { ...example, channels: [] }, ['channels']],
    ['a repeated channel', { ...example, channels: ['email', 'email'] }, ['channels']],
    ['an unknown channel', { ...example, channels: ['sms'] }, ['channels.0']],
    ['webhook without config.webhookUrl', { ...example, channels: ['webhook'] }, ['config.webhookUrl']],
    ['config.webhookUrl without the webhook channel', { ...example, config: { threshold: 1, period: 'daily', webhookUrl: HOOK } }, ['config.webhookUrl']],
    ['a webhookUrl that is not a URL', { ...example, channels: ['webhook'], config: { threshold: 1, period: 'daily', webhookUrl: 'hooks' } }, ['config.webhookUrl']],
    ['a webhookUrl with credentials', { ...example, channels: ['webhook'], config: { threshold: 1, period: 'daily', webhookUrl: 'https://u:p@hooks.example.com/' } }, ['config.webhookUrl']],
    ['a webhookUrl of another scheme', { ...example, channels: ['webhook'], config: { threshold: 1, period: 'daily', webhookUrl: 'ftp://hooks.example.com/' } }, ['config.webhookUrl']],
    ['a webhookUrl past 2048 characters', { ...example, channels: ['webhook'], config: { threshold: 1, period: 'daily', webhookUrl: `${HOOK}/${'a'.repeat(2048)}` } }, ['config.webhookUrl']],
    ['isActive not a boolean', { ...example, isActive: 'yes' }, ['isActive']],
    ['unknown fields', { ...example, lastTriggeredAt: null, accountId: 'br_x' }, ['accountId', 'lastTriggeredAt']],
  ])('POST refuses %s → 400 with paths', async (_name, body, paths) => {
    expectPaths(await call(t, 'POST', '/alert-rules', body), paths);
  });

  it('PATCH refuses an empty body and unknown fields', async () => {
    const created = (await call(t, 'POST', '/alert-rules', example)).body;
    expectProblem(await call(t, 'PATCH', `/alert-rules/${created.id}`, {}), 400);
    expectPaths(await call(t, 'PATCH', `/alert-rules/${created.id}`, { lastTriggeredAt: '2026-01-01T00:00:00.000Z' }), ['lastTriggeredAt']);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe('limits, isolation and auth', () => {
  it('the 101st budget and the 101st rule → 409', async () => {
    const t = await tenant();
    const budget = { monthlyLimit: 1, alertThreshold: 50, scope: 'ACCOUNT' };
    const rule = { type: 'new_key', name: 'N', config: {}, channels: ['email'] };
    for (let i = 0; i < 10; i++) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, () => Promise.all([call(t, 'POST', '/budgets', budget), call(t, 'POST', '/alert-rules', rule)])),
      );
      expect(batch.flat().map((r) => r.status)).toEqual(Array(20).fill(201));
    }
    expectProblem(await call(t, 'POST', '/budgets', budget), 409, '/problems/budget-limit');
    expectProblem(await call(t, 'POST', '/alert-rules', rule), 409, '/problems/rule-limit');
    expect((await call(t, 'GET', '/budgets')).body.items).toHaveLength(100);
    expect((await call(t, 'GET', '/alert-rules')).body.items).toHaveLength(100);
    // after a delete there is room again
    const some = (await call(t, 'GET', '/budgets')).body.items[0];
    expect((await call(t, 'DELETE', `/budgets/${some.id}`)).status).toBe(204);
    expect((await call(t, 'POST', '/budgets', budget)).status).toBe(201);
  });

  it('another account’s ids → 404 on PATCH and DELETE, and nothing changes', async () => {
    const [owner, other] = await Promise.all([tenant(), tenant()]);
    const budget = (await call(owner, 'POST', '/budgets', { monthlyLimit: 5, alertThreshold: 50, scope: 'ACCOUNT' })).body;
    const rule = (await call(owner, 'POST', '/alert-rules', { type: 'new_key', name: 'N', config: {}, channels: ['email'] })).body;

    expectProblem(await call(other, 'PATCH', `/budgets/${budget.id}`, { monthlyLimit: 1 }), 404, '/problems/not-found');
    expectProblem(await call(other, 'DELETE', `/budgets/${budget.id}`), 404, '/problems/not-found');
    expectProblem(await call(other, 'PATCH', `/alert-rules/${rule.id}`, { isActive: false }), 404, '/problems/not-found');
    expectProblem(await call(other, 'DELETE', `/alert-rules/${rule.id}`), 404, '/problems/not-found');

    expect((await call(other, 'GET', '/budgets')).body).toEqual({ items: [], nextCursor: null });
    expect((await call(other, 'GET', '/alert-rules')).body).toEqual({ items: [], nextCursor: null });
    expect((await call(owner, 'GET', '/budgets')).body.items).toEqual([budget]);
    expect((await call(owner, 'GET', '/alert-rules')).body.items).toEqual([rule]);
  });

  it('a key of another account cannot be watched (400 at keyHash / config.keyHash)', async () => {
    const [owner, other] = await Promise.all([tenant(), tenant()]);
    const key = newKeyHash();
    await spend(owner, key, 1);
    expectPaths(await call(other, 'POST', '/budgets', { monthlyLimit: 5, alertThreshold: 50, scope: 'KEY', keyHash: key }), ['keyHash']);
    expectPaths(
      await call(other, 'POST', '/alert-rules', { type: 'cost_threshold', name: 'C', config: { threshold: 1, period: 'daily', keyHash: key }, channels: ['email'] }),
      ['config.keyHash'],
    );
  });

  it.each([
    ['GET', '/budgets'],
    ['POST', '/budgets'],
    ['PATCH', '/budgets/bud_01KAAAAAAAAAAAAAAAAAAAAAAA'],
    ['DELETE', '/budgets/bud_01KAAAAAAAAAAAAAAAAAAAAAAA'],
    ['GET', '/alert-rules'],
    ['POST', '/alert-rules'],
    ['PATCH', '/alert-rules/rul_01KAAAAAAAAAAAAAAAAAAAAAAA'],
    ['DELETE', '/alert-rules/rul_01KAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('%s %s without a token → 401', async (method, path) => {
    const res = await api(path, { method, ...(method === 'POST' || method === 'PATCH' ? { body: { monthlyLimit: 1 } } : {}) });
    expectProblem(res, 401);
    const bad = await api(path, { method, token: 'not-a-jwt' });
    expectProblem(bad, 401);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe('optimistic updates (the repositories against the stack’s DynamoDB Local)', () => {
  let restore: () => void;
  let t: Tenant;
  beforeAll(async () => {
    restore = pointAtStack();
    t = await tenant();
  });
  afterAll(() => restore());

  it('a Put based on a stale version is refused (conflict), on a deleted item reports missing', async () => {
    const created = (await call(t, 'POST', '/budgets', { monthlyLimit: 5, alertThreshold: 50, scope: 'ACCOUNT' })).body;
    const accountId = t.user.accountId;
    const stored = await budgetsRepo.getBudget(accountId, created.id);
    expect(stored).toEqual({ ...stored, id: created.id, monthlyLimitMicros: 5_000_000, name: null, keyHash: null });
    const edited = (await call(t, 'PATCH', `/budgets/${created.id}`, { name: 'Edited' })).body;
    // a writer that read before that edit loses
    expect(await budgetsRepo.replaceBudget(accountId, { ...stored!, name: 'Stale', updatedAt: new Date().toISOString() }, stored!.updatedAt)).toBe('conflict');
    expect((await call(t, 'GET', '/budgets')).body.items[0]).toEqual(edited);
    expect(await budgetsRepo.replaceBudget(accountId, { ...stored!, id: 'bud_01KAAAAAAAAAAAAAAAAAAAAAAA' }, stored!.updatedAt)).toBe('missing');
  });

  it('the stored items carry their kind in `entity` and only the model’s fields', async () => {
    const budget = (await call(t, 'POST', '/budgets', { monthlyLimit: 5, alertThreshold: 50, scope: 'ACCOUNT' })).body;
    const rule = (await call(t, 'POST', '/alert-rules', { type: 'new_key', name: 'N', config: {}, channels: ['email'] })).body;
    const get = (key: { pk: string; sk: string }) => dynamo().send(new GetCommand({ TableName: stack().tableName, Key: key }));
    const b = (await get(keys.budget(t.user.accountId, budget.id))).Item!;
    expect(Object.keys(b).sort()).toEqual(
      ['action', 'alertOnForecast', 'alertThreshold', 'connectionId', 'createdAt', 'entity', 'id', 'keyHash', 'monthlyLimitMicros', 'name', 'pk', 'projectId', 'scope', 'sk', 'type', 'updatedAt'].sort(),
    );
    expect(b).toMatchObject({ entity: 'Budget', monthlyLimitMicros: 5_000_000 });
    const r = (await get(keys.rule(t.user.accountId, rule.id))).Item!;
    expect(Object.keys(r).sort()).toEqual(
      ['channels', 'config', 'createdAt', 'entity', 'id', 'isActive', 'lastTriggeredAt', 'name', 'pk', 'sk', 'type', 'updatedAt'].sort(),
    );
    expect(r).toMatchObject({ entity: 'Rule', type: 'new_key' });
  });

  it('a firing between read and write is not overwritten; a PATCH keeps lastTriggeredAt', async () => {
    const rule = (await call(t, 'POST', '/alert-rules', { type: 'new_key', name: 'N', config: {}, channels: ['email'] })).body;
    const accountId = t.user.accountId;
    const stored = (await rulesRepo.getRule(accountId, rule.id))!;
    const firedAt = '2026-11-21T22:34:24.000Z';
    await dynamo().send(
      new UpdateCommand({
        TableName: stack().tableName,
        Key: keys.rule(accountId, rule.id),
        UpdateExpression: 'SET lastTriggeredAt = :t',
        ExpressionAttributeValues: { ':t': firedAt },
      }),
    );
    expect(await rulesRepo.replaceRule(accountId, { ...stored, name: 'Stale', updatedAt: new Date().toISOString() }, stored)).toBe('triggered');
    const patched = await call(t, 'PATCH', `/alert-rules/${rule.id}`, { name: 'Renamed' });
    expect(patched.body).toMatchObject({ name: 'Renamed', lastTriggeredAt: firedAt });
  });

  it('concurrent PATCHes: each is applied whole or refused with 409, never mixed', async () => {
    const created = (await call(t, 'POST', '/budgets', { monthlyLimit: 5, alertThreshold: 50, scope: 'ACCOUNT' })).body;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call(t, 'PATCH', `/budgets/${created.id}`, { name: `Edit ${i}`, monthlyLimit: i + 1 })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409), JSON.stringify(statuses)).toBe(true);
    for (const r of results.filter((r) => r.status === 409)) expectProblem(r, 409, '/problems/edit-conflict');
    const final = (await call(t, 'GET', '/budgets')).body.items.find((b: { id: string }) => b.id === created.id);
    expect(Number(final.name.slice(5)) + 1).toBe(final.monthlyLimit);
    expect(results.some((r) => r.status === 200 && r.body.updatedAt === final.updatedAt)).toBe(true);
  });
});
