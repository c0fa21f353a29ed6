/**
 * Levers owned per target (docs/features/budgets-and-alerts.md), on the local stack with the
 * provider stand-ins — one test per defect found in part 5's levers:
 * - a key a person turned off stays off through a stop, a release and the month's start (Anthropic, OpenRouter);
 * - two KEY budgets on one key: releasing one leaves the key stopped while the other holds it;
 * - two PROJECT budgets on one OpenAI project: deleting one leaves the other's limit, and the customer's own limit
 *   (not the first budget's) comes back when the last goes;
 * - an ACCOUNT budget armed, then a PROJECT budget on the same project: the lower limit holds, nothing deletes it;
 * - an ACCOUNT budget never raises a customer's own lower project limit.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { syncConnection, type SyncResult } from '#shared/sync/all.ts';
import { api, registerUser, setPlan, type RegisteredUser } from './harness.ts';
import { connectStandIn, keyHash, standInsForFile, syncWhenFree, type Provider, type StandInOrg } from './standins.ts';

const frozenAt = new Date();
const orgs = standInsForFile();

const sync = (accountId: string, connectionId: string, now = frozenAt): Promise<SyncResult> => syncWhenFree(accountId, connectionId, now);

// Two days of seeded usage (yesterday and today): no scenario here needs older spend, and a first sync imports just those.
const connected = (user: RegisteredUser, provider: Provider) => connectStandIn(user, provider, { now: frozenAt, orgs, historyDays: 2 });

const post = (user: RegisteredUser, path: string, body?: unknown) => api(path, { method: 'POST', token: user.token, ...(body === undefined ? {} : { body }) });
const budgetOf = async (user: RegisteredUser, id: string) => ((await api('/budgets', { token: user.token })).body.items as any[]).find((b) => b.id === id);
const monthSpend = async (user: RegisteredUser, hash: string): Promise<number> => (await api(`/keys/${hash}`, { token: user.token })).body.spend.monthToDate;
const stopBudget = async (user: RegisteredUser, body: Record<string, unknown>) => {
  const res = await post(user, '/budgets', { alertThreshold: 80, action: 'stop', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
};

/** A new key at the stand-in with spend this month (a model the stand-in bills), synced, then turned off by a person. */
async function keyTurnedOff(user: RegisteredUser, org: StandInOrg, connectionId: string): Promise<{ id: string; hash: string }> {
  const anthropic = org.provider === 'anthropic';
  const model = anthropic ? 'claude-sonnet-4-5-20250929' : 'openai/gpt-4.1';
  const key = await org.control('/keys', { name: `turned-off-${Date.now()}`, model, ...(anthropic ? {} : { tier: 'OpenAI' }) });
  await org.control('/usage', anthropic ? { apiKeyId: key.id, model, add: { output: 1_000_000 } } : { apiKeyId: key.id, model, tier: 'OpenAI', add: { cost: 15_000_000, requests: 3, prompt: 900, completion: 100 } });
  await org.control(`/keys/${key.id}`, { status: 'inactive' }); // a person turns it off
  await sync(user.accountId, connectionId);
  const hash = keyHash(org.provider, key.id);
  expect(await monthSpend(user, hash)).toBeGreaterThan(2);
  return { id: key.id, hash };
}

const keyStatus = async (org: StandInOrg, id: string): Promise<string> => ((await org.state()).keys as any[]).find((k) => k.id === id)!.status;

describe.each(['anthropic', 'openrouter'] as const)('%s: a key a person turned off', (provider) => {
  it('stays off through a stop, a release and the month’s start', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, provider);
    const { id, hash } = await keyTurnedOff(user, org, connectionId);
    const budgetId = await stopBudget(user, { name: 'off key', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, id)).toBe('inactive');
    expect(await budgetOf(user, budgetId)).toMatchObject({ enforcement: { status: 'stopped' } });

    expect((await post(user, `/budgets/${budgetId}/release`)).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, id)).toBe('inactive');

    // A second budget stops it again this month, and the month's start releases it: still off.
    const second = await stopBudget(user, { name: 'off key 2', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
    await sync(user.accountId, connectionId);
    expect(await budgetOf(user, second)).toMatchObject({ enforcement: { status: 'stopped' } });
    const next = new Date(Date.UTC(frozenAt.getUTCFullYear(), frozenAt.getUTCMonth() + 1, 1, 0, 5));
    await org.control('/clock', { now: next.toISOString() });
    await sync(user.accountId, connectionId, next);
    expect(await keyStatus(org, id)).toBe('inactive');
    const acts = (await api(`/enforcement-actions?budgetId=${second}`, { token: user.token })).body.items as any[];
    expect(acts[0]).toMatchObject({ reason: 'period_start', result: 'ok' });
  });
});

describe('Anthropic: two KEY budgets on one key', () => {
  it('releasing one leaves the key stopped while the other holds it; the last release restores it', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
    const hash = keyHash('anthropic', keyId);
    const spend = await monthSpend(user, hash);
    const a = await stopBudget(user, { name: 'A', monthlyLimit: Math.max(1, Math.floor(spend) - 1), scope: 'KEY', keyHash: hash });
    const b = await stopBudget(user, { name: 'B', monthlyLimit: Math.max(1, Math.floor(spend) - 1), scope: 'KEY', keyHash: hash });
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    expect((await post(user, `/budgets/${a}/release`)).status).toBe(200);
    await sync(user.accountId, connectionId);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    expect(await budgetOf(user, a)).toMatchObject({ enforcement: { status: 'released' } });
    expect(await budgetOf(user, b)).toMatchObject({ enforcement: { status: 'stopped' } });
    expect((await api(`/budgets/${b}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('active');
  });
});

describe('OpenAI: project limits held by several budgets', () => {
  let user: RegisteredUser;
  let org: StandInOrg;
  let connectionId: string;
  let projects: string[];
  const limitOf = async (p: string) => {
    const res = await org.get(`/v1/organization/projects/${p}/spend_limit`);
    return res.status === 404 ? null : (res.body.threshold_amount as number);
  };
  const setOwn = async (p: string, cents: number) => {
    const res = await fetch(`${org.url}/v1/organization/projects/${p}/spend_limit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ threshold_amount: cents, currency: 'USD', interval: 'month' }),
    });
    expect(res.status).toBe(200);
  };
  beforeAll(async () => {
    user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    ({ org, connectionId } = await connected(user, 'openai'));
    const state = await org.state();
    projects = (state.projects as any[]).filter((p) => p.archivedAt === null && (state.keys as any[]).some((k) => k.projectId === p.id)).map((p) => p.id as string);
    expect(projects.length).toBeGreaterThan(1);
  });

  it('two PROJECT budgets: deleting one leaves the other’s limit; the customer’s own comes back after the last', async () => {
    const p = projects[0]!;
    await setOwn(p, 9_999_900);
    const a = await stopBudget(user, { name: 'A', monthlyLimit: 8000, scope: 'PROJECT', connectionId, projectId: p });
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(800_000);
    const b = await stopBudget(user, { name: 'B', monthlyLimit: 9000, scope: 'PROJECT', connectionId, projectId: p });
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(800_000); // the lowest of the holders
    expect((await api(`/budgets/${a}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(900_000);
    expect(await budgetOf(user, b)).toMatchObject({ enforcement: { status: 'armed' } });
    expect((await api(`/budgets/${b}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(9_999_900);
  });

  it('an ACCOUNT budget armed, then a PROJECT budget on the same project: the lower limit stays; an ACCOUNT budget never raises the customer’s own lower limit', async () => {
    const [p, q] = [projects[0]!, projects[1]!];
    await setOwn(q, 500); // the customer's own $5
    const account = await stopBudget(user, { name: 'Whole org', monthlyLimit: 50_000, scope: 'ACCOUNT' });
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(5_000_000);
    expect(await limitOf(q)).toBe(500);
    const project = await stopBudget(user, { name: 'P', monthlyLimit: 7000, scope: 'PROJECT', connectionId, projectId: p });
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(700_000);
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(700_000);
    expect(await limitOf(q)).toBe(500);
    expect((await api(`/budgets/${project}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect(await limitOf(p)).toBe(5_000_000);
    expect((await api(`/budgets/${account}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect(await limitOf(q)).toBe(500);
  });
});

describe('budgets with no usable lever, and releases of a budget not stopped', () => {
  it('400 no-lever: usage without a key, an archived or expired key, a key of a deleted connection; 409 not-stopped', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const keys = (await api('/keys?provider=anthropic&limit=100', { token: user.token })).body.items as any[];
    const unattributed = keys.find((k) => k.providerKeyId === null);
    expect(unattributed).toBeDefined();
    const archived = keys.find((k) => k.providerStatus === 'archived');
    const expired = keys.find((k) => k.providerStatus === 'expired');
    for (const k of [unattributed, archived, expired]) {
      const res = await post(user, '/budgets', { monthlyLimit: 10, alertThreshold: 80, scope: 'KEY', keyHash: k.hash, action: 'stop' });
      expect(res.status, k.name).toBe(400);
      expect(res.body.type).toMatch(/no-lever$/);
      expect(res.body.detail).toMatch(k === unattributed ? /without a key/ : /archived|expired/);
    }
    // A budget armed, not stopped: its release is a 409 and records nothing.
    const active = keys.find((k) => k.providerStatus === 'active' && k.providerKeyId);
    const armed = await stopBudget(user, { monthlyLimit: 1_000_000, scope: 'KEY', keyHash: active.hash });
    const release = await post(user, `/budgets/${armed}/release`);
    expect(release.status).toBe(409);
    expect(release.body.type).toMatch(/not-stopped$/);
    expect((await api(`/enforcement-actions?budgetId=${armed}`, { token: user.token })).body.items).toEqual([]);
    expect((await api(`/budgets/${armed}`, { method: 'DELETE', token: user.token })).status).toBe(204);

    expect((await api(`/connections/${connectionId}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    const gone = await post(user, '/budgets', { monthlyLimit: 10, alertThreshold: 80, scope: 'KEY', keyHash: active.hash, action: 'stop' });
    expect(gone.status).toBe(400);
    expect(gone.body.detail).toMatch(/connection that was deleted/);
    void org;
  });
});

describe('a connection turned off, paused or deleted puts back what Burnrate holds there', () => {
  const alerts = async (user: RegisteredUser, type: string, budgetId: string) => ((await api(`/alerts?type=${type}`, { token: user.token })).body.items as any[]).filter((a) => a.budgetId === budgetId);

  it.each(['enforcement off', 'paused', 'deleted'] as const)('%s: the key is active again, recorded (connection_changed) and announced', async (change) => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
    const hash = keyHash('anthropic', keyId);
    const budgetId = await stopBudget(user, { name: 'cap', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    const res =
      change === 'deleted'
        ? await api(`/connections/${connectionId}`, { method: 'DELETE', token: user.token })
        : await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: change === 'paused' ? { status: 'paused' } : { enforcement: 'off' } });
    expect(res.status).toBeLessThan(300);
    await sync(user.accountId, connectionId);
    // The stack's own worker (the change queued a sync) may be the one putting it back: wait for its record.
    await expect.poll(() => keyStatus(org, keyId), { timeout: 20_000 }).toBe('active');
    await expect.poll(async () => (await api(`/enforcement-actions?budgetId=${budgetId}`, { token: user.token })).body.items[0], { timeout: 20_000 }).toMatchObject({ kind: 'key_reactivated', reason: 'connection_changed', result: 'ok' });
    await expect.poll(async () => (await alerts(user, 'budget_released', budgetId)).length, { timeout: 20_000 }).toBe(1);
    // Another sync changes nothing more.
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('active');
  });

  it('when the provider refuses, the deletion still happens and enforcement_failed says what stays stopped and how to undo it', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
    const budgetId = await stopBudget(user, { name: 'cap', monthlyLimit: 1, scope: 'KEY', keyHash: keyHash('anthropic', keyId) });
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    const { readOnlyAdminKey } = await org.control('/admin-key', { readOnly: true });
    expect((await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { adminKey: readOnlyAdminKey } })).status).toBe(200);
    expect((await api(`/connections/${connectionId}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    expect((await api(`/connections/${connectionId}`, { token: user.token })).status).toBe(404);
    await sync(user.accountId, connectionId);
    await expect.poll(async () => (await alerts(user, 'enforcement_failed', budgetId)).length, { timeout: 20_000 }).toBe(1);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    const failed = await alerts(user, 'enforcement_failed', budgetId);
    expect(failed[0].message).toMatch(/prod-api stays stopped at Anthropic.*undo it by hand.*api_keys\/.*"status": "active"/);
    await expect.poll(async () => (await api(`/enforcement-actions?budgetId=${budgetId}`, { token: user.token })).body.items[0], { timeout: 20_000 }).toMatchObject({ kind: 'key_reactivated', reason: 'connection_changed', result: 'failed' });
  });
});

describe('a sync asked for while another runs', () => {
  it('is run right after it, never dropped', async () => {
    const { setLocalSyncSink } = await import('#shared/connections/queue.ts');
    const user = await registerUser();
    const { org, connectionId } = await connected(user, 'openai');
    const queued: string[] = [];
    setLocalSyncSink((messages) => queued.push(...messages.map((m) => m.connectionId)));
    try {
      await sync(user.accountId, connectionId); // the stack's own sync (queued by the PATCH) is over
      queued.length = 0;
      // The first sync is slowed by the provider (two 429s asking to retry after a second): the second is asked for meanwhile.
      await org.control('/faults', { status: 429, count: 2, retryAfter: 1 });
      const first = syncConnection(user.accountId, connectionId, { budgetMs: 600_000, now: frozenAt });
      await new Promise((r) => setTimeout(r, 300));
      const second = await syncConnection(user.accountId, connectionId, { budgetMs: 600_000, now: frozenAt });
      expect(queued).toEqual([]);
      const statuses = [(await first).status, second.status];
      expect(statuses[0]).toBe('done');
      expect(statuses[1]).toBe('busy');
      expect(queued).toEqual([connectionId]);
    } finally {
      setLocalSyncSink(undefined);
    }
  });
});

describe('what is stopped is visible, and a project budget speaks of its project', () => {
  it('stoppedBy on GET /keys and GET /keys/:hash right after the act; gone after the release, which the budget shows at once', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
    const hash = keyHash('anthropic', keyId);
    const budgetId = await stopBudget(user, { name: 'prod cap', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toEqual([]);
    await sync(user.accountId, connectionId);
    const want = [{ kind: 'budget', id: budgetId, name: 'prod cap', lever: 'anthropic_key', since: expect.any(String) }];
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toEqual(want);
    const listed = ((await api('/keys?provider=anthropic&limit=100', { token: user.token })).body.items as any[]).find((k) => k.hash === hash);
    expect(listed.stoppedBy).toEqual(want);

    const released = await post(user, `/budgets/${budgetId}/release`);
    expect(released.status).toBe(200);
    expect(released.body.enforcement.status).toBe('released'); // at once, before the sync puts the key back
    expect((await post(user, `/budgets/${budgetId}/release`)).status).toBe(409);
    await sync(user.accountId, connectionId);
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toEqual([]);
  });

  it('a key that sends events: stoppedBy as soon as the ingest that crossed answers', async () => {
    const user = await registerUser();
    const ingestKey = (await post(user, '/ingest-keys', { name: 'app' })).body.key as string;
    const hash = 'b'.repeat(63) + '2';
    const event = (costUsd: number) => ({ requestId: `req-${Math.random()}`, keyHash: hash, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd });
    expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event(0.01)] } })).status).toBe(200);
    const budgetId = await stopBudget(user, { name: 'app cap', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
    expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event(2)] } })).status).toBe(200);
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toEqual([{ kind: 'budget', id: budgetId, name: 'app cap', lever: 'reporter', since: expect.any(String) }]);
  });

  it('an OpenAI PROJECT budget: its project’s spend, forecast and alerts; its keys listed as stopped once the cap is reached, not while only set', async () => {
    const { evaluateSpend } = await import('#shared/alerting/evaluate.ts');
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'openai');
    const state = await org.state();
    const project = (state.projects as any[]).find((p) => p.archivedAt === null && (state.keys as any[]).filter((k) => k.projectId === p.id).length > 1)!;
    const keys = ((await api(`/keys?projectId=${project.id}&limit=100`, { token: user.token })).body.items as any[]);
    const spend = keys.reduce((n, k) => n + Math.round(k.spend.monthToDate * 1e6), 0) / 1e6;
    const forecast = keys.reduce((n, k) => n + Math.round(k.spend.forecastMonthEnd * 1e6), 0) / 1e6;
    const account = (await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 1, alertThreshold: 80, scope: 'ACCOUNT' } })).body;
    expect(account.spend.monthToDate).toBeGreaterThan(spend); // the account spends more than the project

    const created = await post(user, '/budgets', { name: 'Web app', monthlyLimit: Math.floor(spend) + 1000, alertThreshold: 80, scope: 'PROJECT', connectionId, projectId: project.id, action: 'stop' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const budgetId = created.body.id as string;
    expect(created.body.spend.monthToDate).toBeCloseTo(spend, 5);
    expect(created.body.forecast.monthEnd).toBeCloseTo(Math.max(spend, forecast), 2);
    await sync(user.accountId, connectionId);
    for (const k of keys) expect((await api(`/keys/${k.hash}`, { token: user.token })).body.stoppedBy, 'only set').toEqual([]);

    expect((await api(`/budgets/${budgetId}`, { method: 'PATCH', token: user.token, body: { monthlyLimit: 1 } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    for (const k of keys) expect((await api(`/keys/${k.hash}`, { token: user.token })).body.stoppedBy).toEqual([{ kind: 'budget', id: budgetId, name: 'Web app', lever: 'openai_project_limit', since: expect.any(String) }]);
    const acts = (await api(`/enforcement-actions?budgetId=${budgetId}`, { token: user.token })).body.items as any[];
    expect(acts[0]).toMatchObject({ kind: 'project_limit_set', reason: 'limit_reached', result: 'ok' });
    expect(acts.at(-1)).toMatchObject({ kind: 'project_limit_set', reason: 'budget_changed' });
    const alertsOf = async (type: string) => ((await api(`/alerts?type=${type}`, { token: user.token })).body.items as any[]).filter((a) => a.budgetId === budgetId);
    expect(await alertsOf('budget_stopped')).toHaveLength(1);

    await evaluateSpend(user.accountId, []);
    const [exceeded] = await alertsOf('budget_exceeded');
    expect(exceeded.message).toContain(`project "${project.name}"`);
    expect(exceeded.message).not.toContain('whole account');
    expect(exceeded.observedSpend).toBeCloseTo(spend, 2);

    expect((await post(user, `/budgets/${budgetId}/release`)).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect(await alertsOf('budget_released')).toHaveLength(1);
    for (const k of keys) expect((await api(`/keys/${k.hash}`, { token: user.token })).body.stoppedBy).toEqual([]);
  });
});

describe('native caps: the provider refuses spend past them, even with Burnrate down', () => {
  it('OpenRouter: a KEY budget sets the key’s own limit with a monthly reset, the stand-in refuses spend past it, and the customer’s own limit comes back', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'openrouter');
    const prod = ((await org.state()).keys as any[]).find((k) => k.name === 'Production')!;
    const own = (await org.get(`/api/v1/keys/${prod.id}`)).body.data;
    expect(own).toMatchObject({ limit: 5000, limit_reset: null }); // the customer's own lifetime limit
    const hash = keyHash('openrouter', prod.id);
    const spend = await monthSpend(user, hash);
    const limit = Math.floor(spend) + 5;
    const budgetId = await stopBudget(user, { name: 'router cap', monthlyLimit: limit, scope: 'KEY', keyHash: hash });
    await sync(user.accountId, connectionId);
    expect((await org.get(`/api/v1/keys/${prod.id}`)).body.data).toMatchObject({ limit, limit_reset: 'monthly', disabled: false });
    expect((await budgetOf(user, budgetId)).enforcement).toMatchObject({ status: 'armed', nativeCap: { status: 'set', provider: 'openrouter' } });
    expect((await api(`/enforcement-actions?budgetId=${budgetId}`, { token: user.token })).body.items[0]).toMatchObject({ kind: 'key_limit_set', reason: 'budget_changed', result: 'ok' });

    // Burnrate syncs no more: spend $2 a call at the stand-in until OpenRouter refuses the key.
    let calls = 0;
    let refused: string | undefined;
    while (!refused && calls < 20) {
      refused = (await org.control('/usage', { apiKeyId: prod.id, model: 'openai/gpt-4.1', tier: 'OpenAI', add: { cost: 2_000_000, requests: 1, prompt: 10, completion: 10 } })).refused;
      calls++;
    }
    expect(refused).toBe('key_limit_exceeded');
    const monthly = (await org.get(`/api/v1/keys/${prod.id}`)).body.data.usage_monthly as number;
    expect(monthly).toBeGreaterThanOrEqual(limit);
    expect(monthly).toBeLessThan(limit + 2); // at most one call past the cap

    expect((await api(`/budgets/${budgetId}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect((await org.get(`/api/v1/keys/${prod.id}`)).body.data).toMatchObject({ limit: 5000, limit_reset: null });
  });

  it('Anthropic: a workspace budget with nativeCap sets the workspace’s monthly limit and deletes it on release; without early access it says unavailable while its keys still stop', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const state = await org.state();
    const research = (state.projects as any[]).find((p) => p.name === 'Research')!.id as string;
    const budgetId = await stopBudget(user, { name: 'research cap', monthlyLimit: 100_000, scope: 'PROJECT', connectionId, projectId: research, nativeCap: true });
    await sync(user.accountId, connectionId);
    expect((await org.state()).workspaceLimits[research]).toMatchObject({ cents: 10_000_000, id: expect.stringMatching(/^spl_/) });
    expect((await budgetOf(user, budgetId)).enforcement.nativeCap).toMatchObject({ status: 'set', provider: 'anthropic' });
    expect((await api(`/budgets/${budgetId}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect((await org.state()).workspaceLimits[research]).toBeUndefined();

    // An organization without the early access preview: the cap is refused, said on the budget; the keys still stop.
    await org.control('/spend-limits', { earlyAccess: false });
    const second = await stopBudget(user, { name: 'research cap 2', monthlyLimit: 1, scope: 'PROJECT', connectionId, projectId: research, nativeCap: true });
    await sync(user.accountId, connectionId);
    const view = (await budgetOf(user, second)).enforcement;
    expect(view).toMatchObject({ status: 'stopped', nativeCap: { status: 'unavailable', provider: 'anthropic', detail: expect.stringMatching(/early access/) } });
    const active = ((await org.state()).keys as any[]).filter((k) => k.projectId === research);
    expect(active.some((k) => k.status === 'inactive')).toBe(true);
    expect(((await api('/alerts?type=enforcement_failed', { token: user.token })).body.items as any[]).filter((a) => a.budgetId === second)).toEqual([]);
    await sync(user.accountId, connectionId); // not asked again
    expect((await budgetOf(user, second)).enforcement.nativeCap.status).toBe('unavailable');
  });
});
