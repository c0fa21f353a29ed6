/**
 * Tags on keys and projects, groupBy=tag and chargeback (docs/features/tags-and-chargeback.md), on the local stack with the
 * OpenAI stand-in: validation (400s), effective tags (the project's overlaid by the key's own), a key discovered in
 * a project after the project was tagged, GET /keys?tag=, groupBy=tag summing to the total, tagFilter, and
 * shared=allocate exact to the micro-dollar.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncConnection, type SyncResult } from '#shared/sync/all.ts';
import { api, pointAtStack, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, type StandInOrg } from './standins.ts';
import { parseCsv } from './csv.ts';

let restore: () => void;
const frozenAt = new Date();
const orgs: StandInOrg[] = [];
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const micros = (usd: number) => BigInt(Math.round(usd * 1e6));
const sumMicros = (groups: { costUsd: number }[]) => groups.reduce((s, g) => s + micros(g.costUsd), 0n);
const today = frozenAt.toISOString().slice(0, 10);
const firstOfMonth = `${today.slice(0, 7)}-01`;

beforeAll(async () => {
  restore = pointAtStack({
    CONNECTIONS_LOCAL_KEY: (await readFile(stack().connectionsKeyFile, 'utf8')).trim(),
    OPENAI_ADMIN_URL: stack().openaiAdmin.url,
    ANTHROPIC_ADMIN_URL: stack().anthropicAdmin.url,
  });
});
afterAll(async () => {
  await Promise.all(orgs.map((o) => o.remove()));
  restore?.();
});

/** One sync at the frozen clock, asked again every 25 ms (for up to 30 s) while the stack's own worker holds the lease. */
async function sync(accountId: string, connectionId: string): Promise<SyncResult> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const result = await syncConnection(accountId, connectionId, { budgetMs: 600_000, http: { backoffMs: 20 }, now: frozenAt });
    if (result.status !== 'busy') return result;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the lease was never free');
}

/** An account with three ingest keys that spent exactly $3, $1 and $1.000001 today. */
async function ingestAccount(): Promise<{ user: RegisteredUser; hashes: string[] }> {
  const user = await registerUser();
  const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key as string;
  const hashes = [0, 1, 2].map((i) => sha256(`tags-${i}-${randomUUID()}`));
  const costs = [3, 1, 1.000001];
  const events = hashes.map((hash, i) => ({
    requestId: randomUUID(),
    keyHash: hash,
    provider: 'openai',
    model: 'gpt-4o-mini',
    inputTokens: 100 + i,
    outputTokens: 10,
    costUsd: costs[i],
    timestamp: new Date(Date.now() - 60_000).toISOString(),
  }));
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events } });
  expect(res.body.accepted, JSON.stringify(res.body)).toBe(3);
  return { user, hashes };
}

const patchTags = (user: RegisteredUser, hash: string, tags: unknown) => api(`/keys/${hash}`, { method: 'PATCH', token: user.token, body: { tags } });

describe('PATCH /keys/{hash} {tags}', () => {
  let user: RegisteredUser;
  let hashes: string[];
  beforeAll(async () => ({ user, hashes } = await ingestAccount()));

  it('refuses bad tags with 400 naming the tag, and stores nothing', async () => {
    const hash = hashes[0]!;
    const bad: [unknown, RegExp][] = [
      [{ Team: 'a' }, /lower case/],
      [{ 'team name': 'a' }, /characters a-z/],
      [{ ['x'.repeat(65)]: 'a' }, /1–64/],
      [{ team: '' }, /1–256/],
      [{ team: 'é'.repeat(257) }, /1–256/],
      [{ team: 'a\nb' }, /control/],
      [{ team: 'a\u0085b' }, /control/],
      [{ team: 5 }, /string/],
      [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`t${i}`, 'v'])), /At most 20/],
      [['team', 'a'], /object/],
      [null, /object/],
    ];
    for (const [tags, message] of bad) {
      const res = await patchTags(user, hash, tags);
      expect(res.status, JSON.stringify(tags)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect(JSON.stringify(res.body.errors), JSON.stringify(tags)).toMatch(message);
    }
    expect((await api(`/keys/${hash}`, { token: user.token })).body).toMatchObject({ tags: {}, effectiveTags: {} });
    expect((await api(`/keys/${hash}`, { method: 'PATCH', token: user.token, body: {} })).status).toBe(400);
  });

  it('takes the limits exactly (20 tags, 64-character names, 256 Unicode characters), replaces the tags, and filters GET /keys by them', async () => {
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`t${i}`, 'v']));
    expect((await patchTags(user, hashes[0]!, twenty)).status).toBe(200);
    // 256 characters outside the BMP (512 UTF-16 code units), and the name characters a person uses for namespaces.
    const long = { ['a'.repeat(64)]: '😀'.repeat(256), 'cost-center/eu:1_x.y': 'Ünïcødé €' };
    const res = await patchTags(user, hashes[0]!, long);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.tags).toEqual(long);
    expect(res.body.effectiveTags).toEqual(long);
    expect((await patchTags(user, hashes[0]!, { team: 'search' })).body.tags).toEqual({ team: 'search' });
    expect((await patchTags(user, hashes[1]!, { team: 'ads', env: 'prod' })).status).toBe(200);
    // label and tags together
    const both = await api(`/keys/${hashes[2]}`, { method: 'PATCH', token: user.token, body: { label: 'shared', tags: { env: 'prod' } } });
    expect(both.body).toMatchObject({ label: 'shared', tags: { env: 'prod' }, effectiveTags: { env: 'prod' } });
    const byTag = async (tag: string) => ((await api(`/keys?tag=${encodeURIComponent(tag)}`, { token: user.token })).body.items as any[]).map((k) => k.hash).sort();
    expect(await byTag('team:search')).toEqual([hashes[0]]);
    expect(await byTag('env:prod')).toEqual([hashes[1], hashes[2]].sort());
    expect(await byTag('team')).toEqual([hashes[0], hashes[1]].sort());
    expect(await byTag('team:nobody')).toEqual([]);
    const listed = ((await api('/keys', { token: user.token })).body.items as any[]).find((k) => k.hash === hashes[1]);
    expect(listed).toMatchObject({ tags: { team: 'ads', env: 'prod' }, effectiveTags: { team: 'ads', env: 'prod' } });
  });

  it('another account’s key is 404', async () => {
    const other = await registerUser();
    expect((await patchTags(other, hashes[0]!, { team: 'x' })).status).toBe(404);
  });
});

describe('groupBy=tag and chargeback (ingest keys: $3 search, $1 ads, $1.000001 untagged)', () => {
  let user: RegisteredUser;
  let hashes: string[];
  beforeAll(async () => {
    ({ user, hashes } = await ingestAccount());
    await patchTags(user, hashes[0]!, { team: 'search' });
    await patchTags(user, hashes[1]!, { team: 'ads' });
  });
  const spend = async (query: string) => {
    const res = await api(`/spend?from=${firstOfMonth}&to=${today}&${query}`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  it('groups by the tag’s value, most cost first, null for untagged, summing to the total', async () => {
    const body = await spend('groupBy=tag&tag=team');
    expect(body.groups.map((g: any) => [g.value, g.costUsd])).toEqual([
      ['search', 3],
      [null, 1.000001],
      ['ads', 1],
    ]);
    expect(body.total.costUsd).toBe(5.000001);
    expect(sumMicros(body.groups)).toBe(micros(body.total.costUsd));
  });

  it('shared=allocate: the untagged $1.000001 split 3:1 by largest remainder; direct + shared = cost; groups sum to the total', async () => {
    const body = await spend('groupBy=tag&tag=team&shared=allocate');
    expect(body.groups).toMatchObject([
      { value: 'search', directUsd: 3, sharedUsd: 0.750001, costUsd: 3.750001 },
      { value: 'ads', directUsd: 1, sharedUsd: 0.25, costUsd: 1.25 },
    ]);
    expect(sumMicros(body.groups)).toBe(micros(body.total.costUsd));
    for (const g of body.groups) expect(micros(g.directUsd) + micros(g.sharedUsd)).toBe(micros(g.costUsd));
  });

  it('tagFilter narrows every figure; bad combinations are 400', async () => {
    expect((await spend('tagFilter=team:ads')).total.costUsd).toBe(1);
    expect((await spend('tagFilter=team:ads&groupBy=key')).groups.map((g: any) => g.hash)).toEqual([hashes[1]]);
    expect((await spend('tagFilter=team:nobody')).total.costUsd).toBe(0);
    for (const q of ['groupBy=tag', 'tag=team', 'groupBy=key&shared=allocate', 'groupBy=tag&tag=Team', 'tagFilter=']) {
      expect((await api(`/spend?${q}`, { token: user.token })).status, q).toBe(400);
    }
  });
});

describe('projects: tags, inheritance, a key discovered later (OpenAI stand-in)', () => {
  let user: RegisteredUser;
  let org: StandInOrg;
  let connectionId: string;
  beforeAll(async () => {
    user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    org = await newStandInOrg('openai', { now: frozenAt.toISOString(), late: null });
    orgs.push(org);
    const res = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: org.adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    connectionId = res.body.id;
    await sync(user.accountId, connectionId);
  }, 120_000);

  it('lists the projects, tags one, and its keys (and a key discovered later) inherit; a key’s own tag wins', { timeout: 120_000 }, async () => {
    const state = await org.state();
    const web = (state.projects as any[]).find((p) => p.name === 'Web app');
    const projects = await api('/projects', { token: user.token });
    expect(projects.status).toBe(200);
    const listed = (projects.body.items as any[]).find((p) => p.id === web.id);
    // Every key of the project, a deleted one included (it keeps its project).
    const webKeys = (state.keys as any[]).filter((k) => k.projectId === web.id);
    expect(listed).toEqual({ connectionId, provider: 'openai', id: web.id, name: 'Web app', tags: {}, keys: webKeys.length });

    // A key's own tag first: it must win over the project's.
    const prod = keyHash('openai', webKeys.find((k) => k.name === 'web-prod').id);
    expect((await patchTags(user, prod, { env: 'prod' })).body.effectiveTags).toEqual({ env: 'prod' });

    const patched = await api(`/projects/${connectionId}/${web.id}`, { method: 'PATCH', token: user.token, body: { tags: { team: 'web', env: 'staging' } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ id: web.id, tags: { team: 'web', env: 'staging' } });
    const keys = (await api(`/keys?projectId=${web.id}&limit=100`, { token: user.token })).body.items as any[];
    expect(keys.length).toBe(webKeys.length);
    for (const k of keys) expect(k.effectiveTags, k.name).toEqual(k.hash === prod ? { team: 'web', env: 'prod' } : { team: 'web', env: 'staging' });
    expect(keys.find((k) => k.hash === prod).tags).toEqual({ env: 'prod' });
    // Another project's keys are untouched.
    const others = ((await api('/keys?limit=100', { token: user.token })).body.items as any[]).filter((k) => k.project?.id !== web.id);
    expect(others.length).toBeGreaterThan(0);
    for (const k of others) expect(k.effectiveTags).toEqual({});

    // A key created in the project after it was tagged: the next sync finds it, tagged.
    const created = await org.control('/keys', { name: 'web-new', projectId: web.id });
    await sync(user.accountId, connectionId);
    const fresh = await api(`/keys/${keyHash('openai', created.id)}`, { token: user.token });
    expect(fresh.status).toBe(200);
    expect(fresh.body).toMatchObject({ tags: {}, effectiveTags: { team: 'web', env: 'staging' } });
    expect(((await api('/keys?tag=team:web&limit=100', { token: user.token })).body.items as any[]).length).toBe(webKeys.length + 1);

    // The project's tags change: every key follows (the key's own still wins); clearing them clears the keys'.
    await api(`/projects/${connectionId}/${web.id}`, { method: 'PATCH', token: user.token, body: { tags: { team: 'frontend' } } });
    expect((await api(`/keys/${prod}`, { token: user.token })).body.effectiveTags).toEqual({ team: 'frontend', env: 'prod' });
    expect((await api(`/keys/${keyHash('openai', created.id)}`, { token: user.token })).body.effectiveTags).toEqual({ team: 'frontend' });
    // A sync that finds nothing new writes no tags.
    const again = await sync(user.accountId, connectionId);
    expect(again.status).toBe('done');
    expect((await api(`/keys/${keyHash('openai', created.id)}`, { token: user.token })).body.effectiveTags).toEqual({ team: 'frontend' });
  });

  it('groupBy=tag over a connection: usage without a key and untagged keys are null; the groups sum to the account’s total', async () => {
    const from = org.importFrom;
    const byTag = await api(`/spend?from=${from}&to=${today}&groupBy=tag&tag=team`, { token: user.token });
    expect(byTag.status).toBe(200);
    const byDay = await api(`/spend?from=${from}&to=${today}&groupBy=day`, { token: user.token });
    expect(micros(byTag.body.total.costUsd)).toBe(micros(byDay.body.total.costUsd));
    expect(sumMicros(byTag.body.groups)).toBe(micros(byDay.body.total.costUsd));
    expect(byTag.body.groups.map((g: any) => g.value).sort()).toEqual(['frontend', null]);
    const allocated = await api(`/spend?from=${from}&to=${today}&groupBy=tag&tag=team&shared=allocate`, { token: user.token });
    expect(allocated.body.groups).toHaveLength(1);
    expect(allocated.body.groups[0]).toMatchObject({ value: 'frontend', costUsd: byDay.body.total.costUsd });
    // tagFilter: the project's keys only, equal to projectId's figure.
    const web = ((await org.state()).projects as any[]).find((p) => p.name === 'Web app');
    const tagged = await api(`/spend?from=${from}&to=${today}&tagFilter=team:frontend`, { token: user.token });
    const project = await api(`/spend?from=${from}&to=${today}&projectId=${web.id}`, { token: user.token });
    expect(tagged.body.total).toEqual(project.body.total);
    // The CSV export's `tags` column is each key's effective tags (a JSON object).
    const csv = await api(`/spend/export?from=${today}&to=${today}`, { token: user.token });
    expect(csv.status).toBe(200);
    const [header, ...rows] = parseCsv(csv.body as string);
    const col = (name: string) => header!.indexOf(name);
    const keys = new Map(((await api('/keys?limit=100', { token: user.token })).body.items as any[]).map((k) => [k.hash, k.effectiveTags]));
    const rowsOfKeys = rows.filter((r) => keys.has(r[col('key_hash')]!));
    expect(rowsOfKeys.length).toBeGreaterThan(0);
    for (const r of rowsOfKeys) expect(JSON.parse(r[col('tags')]!)).toEqual(keys.get(r[col('key_hash')]!));
    expect(rowsOfKeys.some((r) => JSON.parse(r[col('tags')]!).team === 'frontend')).toBe(true);
  });

  it('refuses bad project tags (400), unknown projects and another account’s (404)', async () => {
    const web = ((await org.state()).projects as any[]).find((p) => p.name === 'Web app');
    expect((await api(`/projects/${connectionId}/${web.id}`, { method: 'PATCH', token: user.token, body: { tags: { Team: 'x' } } })).status).toBe(400);
    expect((await api(`/projects/${connectionId}/${web.id}`, { method: 'PATCH', token: user.token, body: {} })).status).toBe(400);
    expect((await api(`/projects/${connectionId}/proj_nope`, { method: 'PATCH', token: user.token, body: { tags: {} } })).status).toBe(404);
    const other = await registerUser();
    expect((await api(`/projects/${connectionId}/${web.id}`, { method: 'PATCH', token: other.token, body: { tags: { team: 'x' } } })).status).toBe(404);
    expect((await api('/projects', { token: other.token })).body).toEqual({ items: [] });
  });
});

describe('TAG budgets', () => {
  it('notify: the tag’s keys’ month spend, now and later; alerts name the tag', async () => {
    const { user, hashes } = await ingestAccount();
    await patchTags(user, hashes[0]!, { team: 'search' });
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 3.5, alertThreshold: 50, scope: 'TAG', tag: { name: 'team', value: 'search' } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ scope: 'TAG', tag: { name: 'team', value: 'search' }, spend: { monthToDate: 3 }, status: 'warning' });
    // A key tagged later is covered at once.
    await patchTags(user, hashes[1]!, { team: 'search' });
    const listed = ((await api('/budgets', { token: user.token })).body.items as any[]).find((b) => b.id === created.body.id);
    expect(listed).toMatchObject({ spend: { monthToDate: 4 }, status: 'exceeded' });
    for (const body of [
      { monthlyLimit: 1, alertThreshold: 50, scope: 'TAG' },
      { monthlyLimit: 1, alertThreshold: 50, scope: 'TAG', tag: { name: 'Team', value: 'x' } },
      { monthlyLimit: 1, alertThreshold: 50, scope: 'TAG', tag: { name: 'team', value: '' } },
      { monthlyLimit: 1, alertThreshold: 50, scope: 'ACCOUNT', tag: { name: 'team', value: 'x' } },
    ]) {
      expect((await api('/budgets', { method: 'POST', token: user.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    // The next ingest evaluates it: a budget_exceeded alert about the tag.
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key as string;
    await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [{ requestId: randomUUID(), keyHash: hashes[1], provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1, outputTokens: 1, costUsd: 0.01 }] } });
    const alerts = (await api('/alerts?type=budget_exceeded', { token: user.token })).body.items as any[];
    expect(alerts.find((a) => a.budgetId === created.body.id)?.message).toMatch(/keys tagged team: search/);
  });

  it('stop: only the tag’s keys are stopped (the reporter’s blocks)', async () => {
    const { user, hashes } = await ingestAccount();
    await patchTags(user, hashes[0]!, { team: 'search' });
    await patchTags(user, hashes[1]!, { team: 'ads' });
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key as string;
    const blocked = async () => ((await api('/ingest/blocks', { headers: { 'x-api-key': ingestKey } })).body.blocked as any[]).map((b) => b.keyHash).sort();
    expect(await blocked()).toEqual([]);
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 2, alertThreshold: 80, scope: 'TAG', tag: { name: 'team', value: 'search' }, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.enforcement).toMatchObject({ status: 'stopped', lever: 'tag' });
    expect(await blocked()).toEqual([hashes[0]]);
    // A key tagged later is stopped by the next evaluation (the next ingest of the account).
    await patchTags(user, hashes[2]!, { team: 'search' });
    await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [{ requestId: randomUUID(), keyHash: hashes[1], provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1, outputTokens: 1, costUsd: 0.01 }] } });
    await expect.poll(blocked, { timeout: 10_000 }).toEqual([hashes[0], hashes[2]].sort());
    expect(await blocked()).not.toContain(hashes[1]);
  });
});

describe('TAG stop budget on a connection (Anthropic stand-in: key switches)', () => {
  it('deactivates only the keys whose effective tags hold the tag', { timeout: 180_000 }, async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    // Two days of seeded usage (yesterday and today): the budget needs this month's spend of active keys, no history.
    const org = await newStandInOrg('anthropic', { now: frozenAt.toISOString(), late: null, historyDays: 2 });
    orgs.push(org);
    const res = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'anthropic', adminKey: org.adminKey } });
    const connectionId = res.body.id as string;
    await sync(user.accountId, connectionId);
    expect((await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { enforcement: 'on' } })).status).toBe(200);
    const state = await org.state();
    const active = (state.keys as any[]).filter((k) => k.status === 'active');
    const mine = active.slice(0, 2);
    for (const k of mine) expect((await patchTags(user, keyHash('anthropic', k.id), { team: 'growth' })).status).toBe(200);
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 0.01, alertThreshold: 80, scope: 'TAG', tag: { name: 'team', value: 'growth' }, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await sync(user.accountId, connectionId);
    const after = await org.state();
    const status = (id: string) => (after.keys as any[]).find((k) => k.id === id).status;
    for (const k of mine) expect(status(k.id), k.name).toBe('inactive');
    for (const k of active.slice(2)) expect(status(k.id), k.name).toBe('active');
  });
});
