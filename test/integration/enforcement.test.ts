/**
 * Budgets that stop spend (docs/features/budgets-and-alerts.md), on the local stack with both provider stand-ins:
 * an Anthropic key set inactive within one sync of crossing and back at the next period or on release; a workspace's
 * active keys stopped and exactly those restored; an OpenAI project's hard limit set at save, following a PATCH,
 * removed on delete with the customer's own limit put back; a read-only admin key → `enforcement_failed` and a
 * failed act, then success after rotation; 20 concurrent ingests past a limit → one act, one alert; another
 * account's ids → 404; a viewer can't release.
 */
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SyncResult } from '#shared/sync/all.ts';
import { api, registerUser, setPlan, uniqueEmail, type RegisteredUser } from './harness.ts';
import { connectStandIn, keyHash, standInsForFile, syncWhenFree, type StandInOrg } from './standins.ts';
import { linkInMail } from './outbox.ts';

const frozenAt = new Date();
const orgs = standInsForFile();

/** Runs one sync here at `now` (waiting while the stack's own worker holds the lease). */
const sync = (accountId: string, connectionId: string, now = frozenAt): Promise<SyncResult> => syncWhenFree(accountId, connectionId, now);

/** Connected with enforcement still off (the default): the tests turn it on themselves. */
// Two days of seeded usage (yesterday and today): the budgets here need spend this month, no older history.
const connected = (user: RegisteredUser, provider: 'openai' | 'anthropic') => connectStandIn(user, provider, { now: frozenAt, orgs, enforcement: 'off', historyDays: 2 });

const enforcementOn = (user: RegisteredUser, connectionId: string) =>
  api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { enforcement: 'on' } });

const keyIdByName = async (org: StandInOrg, name: string): Promise<string> => ((await org.state()).keys as any[]).find((k) => k.name === name)!.id;
const keyStatus = async (org: StandInOrg, id: string): Promise<string> => ((await org.state()).keys as any[]).find((k) => k.id === id)!.status;
const monthSpend = async (user: RegisteredUser, hash: string): Promise<number> => (await api(`/keys/${hash}`, { token: user.token })).body.spend.monthToDate;
const budget = async (user: RegisteredUser, id: string) => ((await api('/budgets', { token: user.token })).body.items as any[]).find((b) => b.id === id);
const actions = async (user: RegisteredUser, budgetId: string) => (await api(`/enforcement-actions?budgetId=${budgetId}`, { token: user.token })).body.items as any[];
const alertsOf = async (user: RegisteredUser, type: string) => (await api(`/alerts?type=${type}`, { token: user.token })).body.items as any[];
/** $15 of Claude Sonnet output on the key, now. */
const spendOn = (org: StandInOrg, apiKeyId: string) => org.control('/usage', { apiKeyId, model: 'claude-sonnet-4-5-20250929', add: { output: 1_000_000 } });

async function joinAs(admin: RegisteredUser, role: 'viewer' | 'member') {
  const email = uniqueEmail(role);
  expect((await api('/invitations', { method: 'POST', token: admin.token, body: { email, role } })).status).toBe(201);
  const { token } = await linkInMail(email, '/accept-invitation');
  const accepted = await api('/auth/accept-invitation', { method: 'POST', body: { token, password: 'Corr3ct-Horse', firstName: 'Grace', lastName: 'Hopper' } });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
  return { token: accepted.body.token as string, userId: accepted.body.userId as string };
}

describe('Anthropic: a key, a workspace', () => {
  let user: RegisteredUser;
  let org: StandInOrg;
  let connectionId: string;
  beforeAll(async () => {
    user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    ({ org, connectionId } = await connected(user, 'anthropic'));
  });

  it('stops a KEY budget’s key within one sync of crossing; a viewer can’t release; released for the month on the button', async () => {
    const keyId = await keyIdByName(org, 'prod-api');
    const hash = keyHash('anthropic', keyId);
    const spend = await monthSpend(user, hash);
    const body = { name: 'prod cap', monthlyLimit: Math.floor(spend) + 5, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' };
    // Enforcement off (the default): 400 naming it.
    const off = await api('/budgets', { method: 'POST', token: user.token, body });
    expect(off.status).toBe(400);
    expect(off.body.detail).toMatch(/enforcement is off/);
    expect((await enforcementOn(user, connectionId)).body.enforcement).toBe('on');
    const created = await api('/budgets', { method: 'POST', token: user.token, body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ action: 'stop', enforcement: { status: 'armed', lever: 'anthropic_key' } });
    const id = created.body.id as string;

    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('active'); // under the limit
    await spendOn(org, keyId);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    expect(await budget(user, id)).toMatchObject({ enforcement: { status: 'stopped', lever: 'anthropic_key', detail: expect.stringContaining('prod-api') } });
    expect(await actions(user, id)).toMatchObject([{ kind: 'key_deactivated', provider: 'anthropic', keyHash: hash, reason: 'limit_reached', actor: 'burnrate', result: 'ok' }]);
    expect((await alertsOf(user, 'budget_stopped')).filter((a) => a.budgetId === id)).toHaveLength(1);
    // The provider refuses the stopped key's calls: its usage no longer grows.
    expect((await spendOn(org, keyId)).refused).toBe('key_inactive');

    const viewer = await joinAs(user, 'viewer');
    expect((await api(`/budgets/${id}/release`, { method: 'POST', token: viewer.token })).status).toBe(403);
    const member = await joinAs(user, 'member');
    const released = await api(`/budgets/${id}/release`, { method: 'POST', token: member.token });
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('active');
    expect((await actions(user, id))[0]).toMatchObject({ kind: 'key_reactivated', reason: 'released', actor: member.userId, result: 'ok' });
    expect(await budget(user, id)).toMatchObject({ enforcement: { status: 'released' } });
    // Held for the rest of the month: still over the limit, yet left active.
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('active');
    expect(await actions(user, id)).toHaveLength(2);
    expect((await alertsOf(user, 'budget_released')).filter((a) => a.budgetId === id)).toHaveLength(1);
  });

  it('a workspace budget stops exactly its active keys and restores exactly those when the limit is raised', async () => {
    const state = await org.state();
    const research = (state.projects as any[]).find((p) => p.name === 'Research')!.id as string;
    const inWorkspace = (state.keys as any[]).filter((k) => k.projectId === research && k.status !== 'deleted');
    const active = inWorkspace.filter((k) => k.status === 'active').map((k) => k.id as string).sort();
    const others = inWorkspace.filter((k) => k.status !== 'active').map((k) => [k.id, k.status]);
    expect(active.length).toBeGreaterThan(1);
    expect(others.length).toBeGreaterThan(0);
    const spend = (await Promise.all(inWorkspace.map((k) => monthSpend(user, keyHash('anthropic', k.id))))).reduce((a, b) => a + b, 0);
    const created = await api('/budgets', {
      method: 'POST',
      token: user.token,
      body: { monthlyLimit: Math.floor(spend) + 5, alertThreshold: 80, scope: 'PROJECT', connectionId, projectId: research, action: 'stop' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ scope: 'PROJECT', connectionId, projectId: research, enforcement: { status: 'armed', lever: 'anthropic_workspace_keys' } });
    await spendOn(org, active[0]!);
    await sync(user.accountId, connectionId);
    const after = (await org.state()).keys as any[];
    for (const id of active) expect(after.find((k) => k.id === id).status).toBe('inactive');
    for (const [id, status] of others) expect(after.find((k) => k.id === id).status).toBe(status);
    expect((await actions(user, created.body.id)).filter((a) => a.kind === 'key_deactivated')).toHaveLength(active.length);

    const raised = await api(`/budgets/${created.body.id}`, { method: 'PATCH', token: user.token, body: { monthlyLimit: Math.floor(spend) + 500 } });
    expect(raised.status).toBe(200);
    await sync(user.accountId, connectionId);
    const restored = (await org.state()).keys as any[];
    for (const id of active) expect(restored.find((k) => k.id === id).status).toBe('active');
    for (const [id, status] of others) expect(restored.find((k) => k.id === id).status).toBe(status);
    const acts = await actions(user, created.body.id);
    expect(acts.filter((a) => a.kind === 'key_reactivated' && a.reason === 'budget_changed').map((a) => a.keyHash).sort()).toEqual(
      active.map((id) => keyHash('anthropic', id)).sort(),
    );
  });

  it('a read-only admin key: enforcement_failed and a failed act, then the act succeeds after rotation', async () => {
    const keyId = await keyIdByName(org, 'claude-code-team');
    const hash = keyHash('anthropic', keyId);
    await enforcementOn(user, connectionId);
    const { readOnlyAdminKey } = await org.control('/admin-key', { readOnly: true });
    expect((await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { adminKey: readOnlyAdminKey } })).status).toBe(200);
    const spend = await monthSpend(user, hash);
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: Math.max(1, Math.floor(spend) - 1), alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('active');
    expect(await budget(user, id)).toMatchObject({ enforcement: { status: 'failed', detail: expect.stringContaining('403') } });
    expect((await actions(user, id))[0]).toMatchObject({ kind: 'key_deactivated', result: 'failed' });
    expect((await alertsOf(user, 'enforcement_failed')).filter((a) => a.budgetId === id)).toHaveLength(1);

    expect((await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { adminKey: org.adminKey } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    expect(await budget(user, id)).toMatchObject({ enforcement: { status: 'stopped' } });
    expect((await actions(user, id))[0]).toMatchObject({ kind: 'key_deactivated', result: 'ok' });
  });

  // Last: the clocks move to the next month.
  it('restores a stopped key at the start of the next month', async () => {
    const keyId = await keyIdByName(org, 'support-agent');
    const hash = keyHash('anthropic', keyId);
    const spend = await monthSpend(user, hash);
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: Math.floor(spend) + 5, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await spendOn(org, keyId);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    const next = new Date(Date.UTC(frozenAt.getUTCFullYear(), frozenAt.getUTCMonth() + 1, 1, 0, 5));
    await org.control('/clock', { now: next.toISOString() });
    try {
      await sync(user.accountId, connectionId, next);
      expect(await keyStatus(org, keyId)).toBe('active');
      expect((await actions(user, created.body.id))[0]).toMatchObject({ kind: 'key_reactivated', reason: 'period_start', result: 'ok' });
    } finally {
      await org.control('/clock', { now: frozenAt.toISOString() });
    }
  });

});

describe('OpenAI: a project’s hard limit', () => {
  it('is set at save, follows a PATCH, is read back, and on delete the customer’s earlier limit is put back', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'openai');
    const state = await org.state();
    const project = (state.projects as any[]).find((p) => p.archivedAt === null && (state.keys as any[]).some((k) => k.projectId === p.id))!.id as string;
    const limitAt = () => org.get(`/v1/organization/projects/${project}/spend_limit`);
    // The customer's own limit, set before Burnrate's.
    const own = await fetch(`${org.url}/v1/organization/projects/${project}/spend_limit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ threshold_amount: 9_999_900, currency: 'USD', interval: 'month' }),
    });
    expect(own.status).toBe(200);

    // A single OpenAI key can't be paused: 400 suggesting its project.
    await enforcementOn(user, connectionId);
    const someKey = (state.keys as any[]).find((k) => k.projectId === project)!;
    const single = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 10, alertThreshold: 80, scope: 'KEY', keyHash: keyHash('openai', someKey.id), action: 'stop' } });
    expect(single.status).toBe(400);
    expect(single.body.detail).toMatch(/OpenAI can pause no single key.*PROJECT.*projectId/);

    const created = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 5000.509, alertThreshold: 80, scope: 'PROJECT', connectionId, projectId: project, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    await sync(user.accountId, connectionId);
    expect((await limitAt()).body).toMatchObject({ object: 'project.spend_limit', threshold_amount: 500_050, currency: 'USD', interval: 'month', enforcement: { status: 'inactive' } });
    expect(await budget(user, id)).toMatchObject({ enforcement: { status: 'armed', lever: 'openai_project_limit' } });

    expect((await api(`/budgets/${id}`, { method: 'PATCH', token: user.token, body: { monthlyLimit: 6000 } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect((await limitAt()).body.threshold_amount).toBe(600_000);

    // Below what the project spent: OpenAI enforces it; the sync reads that back.
    expect((await api(`/budgets/${id}`, { method: 'PATCH', token: user.token, body: { monthlyLimit: 0.5 } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect((await limitAt()).body).toMatchObject({ threshold_amount: 50, enforcement: { status: 'enforcing' } });
    await sync(user.accountId, connectionId);
    expect(await budget(user, id)).toMatchObject({ enforcement: { status: 'stopped' } });

    expect((await api(`/budgets/${id}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    const acts = (await api('/enforcement-actions', { token: user.token })).body.items as any[];
    expect((await limitAt()).body, JSON.stringify(acts)).toMatchObject({ threshold_amount: 9_999_900 });
    expect(acts.map((a) => [a.kind, a.reason, a.result])).toEqual([
      ['project_limit_removed', 'budget_deleted', 'ok'],
      ['project_limit_set', 'limit_reached', 'ok'], // below what the project spent: it stops spend
      ['project_limit_set', 'budget_changed', 'ok'],
      ['project_limit_set', 'budget_changed', 'ok'],
    ]);
    expect(acts[0].detail).toMatch(/earlier limit of \$99999\.00 put back/);

    // ACCOUNT = every lever: each project the account's keys are in gets a limit. Below the account's limit it is the
    // account's limit; at it, each project's limit drops to what the project spent this month (OpenAI refuses its
    // requests);
    // released, the limits go and the customer's own comes back.
    const projects = [...new Set((state.keys as any[]).map((k) => k.projectId as string))].filter((p) => (state.projects as any[]).some((x) => x.id === p && x.archivedAt === null));
    expect(projects.length).toBeGreaterThan(1);
    const limitOf = async (p: string) => {
      const res = await org.get(`/v1/organization/projects/${p}/spend_limit`);
      return res.status === 404 ? null : res.body;
    };
    const account = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 7000, alertThreshold: 80, scope: 'ACCOUNT', action: 'stop', name: 'Whole org' } });
    expect(account.status, JSON.stringify(account.body)).toBe(201);
    const accountId = account.body.id as string;
    await sync(user.accountId, connectionId);
    for (const p of projects) expect(await limitOf(p), p).toMatchObject({ threshold_amount: 700_000, enforcement: { status: 'inactive' } });
    expect(await budget(user, accountId)).toMatchObject({ enforcement: { status: 'armed', lever: 'account' } });

    expect((await api(`/budgets/${accountId}`, { method: 'PATCH', token: user.token, body: { monthlyLimit: 0.5 } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    const spent = new Map<string, number>();
    for (const k of (await api(`/spend?groupBy=project&from=${frozenAt.toISOString().slice(0, 8)}01&to=${frozenAt.toISOString().slice(0, 10)}`, { token: user.token })).body.groups as any[]) {
      if (k.project) spent.set(k.project.id, Math.round(Number(k.costUsd) * 1e6));
    }
    for (const p of projects) {
      const cents = Math.max(1, Math.floor((spent.get(p) ?? 0) / 10_000)); // what it spent this month
      expect(await limitOf(p), p).toMatchObject({ threshold_amount: cents, ...(cents > 1 ? { enforcement: { status: 'enforcing' } } : {}) });
    }
    expect(await budget(user, accountId)).toMatchObject({ enforcement: { status: 'stopped', lever: 'account' } });

    expect((await api(`/budgets/${accountId}/release`, { method: 'POST', token: user.token })).status).toBe(200);
    await sync(user.accountId, connectionId);
    for (const p of projects) {
      if (p === project) expect(await limitOf(p)).toMatchObject({ threshold_amount: 9_999_900 });
      else expect(await limitOf(p), p).toBeNull();
    }
    expect(await budget(user, accountId)).toMatchObject({ enforcement: { status: 'released' } });
    const accountActs = await actions(user, accountId);
    expect(accountActs.filter((a) => a.kind === 'project_limit_removed' && a.reason === 'released' && a.result === 'ok')).toHaveLength(projects.length);
    expect(accountActs.filter((a) => a.kind === 'project_limit_set' && a.reason === 'limit_reached' && a.result === 'ok')).toHaveLength(projects.length);
    expect((await alertsOf(user, 'budget_stopped')).some((a) => a.budgetId === accountId)).toBe(true);
  }, 180_000);
});

describe('keys that send events: the reporter guard', () => {
  it('20 concurrent ingests past a limit: one act, one alert; GET /ingest/blocks lists the key (401 without a valid key); other accounts get 404s', async () => {
    const user = await registerUser();
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'app' } })).body.key as string;
    const hash = 'a'.repeat(63) + '1';
    const event = (i: number, costUsd: number) => ({ requestId: `req-${i}-${Date.now()}`, keyHash: hash, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd });
    expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event(-1, 0.01)] } })).status).toBe(200);
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { name: 'app cap', monthlyLimit: 1, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.enforcement).toMatchObject({ status: 'armed', lever: 'reporter' });
    const id = created.body.id as string;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event(i, 0.5)] } })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(await actions(user, id)).toMatchObject([{ kind: 'reporter_blocked', keyHash: hash, reason: 'limit_reached', result: 'ok' }]);
    expect((await alertsOf(user, 'budget_stopped')).filter((a) => a.budgetId === id)).toHaveLength(1);
    const blocks = await api('/ingest/blocks', { headers: { 'x-api-key': ingestKey } });
    expect(blocks.status).toBe(200);
    expect(blocks.body).toMatchObject({ blocked: [{ keyHash: hash, budgetId: id }] });
    expect(blocks.body.refreshAfterSeconds).toBeLessThanOrEqual(30);
    expect((await api('/ingest/blocks')).status).toBe(401);
    expect((await api('/ingest/blocks', { headers: { 'x-api-key': 'br_live_not-a-key' } })).status).toBe(401);

    // Another account sees none of it.
    const other = await registerUser();
    expect((await api(`/enforcement-actions?budgetId=${id}`, { token: other.token })).status).toBe(404);
    expect((await api(`/budgets/${id}/release`, { method: 'POST', token: other.token })).status).toBe(404);
    expect((await api('/enforcement-actions', { token: other.token })).body.items).toEqual([]);

    // Raised above the spend: unblocked at once.
    expect((await api(`/budgets/${id}`, { method: 'PATCH', token: user.token, body: { monthlyLimit: 100 } })).status).toBe(200);
    expect((await api('/ingest/blocks', { headers: { 'x-api-key': ingestKey } })).body.blocked).toEqual([]);
    expect((await actions(user, id))[0]).toMatchObject({ kind: 'reporter_unblocked', reason: 'budget_changed' });
  });

  it('another account’s connection is a 404 for PATCH and for a PROJECT budget', async () => {
    const owner = await registerUser();
    const { connectionId } = await connected(owner, 'openai');
    const other = await registerUser();
    expect((await enforcementOn(other, connectionId)).status).toBe(404);
    const res = await api('/budgets', { method: 'POST', token: other.token, body: { monthlyLimit: 10, alertThreshold: 80, scope: 'PROJECT', connectionId, projectId: 'proj_x', action: 'stop' } });
    expect(res.status).toBe(404);
  });
});
