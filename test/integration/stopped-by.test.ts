/**
 * `stoppedBy` right after each kind of act (docs/features/budgets-and-alerts.md, "What is stopped, where people look"),
 * on the local stack with the stand-ins: the first `GET /keys` and `GET /keys/:hash` after the act that stopped a key
 * (no further sync or ingest) name its holder, and the hold's `since` is within a second of the act recorded in the
 * actions log. One case per kind of act: an Anthropic key switched off, an OpenRouter key disabled, an OpenAI project
 * capped (every key of the project), a key the reporter refuses, and a spend-anomaly rule's hold (kind `anomaly`).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SyncResult } from '#shared/sync/all.ts';
import { api, clearOfUtcMidnight, DATED_FILE_MS, registerUser, setPlan, type RegisteredUser } from './harness.ts';
import { connectStandIn, keyHash, pointAtStandIns, syncWhenFree, type Provider, type StandInOrg } from './standins.ts';

const DAY = 86_400_000;
let restore: () => void;
const frozenAt = new Date();
const orgs: StandInOrg[] = [];

beforeAll(async () => {
  await clearOfUtcMidnight(DATED_FILE_MS);
  restore = await pointAtStandIns();
});
afterAll(async () => {
  await Promise.all(orgs.map((o) => o.remove()));
  restore?.();
});

const sync = (accountId: string, connectionId: string): Promise<SyncResult> => syncWhenFree(accountId, connectionId, frozenAt);

// Two days of seeded usage (yesterday and today): no scenario here needs older spend, and a first sync imports just those.
const connected = (user: RegisteredUser, provider: Provider) => connectStandIn(user, provider, { now: frozenAt, orgs, historyDays: 2 });

const stopBudget = async (user: RegisteredUser, body: Record<string, unknown>) => {
  const res = await api('/budgets', { method: 'POST', token: user.token, body: { alertThreshold: 80, action: 'stop', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
};
const ingestEvent = (hash: string, costUsd: number, at = new Date()) => ({ requestId: `r-${Math.random()}`, keyHash: hash, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd, timestamp: at.toISOString() });

interface Stopped {
  user: RegisteredUser;
  /** The keys the act stopped. */
  hashes: string[];
  holder: { kind: 'budget' | 'anomaly'; id: string; name: string };
  lever: string;
  /** What the actions log calls the act. */
  act: string;
  /** Runs what puts the lever back after a release (the connection's sync; a reporter block goes at once). */
  settle: () => Promise<unknown>;
}

/** Each kind of act, taken; then nothing more happens before the reads. */
const ACTS: Array<[string, () => Promise<Stopped>]> = [
  [
    'an Anthropic key switched off',
    async () => {
      const user = await registerUser();
      await setPlan(user.accountId, 'GROWTH');
      const { org, connectionId } = await connected(user, 'anthropic');
      const hash = keyHash('anthropic', ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id);
      const id = await stopBudget(user, { name: 'prod cap', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
      await sync(user.accountId, connectionId);
      return { user, hashes: [hash], holder: { kind: 'budget', id, name: 'prod cap' }, lever: 'anthropic_key', act: 'key_deactivated', settle: () => sync(user.accountId, connectionId) };
    },
  ],
  [
    'an OpenRouter key disabled',
    async () => {
      const user = await registerUser();
      await setPlan(user.accountId, 'GROWTH');
      const { org, connectionId } = await connected(user, 'openrouter');
      const hash = keyHash('openrouter', ((await org.state()).keys as any[]).find((k) => k.name === 'Production')!.id);
      const id = await stopBudget(user, { name: 'router cap', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
      await sync(user.accountId, connectionId);
      return { user, hashes: [hash], holder: { kind: 'budget', id, name: 'router cap' }, lever: 'openrouter_key', act: 'key_disabled', settle: () => sync(user.accountId, connectionId) };
    },
  ],
  [
    'an OpenAI project capped: every key of the project',
    async () => {
      const user = await registerUser();
      await setPlan(user.accountId, 'GROWTH');
      const { org, connectionId } = await connected(user, 'openai');
      const state = await org.state();
      const project = (state.projects as any[]).find((p) => p.archivedAt === null && (state.keys as any[]).filter((k) => k.projectId === p.id && k.status === 'active').length > 1)!;
      const hashes = ((await api(`/keys?projectId=${project.id}&limit=100`, { token: user.token })).body.items as any[]).map((k) => k.hash as string);
      expect(hashes.length).toBeGreaterThan(1);
      const id = await stopBudget(user, { name: 'Web app', monthlyLimit: 1, scope: 'PROJECT', connectionId, projectId: project.id });
      await sync(user.accountId, connectionId);
      return { user, hashes, holder: { kind: 'budget', id, name: 'Web app' }, lever: 'openai_project_limit', act: 'project_limit_set', settle: () => sync(user.accountId, connectionId) };
    },
  ],
  [
    'an Anthropic workspace’s keys switched off: every active key of the workspace',
    async () => {
      const user = await registerUser();
      await setPlan(user.accountId, 'GROWTH');
      const { org, connectionId } = await connected(user, 'anthropic');
      const state = await org.state();
      const workspace = (state.projects as any[]).find((p) => (state.keys as any[]).filter((k) => k.projectId === p.id && k.status === 'active').length > 0)!;
      const active = new Set((state.keys as any[]).filter((k) => k.projectId === workspace.id && k.status === 'active').map((k) => keyHash('anthropic', k.id)));
      const hashes = ((await api(`/keys?projectId=${workspace.id}&limit=100`, { token: user.token })).body.items as any[]).map((k) => k.hash as string).filter((h) => active.has(h));
      expect(hashes.length).toBeGreaterThan(0);
      const id = await stopBudget(user, { name: 'Workspace cap', monthlyLimit: 1, scope: 'PROJECT', connectionId, projectId: workspace.id });
      await sync(user.accountId, connectionId);
      return { user, hashes, holder: { kind: 'budget', id, name: 'Workspace cap' }, lever: 'anthropic_key', act: 'key_deactivated', settle: () => sync(user.accountId, connectionId) };
    },
  ],
  [
    'a key the reporter refuses',
    async () => {
      const user = await registerUser();
      const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'app' } })).body.key as string;
      const hash = createHash('sha256').update(`stopped-by-${Math.random()}`).digest('hex');
      expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [ingestEvent(hash, 0.01)] } })).status).toBe(200);
      const id = await stopBudget(user, { name: 'app cap', monthlyLimit: 1, scope: 'KEY', keyHash: hash });
      expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [ingestEvent(hash, 2)] } })).status).toBe(200);
      return { user, hashes: [hash], holder: { kind: 'budget', id, name: 'app cap' }, lever: 'reporter', act: 'reporter_blocked', settle: async () => undefined };
    },
  ],
  [
    'a spend-anomaly rule’s hold (kind anomaly)',
    async () => {
      const user = await registerUser();
      const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'proxy' } })).body.key as string;
      const hash = createHash('sha256').update(`anomaly-${Math.random()}`).digest('hex');
      // 14 days of $2.40 a day ($0.10 an hour), then $5 in the hour: 50×.
      const midnight = Math.floor(Date.now() / DAY) * DAY;
      const history = Array.from({ length: 14 }, (_, i) => ingestEvent(hash, 2.4, new Date(midnight - (i + 1) * DAY + 12 * 3_600_000)));
      expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: history } })).body.accepted).toBe(14);
      const rule = await api('/alert-rules', { method: 'POST', token: user.token, body: { type: 'spend_anomaly', name: 'Runaway keys', channels: ['email'], config: { minUsdPerHour: 1, multiplier: 10, action: 'stop' } } });
      expect(rule.status, JSON.stringify(rule.body)).toBe(201);
      expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [ingestEvent(hash, 5)] } })).status).toBe(200);
      return { user, hashes: [hash], holder: { kind: 'anomaly', id: rule.body.id, name: 'Runaway keys' }, lever: 'reporter', act: 'reporter_blocked', settle: async () => undefined };
    },
  ],
];

describe('stoppedBy on the first read after each kind of act', () => {
  it.each(ACTS)('%s', async (_name, take) => {
    const s = await take();
    const acts = ((await api('/enforcement-actions', { token: s.user.token })).body.items as any[]).filter((a) => a.kind === s.act && a.holder.kind === s.holder.kind);
    expect(acts.length, JSON.stringify(acts)).toBeGreaterThan(0);
    const actAt = Date.parse(acts[0].at);
    const listed = new Map(((await api('/keys?limit=100', { token: s.user.token })).body.items as any[]).map((k) => [k.hash as string, k]));
    for (const hash of s.hashes) {
      const one = (await api(`/keys/${hash}`, { token: s.user.token })).body;
      for (const view of [one, listed.get(hash)]) {
        expect(view?.stoppedBy, hash).toEqual([{ kind: s.holder.kind, id: expect.stringContaining(s.holder.id), name: s.holder.name, lever: s.lever, since: expect.any(String) }]);
        expect(Math.abs(Date.parse(view.stoppedBy[0].since) - actAt), 'since: the act').toBeLessThan(1000);
      }
    }

    // Every lever kind announces the stop and the release to the budget's people (an anomaly rule's hold is
    // announced by its spend_anomaly alert and released on the key: POST /keys/:hash/release).
    const alertsOf = async (type: string) => ((await api(`/alerts?type=${type}`, { token: s.user.token })).body.items as any[]).filter((a) => a.budgetId === s.holder.id);
    if (s.holder.kind === 'budget') {
      expect(await alertsOf('budget_stopped'), 'budget_stopped').toHaveLength(1);
      expect((await api(`/budgets/${s.holder.id}/release`, { method: 'POST', token: s.user.token })).status).toBe(200);
    } else {
      expect((await api(`/keys/${s.hashes[0]}/release`, { method: 'POST', token: s.user.token })).status).toBe(200);
    }
    await s.settle();
    for (const hash of s.hashes) expect((await api(`/keys/${hash}`, { token: s.user.token })).body.stoppedBy, `released: ${hash}`).toEqual([]);
    if (s.holder.kind === 'budget') expect(await alertsOf('budget_released'), 'budget_released').toHaveLength(1);
  });
});

describe('a PROJECT budget on an Anthropic workspace speaks of the workspace', () => {
  it('its spend, its exceeded alert (the workspace’s spend, never the account’s) and its forecast', async () => {
    const { evaluateSpend } = await import('#shared/alerting/evaluate.ts');
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const state = await org.state();
    const workspace = (state.projects as any[]).find((p) => (state.keys as any[]).some((k) => k.projectId === p.id))!;
    const keys = (await api(`/keys?projectId=${workspace.id}&limit=100`, { token: user.token })).body.items as any[];
    const spend = keys.reduce((n, k) => n + Math.round(k.spend.monthToDate * 1e6), 0) / 1e6;
    const forecast = keys.reduce((n, k) => n + Math.round(k.spend.forecastMonthEnd * 1e6), 0) / 1e6;
    const account = (await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: 100_000, alertThreshold: 80, scope: 'ACCOUNT' } })).body;
    expect(account.spend.monthToDate).toBeGreaterThan(spend + 0.01); // the account spends more than the workspace
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { name: 'Research', monthlyLimit: 1, alertThreshold: 80, scope: 'PROJECT', connectionId, projectId: workspace.id } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.spend.monthToDate).toBeCloseTo(spend, 5);
    expect(created.body.forecast.monthEnd).toBeCloseTo(Math.max(spend, forecast), 2);
    await evaluateSpend(user.accountId, []);
    const [exceeded] = ((await api('/alerts?type=budget_exceeded', { token: user.token })).body.items as any[]).filter((a) => a.budgetId === created.body.id);
    expect(exceeded.message).toContain(`project "${workspace.name}"`);
    expect(exceeded.message).not.toContain('whole account');
    expect(exceeded.observedSpend).toBeCloseTo(spend, 2);
  });
});
