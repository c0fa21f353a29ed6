/**
 * Enforcement state of the earlier layout (one item per stop budget and target, `ENFORCE#<budgetId>#<targetId>`)
 * carried over to levers owned per target (shared/db/enforcement-legacy.ts), on the local stack with the stand-ins.
 * Each case writes the items the earlier levers left (and the provider state their acts made), then lets the new
 * levers run: the lever is released exactly (the key back on, the customer's own project limit back), the old items
 * are taken in once (a second read changes nothing) and replaced by expiring markers.
 */
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { keys, queries } from '#shared/db/keys.ts';
import { listEnforcement } from '#shared/db/enforcement.ts';
import type { SyncResult } from '#shared/sync/all.ts';
import { api, dynamo, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';
import { connectStandIn, keyHash, standInsForFile, syncWhenFree, type Provider, type StandInOrg } from './standins.ts';

const frozenAt = new Date();
const month = frozenAt.toISOString().slice(0, 7);
const orgs = standInsForFile();

// At the real clock, never behind it: the stack's own worker also syncs these connections (the syncs a budget's save
// queues) at the real time, and a pass dated before the states an earlier pass wrote would read them from the future.
const sync = (accountId: string, connectionId: string): Promise<SyncResult> => syncWhenFree(accountId, connectionId, new Date());

// Two days of seeded usage (yesterday and today): no scenario here needs older spend, and a first sync imports just those.
// Settled: the sync the stack runs when enforcement is turned on is over before a test writes the earlier layout.
const connected = (user: RegisteredUser, provider: Provider) => connectStandIn(user, provider, { now: frozenAt, orgs, historyDays: 2, settled: true });

/** A budget that only notifies (no lever pulled by the new levers yet): the earlier levers' items name it. */
async function notifyBudget(user: RegisteredUser, body: Record<string, unknown>): Promise<string> {
  const res = await api('/budgets', { method: 'POST', token: user.token, body: { alertThreshold: 80, action: 'notify', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

/** An item as the earlier levers wrote it (shared/db/enforcement.ts before levers were owned per target). */
async function putLegacy(accountId: string, budgetId: string, state: Record<string, any>): Promise<void> {
  await dynamo().send(
    new PutCommand({
      TableName: stack().tableName,
      Item: { ...keys.legacyEnforcementState(accountId, budgetId, state.target.id), entity: 'EnforcementState', type: 'EnforcementState', budgetId, v: 3, ...state },
    }),
  );
}

const enforceItems = async (accountId: string) => {
  const q = queries.accountItems(accountId, 'ENFORCE');
  const res = await dynamo().send(new QueryCommand({ TableName: stack().tableName, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': q.pk, ':p': q.skPrefix }, ConsistentRead: true }));
  return res.Items ?? [];
};
const keyStatus = async (org: StandInOrg, id: string): Promise<string> => ((await org.state()).keys as any[]).find((k) => k.id === id)!.status;

/**
 * What the earlier levers left on an Anthropic key: `prod-api` switched off by Burnrate under a budget (a notify one for
 * now), its state `stopped` since `since` in the earlier layout.
 */
async function oldStoppedKey(since: string, detail: string) {
  const user = await registerUser();
  await setPlan(user.accountId, 'GROWTH');
  const { org, connectionId } = await connected(user, 'anthropic');
  const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
  const hash = keyHash('anthropic', keyId);
  const budgetId = await notifyBudget(user, { name: 'Old stop', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
  await org.control(`/keys/${keyId}`, { status: 'inactive' });
  const target = { id: `key:${hash}`, kind: 'key', provider: 'anthropic', connectionId, keyHash: hash, keyId, projectId: null, name: 'prod-api' };
  await putLegacy(user.accountId, budgetId, { target, status: 'stopped', want: 'on', hold: false, period: month, since, detail });
  return { user, org, connectionId, keyId, budgetId, target };
}

describe('enforcement state of the earlier layout', () => {
  it('Anthropic: a key the earlier levers switched off is switched back on by the release (not taken as off by a person)', async () => {
    const { user, org, connectionId, keyId, budgetId, target } = await oldStoppedKey(new Date(frozenAt.getTime() - 3_600_000).toISOString(), 'Key prod-api deactivated');

    expect((await api(`/budgets/${budgetId}`, { method: 'PATCH', token: user.token, body: { action: 'stop' } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    const budget = ((await api('/budgets', { token: user.token })).body.items as any[]).find((b) => b.id === budgetId);
    expect(budget.enforcement.status).toBe('stopped');

    // Taken in once: the old item is a marker now, and reading again changes nothing.
    const items = await enforceItems(user.accountId);
    expect(items.filter((i) => i.entity === 'EnforcementState')).toEqual([]);
    expect(items.filter((i) => i.entity === 'EnforcementStateMigrated').map((i) => i.sk)).toEqual([keys.legacyEnforcementState(user.accountId, budgetId, target.id).sk]);
    const state = items.find((i) => i.sk === keys.leverState(user.accountId, target.id).sk)!;
    expect(state).toMatchObject({ prior: { active: true }, migratedFrom: [keys.legacyEnforcementState(user.accountId, budgetId, target.id).sk] });
    const once = await listEnforcement(user.accountId);
    const twice = await listEnforcement(user.accountId);
    expect(twice.states.find((s) => s.target.id === target.id)).toEqual(once.states.find((s) => s.target.id === target.id));

    // The release puts back exactly what was there before Burnrate's first act: the key on.
    expect((await api(`/budgets/${budgetId}/release`, { method: 'POST', token: user.token })).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect(await keyStatus(org, keyId)).toBe('active');
  });

  it('a connection turned off before any writer ran puts back a key the earlier levers switched off', async () => {
    const { user, org, connectionId, keyId, budgetId } = await oldStoppedKey(frozenAt.toISOString(), '');

    expect((await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { enforcement: 'off' } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    // The stack's own worker (the change queued a sync) may be the one putting it back.
    await expect.poll(() => keyStatus(org, keyId), { timeout: 20_000 }).toBe('active');
    await expect.poll(async () => (await api(`/enforcement-actions?budgetId=${budgetId}`, { token: user.token })).body.items[0], { timeout: 20_000 }).toMatchObject({ kind: 'key_reactivated', reason: 'connection_changed', result: 'ok' });
  });

  it('a key the reporter refused under the earlier layout stays refused: shown at once by the readers, carried over by the next writer', async () => {
    const user = await registerUser();
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'app' } })).body.key as string;
    const hash = 'c'.repeat(63) + '3';
    const ingest = async (costUsd: number, keyHash = hash) => {
      const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [{ requestId: `r-${Math.random()}`, keyHash, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd }] } });
      expect(res.status).toBe(200);
    };
    await ingest(2);
    const budgetId = await notifyBudget(user, { name: 'App cap', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
    // Another stop budget (not reached): GET /budgets then reads the levers for its view.
    await ingest(0.01, 'd'.repeat(64));
    const other = await api('/budgets', { method: 'POST', token: user.token, body: { name: 'Other', monthlyLimit: 1000, alertThreshold: 80, action: 'stop', scope: 'KEY', keyHash: 'd'.repeat(64) } });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    const target = { id: `reporter:${hash}`, kind: 'reporter', provider: 'openai', connectionId: null, keyHash: hash, keyId: null, projectId: null, name: hash.slice(0, 8) };
    await putLegacy(user.accountId, budgetId, { target, status: 'stopped', want: 'on', hold: false, period: month, since: frozenAt.toISOString(), detail: '' });

    // Readers (eventually consistent, no writes): the block list and stoppedBy show it; the old item is untouched.
    const blocks = (await api('/ingest/blocks', { headers: { 'x-api-key': ingestKey } })).body.blocked as any[];
    expect(blocks).toMatchObject([{ keyHash: hash, budgetId, holder: { kind: 'budget', id: budgetId } }]);
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toMatchObject([{ kind: 'budget', id: budgetId, lever: 'reporter' }]);
    expect((await api('/budgets', { token: user.token })).status).toBe(200); // a consistent read, by a function that may not write
    expect((await enforceItems(user.accountId)).filter((i) => i.entity === 'EnforcementState')).toHaveLength(1);

    // The budget turned to stop and a writer's pass (an ingest): carried over, still blocked, named, then released.
    expect((await api(`/budgets/${budgetId}`, { method: 'PATCH', token: user.token, body: { action: 'stop' } })).status).toBe(200);
    await ingest(0.01);
    expect((await enforceItems(user.accountId)).filter((i) => i.entity === 'EnforcementState')).toEqual([]);
    expect(((await api('/ingest/blocks', { headers: { 'x-api-key': ingestKey } })).body.blocked as any[]).map((b) => [b.keyHash, b.budgetName])).toEqual([[hash, 'App cap']]);
    expect((await api(`/budgets/${budgetId}/release`, { method: 'POST', token: user.token })).status).toBe(200);
    expect((await api('/ingest/blocks', { headers: { 'x-api-key': ingestKey } })).body.blocked).toEqual([]);
  });

  it('OpenAI: two old budgets on one project; the customer’s own limit (not the first budget’s) comes back after the last goes', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'openai');
    const state = await org.state();
    const projectId = (state.projects as any[]).find((p) => p.archivedAt === null && (state.keys as any[]).some((k) => k.projectId === p.id))!.id as string;
    const a = await notifyBudget(user, { name: 'A', monthlyLimit: 8000, scope: 'PROJECT', connectionId, projectId });
    const b = await notifyBudget(user, { name: 'B', monthlyLimit: 9000, scope: 'PROJECT', connectionId, projectId });
    // What the earlier levers left: the customer's own $50,000 replaced by A's $8,000, then B's $9,000 (B took A's
    // limit for "the customer's own"); the project limit at the provider is B's.
    const res = await fetch(`${org.url}/v1/organization/projects/${projectId}/spend_limit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ threshold_amount: 900_000, currency: 'USD', interval: 'month' }),
    });
    expect(res.status).toBe(200);
    const target = (limitCents: number) => ({ id: `project:${connectionId}:${projectId}`, kind: 'project', provider: 'openai', connectionId, keyHash: null, keyId: null, projectId, name: projectId, limitCents });
    const hourAgo = new Date(frozenAt.getTime() - 3_600_000).toISOString();
    await putLegacy(user.accountId, a, { target: target(800_000), status: 'armed', want: 'on', hold: false, period: month, since: hourAgo, detail: '', limitCents: 800_000, enforcing: false, priorLimitCents: 5_000_000 });
    await putLegacy(user.accountId, b, { target: target(900_000), status: 'armed', want: 'on', hold: false, period: month, since: frozenAt.toISOString(), detail: '', limitCents: 900_000, enforcing: false, priorLimitCents: 800_000 });
    const limitOf = async () => {
      const r = await org.get(`/v1/organization/projects/${projectId}/spend_limit`);
      return r.status === 404 ? null : (r.body.threshold_amount as number);
    };

    for (const id of [a, b]) expect((await api(`/budgets/${id}`, { method: 'PATCH', token: user.token, body: { action: 'stop' } })).status).toBe(200);
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(800_000); // the lowest of the holders
    expect((await api(`/budgets/${a}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(900_000);
    expect((await api(`/budgets/${b}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(5_000_000);
    expect((await enforceItems(user.accountId)).filter((i) => i.entity === 'EnforcementState')).toEqual([]);
  });
});
