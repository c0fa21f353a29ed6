/**
 * Two budgets on one target never undo each other, in any order of create / release / delete (the table the unit
 * test enforcement-decide.test.ts runs over the decision, here end to end on the local stack with the stand-ins):
 * - two KEY stop budgets on one Anthropic key: the key stays off while either holds it, and is on after the last;
 * - two PROJECT stop budgets on one OpenAI project (both past their limits): the cap is the lower holder's, then the
 *   other's, then the customer's own limit;
 * - an ACCOUNT stop budget and a PROJECT stop budget on the same project, created in either order: the lower limit
 *   holds, deleting either leaves the other's, the customer's own comes back after the last.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { SyncResult } from '#shared/sync/all.ts';
import { api, registerUser, setPlan, type RegisteredUser } from './harness.ts';
import { connectStandIn, keyHash, standInsForFile, syncWhenFree, type Provider, type StandInOrg } from './standins.ts';

const frozenAt = new Date();
const orgs = standInsForFile();

const sync = (accountId: string, connectionId: string): Promise<SyncResult> => syncWhenFree(accountId, connectionId, frozenAt);

async function connected(provider: Provider): Promise<{ user: RegisteredUser; org: StandInOrg; connectionId: string }> {
  const user = await registerUser();
  await setPlan(user.accountId, 'GROWTH');
  // Two days of seeded usage (yesterday and today): the budgets here need spend this month, no older history.
  return { user, ...(await connectStandIn(user, provider, { now: frozenAt, orgs, historyDays: 2 })) };
}

type Removal = 'release' | 'delete';
const stopBudget = async (user: RegisteredUser, body: Record<string, unknown>) => {
  const res = await api('/budgets', { method: 'POST', token: user.token, body: { alertThreshold: 80, action: 'stop', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
};
async function remove(user: RegisteredUser, id: string, how: Removal): Promise<void> {
  if (how === 'release') expect((await api(`/budgets/${id}/release`, { method: 'POST', token: user.token })).status).toBe(200);
  else expect((await api(`/budgets/${id}`, { method: 'DELETE', token: user.token })).status).toBe(204);
}
const statusOf = async (user: RegisteredUser, id: string) => ((await api('/budgets', { token: user.token })).body.items as any[]).find((b) => b.id === id)?.enforcement.status;

/**
 * Which goes first (A or B), how it goes and how the other goes: each of A and B first, each way of going in each
 * position (release then delete, delete then release, both released, both deleted). The unit table runs all 16.
 */
const ORDERS: Array<[string, Removal, Removal]> = [
  ['A', 'release', 'delete'],
  ['A', 'delete', 'release'],
  ['B', 'release', 'release'],
  ['B', 'delete', 'delete'],
];

describe('two KEY budgets on one Anthropic key', () => {
  let ctx: Awaited<ReturnType<typeof connected>>;
  let keyId: string;
  let hash: string;
  beforeAll(async () => {
    ctx = await connected('anthropic');
    keyId = ((await ctx.org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id;
    hash = keyHash('anthropic', keyId);
  });
  const keyStatus = async () => ((await ctx.org.state()).keys as any[]).find((k) => k.id === keyId)!.status as string;

  it.each(ORDERS)('%s goes first (%s), then the other (%s): off while either holds it, on after the last', async (first, one, two) => {
    const { user, connectionId } = ctx;
    const ids = { A: await stopBudget(user, { name: 'A', monthlyLimit: 1, scope: 'KEY', keyHash: hash }), B: await stopBudget(user, { name: 'B', monthlyLimit: 1, scope: 'KEY', keyHash: hash }) };
    const [x, y] = first === 'A' ? [ids.A, ids.B] : [ids.B, ids.A];
    await sync(user.accountId, connectionId);
    expect(await keyStatus()).toBe('inactive');
    await remove(user, x, one);
    await sync(user.accountId, connectionId);
    expect(await keyStatus()).toBe('inactive');
    expect(await statusOf(user, y)).toBe('stopped');
    await remove(user, y, two);
    await sync(user.accountId, connectionId);
    expect(await keyStatus()).toBe('active');
  });
});

describe('OpenAI: budgets on one project', () => {
  let ctx: Awaited<ReturnType<typeof connected>>;
  let projectId: string;
  const OWN = 9_999_900;
  const limitOf = async () => {
    const r = await ctx.org.get(`/v1/organization/projects/${projectId}/spend_limit`);
    return r.status === 404 ? null : (r.body.threshold_amount as number);
  };
  beforeAll(async () => {
    ctx = await connected('openai');
    const state = await ctx.org.state();
    projectId = (state.projects as any[]).find((p) => p.archivedAt === null && (state.keys as any[]).some((k) => k.projectId === p.id))!.id;
    const res = await fetch(`${ctx.org.url}/v1/organization/projects/${projectId}/spend_limit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.org.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ threshold_amount: OWN, currency: 'USD', interval: 'month' }),
    });
    expect(res.status).toBe(200);
  });

  it.each(ORDERS)('two PROJECT budgets past their limits: %s goes first (%s), then the other (%s)', async (first, one, two) => {
    const { user, connectionId } = ctx;
    const ids = { A: await stopBudget(user, { name: 'A', monthlyLimit: 1, scope: 'PROJECT', connectionId, projectId }), B: await stopBudget(user, { name: 'B', monthlyLimit: 2, scope: 'PROJECT', connectionId, projectId }) };
    const cents = { [ids.A]: 100, [ids.B]: 200 };
    const [x, y] = first === 'A' ? [ids.A, ids.B] : [ids.B, ids.A];
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(100);
    expect(await statusOf(user, x)).toBe('stopped');
    await remove(user, x, one);
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(cents[y]);
    expect(await statusOf(user, y)).toBe('stopped');
    await remove(user, y, two);
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(OWN);
  });

  it.each([
    ['ACCOUNT', 'ACCOUNT'],
    ['ACCOUNT', 'PROJECT'],
    ['PROJECT', 'ACCOUNT'],
    ['PROJECT', 'PROJECT'],
  ])('ACCOUNT over PROJECT: %s created first, %s deleted first', async (created, deleted) => {
    const { user, connectionId } = ctx;
    const make = { ACCOUNT: () => stopBudget(user, { name: 'Whole org', monthlyLimit: 50_000, scope: 'ACCOUNT' }), PROJECT: () => stopBudget(user, { name: 'P', monthlyLimit: 7000, scope: 'PROJECT', connectionId, projectId }) };
    const ids: Record<string, string> = {};
    ids[created] = await make[created as 'ACCOUNT']();
    await sync(user.accountId, connectionId);
    const other = created === 'ACCOUNT' ? 'PROJECT' : 'ACCOUNT';
    ids[other] = await make[other as 'ACCOUNT']();
    await sync(user.accountId, connectionId);
    await sync(user.accountId, connectionId); // a second pass changes nothing
    expect(await limitOf()).toBe(700_000);
    await remove(user, ids[deleted]!, 'delete');
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(deleted === 'ACCOUNT' ? 700_000 : 5_000_000);
    await remove(user, ids[deleted === 'ACCOUNT' ? 'PROJECT' : 'ACCOUNT']!, 'delete');
    await sync(user.accountId, connectionId);
    expect(await limitOf()).toBe(OWN);
  });
});
