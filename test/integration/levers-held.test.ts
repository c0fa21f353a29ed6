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
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncConnection, type SyncResult } from '#shared/connections/sync.ts';
import { api, pointAtStack, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, type Provider, type StandInOrg } from './standins.ts';

let restore: () => void;
const frozenAt = new Date();
const orgs: StandInOrg[] = [];

beforeAll(async () => {
  restore = pointAtStack({
    CONNECTIONS_LOCAL_KEY: (await readFile(stack().connectionsKeyFile, 'utf8')).trim(),
    OPENAI_ADMIN_URL: stack().openaiAdmin.url,
    ANTHROPIC_ADMIN_URL: stack().anthropicAdmin.url,
    OPENROUTER_URL: stack().openrouter.url,
  });
});
afterAll(async () => {
  await Promise.all(orgs.map((o) => o.remove()));
  restore?.();
});

async function sync(accountId: string, connectionId: string, now = frozenAt): Promise<SyncResult> {
  for (let attempt = 0; attempt < 150; attempt++) {
    const result = await syncConnection(accountId, connectionId, { budgetMs: 600_000, http: { backoffMs: 20 }, now });
    if (result.status !== 'busy') return result;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the lease was never free');
}

async function connected(user: RegisteredUser, provider: Provider): Promise<{ org: StandInOrg; connectionId: string }> {
  const org = await newStandInOrg(provider, { now: frozenAt.toISOString(), late: null });
  orgs.push(org);
  const res = await api('/connections', { method: 'POST', token: user.token, body: { provider, adminKey: org.adminKey } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await sync(user.accountId, res.body.id);
  expect((await api(`/connections/${res.body.id}`, { method: 'PATCH', token: user.token, body: { enforcement: 'on' } })).status).toBe(200);
  return { org, connectionId: res.body.id };
}

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
