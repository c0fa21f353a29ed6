/**
 * The spend-anomaly rule (docs/features/budgets-and-alerts.md, "Runaway and leaked keys") on the local stack with the provider stand-ins:
 * a key with 14 days of steady spend that jumps 50× raises one `spend_anomaly` and, with `stop`, is switched off at
 * the Anthropic stand-in and stays so across syncs until released; a reporter key is refused by the reporter; a new
 * key past minUsdPerHour in its first hour is caught; a key growing slowly is not; an OpenAI key alerts with no lever
 * call; 20 concurrent ingests make one act and one alert; a budget and the rule holding one key release
 * independently; viewers can't release (403), other accounts get 404.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Scenarios of up to nine syncs each: 28 s alone, more on a loaded 2-core CI machine (one timed out at 30 s there).
vi.setConfig({ testTimeout: 90_000 });
import { syncConnection, type SyncResult } from '#shared/sync/all.ts';
import { ingest as ingestAt } from '#shared/ingest/service.ts';
import { getConnection } from '#shared/db/connections.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys as dbKeys } from '#shared/db/keys.ts';
import { syncIntervalMs } from '#shared/connections/sync.ts';
import { createReporter } from '../../reporter/src/index.ts';
import { OPENAI_KEY, startInferenceStandin, type Standin } from '../../reporter/test/inference-standin.ts';
import { api, clearOfUtcMidnight, DATED_FILE_MS, markEmailVerified, pointAtStack, registerUser, setPlan, stack, uniqueEmail, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, type StandInOrg } from './standins.ts';
import { linkInMail, mailTo } from './outbox.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const DAY = 86_400_000;
let restore: () => void;
const orgs: StandInOrg[] = [];
let inference: Standin;

beforeAll(async () => {
  await clearOfUtcMidnight(DATED_FILE_MS);
  // The syncs here schedule their next one an hour out (not 5 minutes): the stack's dispatcher leaves them alone.
  process.env.ANOMALY_SYNC_INTERVAL_MS = String(3_600_000);
  restore = pointAtStack({
    CONNECTIONS_LOCAL_KEY: (await readFile(stack().connectionsKeyFile, 'utf8')).trim(),
    OPENAI_ADMIN_URL: stack().openaiAdmin.url,
    ANTHROPIC_ADMIN_URL: stack().anthropicAdmin.url,
    OPENROUTER_URL: stack().openrouter.url,
  });
  inference = await startInferenceStandin();
});
afterAll(async () => {
  await Promise.all(orgs.map((o) => o.remove()));
  await inference?.close();
  restore?.();
});

/** One sync at `now`, asked again every 25 ms (for up to 30 s) while another holds the lease. */
async function sync(accountId: string, connectionId: string, now: Date): Promise<SyncResult> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    // A lease of an hour: the syncs here run minutes behind the real clock, and the stack's own worker (a sync queued
    // by a release, at the real time) must wait for them, not take over a lease that looks expired.
    const result = await syncConnection(accountId, connectionId, { budgetMs: 600_000, http: { backoffMs: 20 }, now, leaseMs: 3_600_000 });
    if (result.status !== 'busy') return result;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the lease was never free');
}

async function joinAs(admin: RegisteredUser, role: 'viewer' | 'member') {
  const email = uniqueEmail(role);
  expect((await api('/invitations', { method: 'POST', token: admin.token, body: { email, role } })).status).toBe(201);
  const { token } = await linkInMail(email, '/accept-invitation');
  const accepted = await api('/auth/accept-invitation', { method: 'POST', body: { token, password: 'Corr3ct-Horse', firstName: 'Grace', lastName: 'Hopper' } });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
  return { token: accepted.body.token as string, userId: accepted.body.userId as string };
}

const rule = (user: RegisteredUser, config: Record<string, unknown>, name = 'Runaway keys') =>
  api('/alert-rules', { method: 'POST', token: user.token, body: { type: 'spend_anomaly', name, channels: ['email'], config } });
const anomalies = async (user: RegisteredUser) => (await api('/alerts?type=spend_anomaly', { token: user.token })).body.items as any[];
const ruleActions = async (user: RegisteredUser) => ((await api('/enforcement-actions', { token: user.token })).body.items as any[]).filter((a) => a.holder?.kind === 'anomaly');

interface Reporting {
  user: RegisteredUser;
  ingestKey: string;
  ingest(hash: string, costUsd: number, at?: Date): Promise<void>;
  blocks(): Promise<any[]>;
}

async function reporting(): Promise<Reporting> {
  const user = await registerUser();
  const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'proxy' } })).body.key as string;
  return {
    user,
    ingestKey,
    async ingest(hash, costUsd, at = new Date()) {
      const res = await api('/ingest', {
        method: 'POST',
        headers: { 'x-api-key': ingestKey },
        body: { events: [{ requestId: `r-${Math.random()}`, keyHash: hash, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd, timestamp: at.toISOString() }] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.accepted).toBe(1);
    },
    blocks: async () => (await api('/ingest/blocks', { headers: { 'x-api-key': ingestKey } })).body.blocked as any[],
  };
}

/**
 * 14 days of steady spend: `perDay` dollars a day (one event at noon UTC of each of the 14 days before today), sent
 * now through the API, or (`sentAt`) by ingestion in this process at that time (a key last seen then).
 */
async function history(r: Reporting, hash: string, perDay: (daysAgo: number) => number, sentAt?: Date): Promise<void> {
  const midnight = Math.floor(Date.now() / DAY) * DAY;
  const events = Array.from({ length: 14 }, (_, i) => ({
    requestId: `h-${hash.slice(0, 8)}-${i}`,
    keyHash: hash,
    provider: 'openai',
    model: 'gpt-4o',
    inputTokens: 10,
    outputTokens: 10,
    costUsd: perDay(i + 1),
    timestamp: new Date(midnight - (i + 1) * DAY + 12 * 3_600_000).toISOString(),
  }));
  if (sentAt) {
    const res = await ingestAt(r.user.accountId, events, sentAt);
    expect(res.accepted, JSON.stringify(res)).toBe(14);
    return;
  }
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': r.ingestKey }, body: { events } });
  expect(res.body.accepted, JSON.stringify(res.body)).toBe(14);
}

describe('spend_anomaly rules are validated like the other rule types', () => {
  it('strict config, bounds, defaults; 400 problem+json naming the field', async () => {
    const user = await registerUser();
    const made = await rule(user, { minUsdPerHour: 20, action: 'stop' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ type: 'spend_anomaly', config: { minUsdPerHour: 20, multiplier: 10, action: 'stop' } });
    for (const [config, path] of [
      [{ minUsdPerHour: 0.5, action: 'stop' }, 'config.minUsdPerHour'],
      [{ minUsdPerHour: 5, multiplier: 1.5, action: 'stop' }, 'config.multiplier'],
      [{ minUsdPerHour: 5, action: 'pause' }, 'config.action'],
      [{ minUsdPerHour: 5 }, 'config.action'],
      [{ minUsdPerHour: 5, action: 'notify', threshold: 3 }, 'config'],
    ] as const) {
      const res = await rule(user, config);
      expect(res.status, JSON.stringify(config)).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(JSON.stringify(res.body.errors ?? res.body)).toContain(path);
    }
    const patched = await api(`/alert-rules/${made.body.id}`, { method: 'PATCH', token: user.token, body: { config: { minUsdPerHour: 5, multiplier: 1, action: 'stop' } } });
    expect(patched.status).toBe(400);
  });
});

describe('reporter keys', () => {
  it('a key with 14 days of steady spend that jumps 50×: one alert, blocked by the reporter until released; viewers 403, other accounts 404', async () => {
    const r = await reporting();
    const key = `${OPENAI_KEY.slice(0, -6)}an01xY`;
    const hash = sha256(key);
    await history(r, hash, () => 2.4); // $0.10 an hour
    expect((await rule(r.user, { minUsdPerHour: 1, multiplier: 10, action: 'stop' })).status).toBe(201);
    const reporter = createReporter({ ingestKey: r.ingestKey, baseUrl: stack().apiUrl, logger: { warn: () => undefined } });
    await reporter.refreshBlocks();
    const call = () =>
      reporter.fetch(`${inference.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
      });
    expect((await call()).status).toBe(200);

    // Normal spend for the hour: nothing.
    await r.ingest(hash, 0.1);
    expect(await anomalies(r.user)).toHaveLength(0);
    // 50× its usual rate.
    await r.ingest(hash, 5);
    const [alert, ...more] = await anomalies(r.user);
    expect(more).toHaveLength(0);
    expect(alert).toMatchObject({ type: 'spend_anomaly', keyHash: hash, observedSpend: expect.any(Number) });
    expect(alert.observedSpend).toBeGreaterThanOrEqual(5);
    expect(alert.message).toMatch(/\$5\.\d\d in the last hour/);
    expect(alert.message).toContain('$0.10 an hour');
    expect(alert.message).toMatch(/stopped it/);
    expect(alert.message).toContain(`/keys/${hash}/release`);
    const blocked = await r.blocks();
    expect(blocked).toMatchObject([{ keyHash: hash, budgetId: null, budgetName: 'Runaway keys', holder: { kind: 'anomaly', id: alert.ruleId } }]);
    expect(await ruleActions(r.user)).toMatchObject([{ kind: 'reporter_blocked', keyHash: hash, reason: 'anomaly', actor: 'burnrate', result: 'ok', budgetId: null, holder: { kind: 'anomaly', id: alert.ruleId }, holderName: 'Runaway keys' }]);
    // Right after the act (no sync in between), the Keys list and the key page say who stops it.
    const stoppedBy = [{ kind: 'anomaly', id: alert.ruleId, name: 'Runaway keys', lever: 'reporter', since: expect.any(String) }];
    expect((await api(`/keys/${hash}`, { token: r.user.token })).body.stoppedBy).toEqual(stoppedBy);
    expect(((await api('/keys', { token: r.user.token })).body.items as any[]).find((k) => k.hash === hash).stoppedBy).toEqual(stoppedBy);

    // The reporter refuses it within its refresh (read the list again).
    await reporter.refreshBlocks();
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-burnrate-rule-id')).toBe(alert.ruleId);
    expect(await refused.text()).toContain('suddenly spent far more than usual');

    // More spend the same day: still one alert, one act.
    await r.ingest(hash, 5);
    expect(await anomalies(r.user)).toHaveLength(1);
    expect(await ruleActions(r.user)).toHaveLength(1);
    const incident = await api(`/keys/${hash}/incident`, { token: r.user.token });
    expect(incident.status).toBe(200);
    expect(incident.body).toMatchObject({ keyHash: hash, stopped: true, baselineDays: 14, baselinePerHour: 0.1, holds: [{ ruleId: alert.ruleId, lever: 'reporter', status: 'stopped' }] });
    expect(incident.body.hours).toHaveLength(25);
    expect(incident.body.ratePerHour).toBeGreaterThanOrEqual(10);

    const viewer = await joinAs(r.user, 'viewer');
    expect((await api(`/keys/${hash}/release`, { method: 'POST', token: viewer.token })).status).toBe(403);
    const other = await registerUser();
    expect((await api(`/keys/${hash}/release`, { method: 'POST', token: other.token })).status).toBe(404);
    expect((await api(`/keys/${hash}/incident`, { token: other.token })).status).toBe(404);
    const member = await joinAs(r.user, 'member');
    const released = await api(`/keys/${hash}/release`, { method: 'POST', token: member.token });
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    expect(released.body).toMatchObject({ keyHash: hash, released: [{ ruleId: alert.ruleId, lever: 'reporter', status: 'released' }] });
    expect(await r.blocks()).toHaveLength(0);
    expect((await ruleActions(r.user))[0]).toMatchObject({ kind: 'reporter_unblocked', reason: 'released', actor: member.userId, holder: { kind: 'anomaly', id: alert.ruleId }, holderName: 'Runaway keys' });
    expect((await api(`/keys/${hash}`, { token: r.user.token })).body.stoppedBy).toEqual([]);
    const again = await api(`/keys/${hash}/release`, { method: 'POST', token: member.token });
    expect(again.status).toBe(409);
    expect(again.body.type ?? again.body.code).toContain('not-stopped');
    // Released by a person: not stopped again today.
    await r.ingest(hash, 5);
    expect(await r.blocks()).toHaveLength(0);
    expect(await anomalies(r.user)).toHaveLength(1);
    await reporter.close();
  });

  it('a key starting to spend $50 a minute (a call every 5 s) is on the block list by the ingest that takes its last hour past $20', async () => {
    const r = await reporting();
    const hash = sha256('fifty-a-minute');
    await history(r, hash, () => 12); // $0.50 an hour
    expect((await rule(r.user, { minUsdPerHour: 20, action: 'stop' })).status).toBe(201);
    let calls = 0;
    while (!(await r.blocks()).some((b) => b.keyHash === hash) && calls < 10) {
      calls += 1;
      await r.ingest(hash, 4.166667);
    }
    expect(calls).toBe(5); // $20.83 in its last hour
  });

  it('a new key spending past minUsdPerHour in its first hour is caught (baseline 0)', async () => {
    const r = await reporting();
    await markEmailVerified(r.user.accountId, r.user.userId);
    const hash = sha256('new-key-first-hour');
    expect((await rule(r.user, { minUsdPerHour: 2, action: 'notify' })).status).toBe(201);
    await r.ingest(hash, 0.5);
    await r.ingest(hash, 0.5);
    expect(await anomalies(r.user)).toHaveLength(0); // $1 in its first hour: under $2
    await r.ingest(hash, 1.5);
    const [alert] = await anomalies(r.user);
    expect(alert).toMatchObject({ keyHash: hash });
    expect(alert.message).toMatch(/new/i);
    expect(alert.message).toMatch(/only notifies/);
    expect(await r.blocks()).toHaveLength(0);
    // To the rule's channel: the e-mail arrives, naming the alert.
    let mail: Awaited<ReturnType<typeof mailTo>>[number] | undefined;
    for (let i = 0; i < 100 && !mail; i++) {
      mail = (await mailTo(r.user.email)).find((m) => m.text.includes(`X-Burnrate-Alert-Id: ${alert.id}`));
      if (!mail) await new Promise((res) => setTimeout(res, 200));
    }
    expect(mail?.subject).toMatch(/^\[Burnrate\] Spend anomaly: Runaway keys: key /);
  });

  it('a key last seen yesterday: today’s first ingest only starts its rate, the second compares it', async () => {
    const r = await reporting();
    const hash = sha256('seen-yesterday');
    await history(r, hash, () => 2.4, new Date(Math.floor(Date.now() / DAY) * DAY - 3_600_000)); // sent yesterday at 23:00
    expect((await rule(r.user, { minUsdPerHour: 1, action: 'stop' })).status).toBe(201);
    await r.ingest(hash, 5); // 50× its usual hour, in the day's first ingest that sees it
    expect(await anomalies(r.user)).toHaveLength(0);
    expect(await r.blocks()).toHaveLength(0);
    await r.ingest(hash, 0.01); // the second: its last hour is $5.01
    expect(await anomalies(r.user)).toHaveLength(1);
    expect(await r.blocks()).toMatchObject([{ keyHash: hash }]);
  });

  it('events count in the hour of their own time: a backlog sent late is not a spike', async () => {
    const r = await reporting();
    const hash = sha256('late-backlog');
    await history(r, hash, () => 2.4); // $0.10 an hour
    expect((await rule(r.user, { minUsdPerHour: 1, action: 'stop' })).status).toBe(201);
    // $40 of calls made three to six hours ago, sent now (a reporter that was offline), in two batches.
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
    for (const h of [6, 5, 4, 3]) await r.ingest(hash, 10, hoursAgo(h));
    expect(await anomalies(r.user)).toHaveLength(0);
    expect(await r.blocks()).toHaveLength(0);
    expect((await api(`/keys/${hash}/incident`, { token: r.user.token })).body.ratePerHour).toBe(0);
  });

  it('a key whose spend grows slowly into its budget raises nothing', async () => {
    const r = await reporting();
    const hash = sha256('slow-growth');
    // $24 a day two weeks ago growing to $50 yesterday; today's last hour $3 (about 1.6× its usual hour).
    await history(r, hash, (daysAgo) => 50 - daysAgo * 2);
    expect((await rule(r.user, { minUsdPerHour: 1, action: 'stop' })).status).toBe(201);
    const budget = await api('/budgets', { method: 'POST', token: r.user.token, body: { monthlyLimit: 2000, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    expect(budget.status, JSON.stringify(budget.body)).toBe(201);
    await r.ingest(hash, 1.5);
    await r.ingest(hash, 1.5);
    expect(await anomalies(r.user)).toHaveLength(0);
    expect(await r.blocks()).toHaveLength(0);
  });

  it('20 concurrent ingests of a runaway key: one act, one alert', async () => {
    const r = await reporting();
    const hash = sha256('runaway-concurrent');
    await history(r, hash, () => 2.4);
    expect((await rule(r.user, { minUsdPerHour: 1, action: 'stop' })).status).toBe(201);
    await Promise.all(Array.from({ length: 20 }, () => r.ingest(hash, 2)));
    expect(await anomalies(r.user)).toHaveLength(1);
    expect(await ruleActions(r.user)).toHaveLength(1);
    expect(await r.blocks()).toHaveLength(1);
  });

  it('a budget and the rule holding one key release independently, in either order', async () => {
    const r = await reporting();
    expect((await rule(r.user, { minUsdPerHour: 1, action: 'stop' })).status).toBe(201);
    for (const order of ['rule first', 'budget first'] as const) {
      const hash = sha256(`both-${order}`);
      await history(r, hash, () => 2.4);
      const spent = (await api(`/keys/${hash}`, { token: r.user.token })).body.spend.monthToDate as number;
      const budget = await api('/budgets', { method: 'POST', token: r.user.token, body: { monthlyLimit: Math.floor(spent) + 3, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
      expect(budget.status, JSON.stringify(budget.body)).toBe(201);
      await r.ingest(hash, 5); // past the budget and 50× its usual rate
      const blocked = async () => (await r.blocks()).some((b) => b.keyHash === hash);
      // Who holds the key: the rule (its incident) and the budget (its enforcement status).
      const holders = async () => {
        const incident = (await api(`/keys/${hash}/incident`, { token: r.user.token })).body;
        const b = ((await api('/budgets', { token: r.user.token })).body.items as any[]).find((x) => x.id === budget.body.id);
        return [...(incident.stopped ? ['anomaly'] : []), ...(b.enforcement.status === 'stopped' ? ['budget'] : [])];
      };
      expect(await holders()).toEqual(['anomaly', 'budget']);
      expect(await blocked()).toBe(true);
      const releaseRule = () => api(`/keys/${hash}/release`, { method: 'POST', token: r.user.token });
      const releaseBudget = () => api(`/budgets/${budget.body.id}/release`, { method: 'POST', token: r.user.token });
      if (order === 'rule first') {
        expect((await releaseRule()).status).toBe(200);
        expect(await holders()).toEqual(['budget']);
        expect(await blocked()).toBe(true);
        expect((await releaseBudget()).status).toBe(200);
      } else {
        expect((await releaseBudget()).status).toBe(200);
        expect(await holders()).toEqual(['anomaly']);
        expect(await blocked()).toBe(true);
        expect((await releaseRule()).status).toBe(200);
      }
      expect(await holders()).toEqual([]);
      expect(await blocked()).toBe(false);
    }
  });
});

describe('connection keys', () => {
  // The syncs run at this clock and each minute after, up to ten minutes: behind the real one (the stack's own worker,
  // running a sync queued by a release at the real time, never goes back in time), and on today's date.
  const T0 = new Date(Math.max(Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000, Math.floor(Date.now() / DAY) * DAY));
  const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

  async function connected(user: RegisteredUser, provider: 'anthropic' | 'openai' | 'openrouter', before?: (org: StandInOrg) => Promise<void>) {
    // Fifteen days of seeded usage: the 14 complete days a key's baseline is taken over, and today (the seed's older
    // usage would change no baseline, and a first sync imports just these days).
    const org = await newStandInOrg(provider, { now: T0.toISOString(), late: null, historyDays: 15 });
    orgs.push(org);
    await before?.(org);
    const res = await api('/connections', { method: 'POST', token: user.token, body: { provider, adminKey: org.adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await api(`/connections/${res.body.id}`, { method: 'PATCH', token: user.token, body: { enforcement: 'on' } })).status).toBe(200);
    await sync(user.accountId, res.body.id, T0);
    // A second sync a minute later: the keys' rates exist from here on.
    await clock(org, at(1));
    await sync(user.accountId, res.body.id, at(1));
    return { org, connectionId: res.body.id as string };
  }
  const clock = (org: StandInOrg, t: Date) => org.control('/clock', { now: t.toISOString() });

  it('Anthropic: a key jumping 50× is set inactive by the sync that sees it, stays so across syncs until released; a budget holding it too keeps it off', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
    const hash = keyHash('anthropic', keyId);
    const status = async () => ((await org.state()).keys as any[]).find((k) => k.id === keyId)!.status as string;
    expect((await rule(user, { minUsdPerHour: 5, multiplier: 10, action: 'stop' })).status).toBe(201);
    // A second sync with its usual growth: its rate exists now, and is usual.
    await clock(org, at(1));
    await sync(user.accountId, connectionId, at(1));
    expect(await anomalies(user)).toHaveLength(0);
    const usual = (await api(`/keys/${hash}/incident`, { token: user.token })).body.baselinePerHour as number;
    expect(usual).toBeGreaterThan(0);
    // 50× its usual hour of Claude Sonnet output ($15 / 1M tokens) within a minute.
    await clock(org, at(2));
    await org.control('/usage', { apiKeyId: keyId, model: 'claude-sonnet-4-5-20250929', add: { output: Math.ceil(((Math.max(usual * 50, 6) / 15) * 1e6)) } });
    await clock(org, at(3));
    await sync(user.accountId, connectionId, at(3));
    expect(await status()).toBe('inactive');
    const [alert, ...more] = await anomalies(user);
    expect(more).toHaveLength(0);
    expect(alert).toMatchObject({ keyHash: hash });
    expect(alert.message).toContain('prod-api');
    expect(alert.message).toMatch(/set inactive at Anthropic/);
    expect(await ruleActions(user)).toMatchObject([{ kind: 'key_deactivated', provider: 'anthropic', keyHash: hash, reason: 'anomaly', result: 'ok', holder: { kind: 'anomaly', id: alert.ruleId }, holderName: 'Runaway keys', targetName: 'prod-api' }]);
    const stoppedBy = [{ kind: 'anomaly', id: alert.ruleId, name: 'Runaway keys', lever: 'anthropic_key', since: at(3).toISOString() }];
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toEqual(stoppedBy);
    expect(((await api('/keys?source=connection', { token: user.token })).body.items as any[]).find((k) => k.hash === hash).stoppedBy).toEqual(stoppedBy);
    // A stopping rule: the connection syncs again after ANOMALY_SYNC_INTERVAL_MS (an hour in this file), not the usual interval.
    expect((await getConnection(user.accountId, connectionId))!.nextSyncAt).toBe(new Date(at(3).getTime() + 3_600_000).toISOString());
    // Stays so across syncs (a budget's decision never undoes it).
    for (const m of [4, 5]) {
      await clock(org, at(m));
      await sync(user.accountId, connectionId, at(m));
      expect(await status()).toBe('inactive');
    }
    expect(await anomalies(user)).toHaveLength(1);
    const viewer = await joinAs(user, 'viewer');
    expect((await api(`/keys/${hash}/release`, { method: 'POST', token: viewer.token })).status).toBe(403);
    // A stop budget past its limit holds the key too: releasing the rule leaves it off.
    const spent = (await api(`/keys/${hash}`, { token: user.token })).body.spend.monthToDate as number;
    const budget = await api('/budgets', { method: 'POST', token: user.token, body: { monthlyLimit: Math.max(1, Math.floor(spent) - 1), alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    expect(budget.status, JSON.stringify(budget.body)).toBe(201);
    await sync(user.accountId, connectionId, at(6));
    const released = await api(`/keys/${hash}/release`, { method: 'POST', token: user.token });
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    expect(released.body.released).toMatchObject([{ lever: 'key', status: 'held_by_budget' }]);
    await sync(user.accountId, connectionId, at(7));
    expect(await status()).toBe('inactive');
    // The budget's release: on again.
    expect((await api(`/budgets/${budget.body.id}/release`, { method: 'POST', token: user.token })).status).toBe(200);
    await sync(user.accountId, connectionId, at(8));
    expect(await status()).toBe('active');
  });

  it('Anthropic: released by a person, the key is switched on by the next sync and not stopped again that day', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'anthropic');
    const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
    const hash = keyHash('anthropic', keyId);
    const status = async () => ((await org.state()).keys as any[]).find((k) => k.id === keyId)!.status as string;
    expect((await rule(user, { minUsdPerHour: 5, action: 'stop' })).status).toBe(201);
    const usual = (await api(`/keys/${hash}/incident`, { token: user.token })).body.baselinePerHour as number;
    const runaway = { apiKeyId: keyId, model: 'claude-sonnet-4-5-20250929', add: { output: Math.ceil((Math.max(usual * 50, 6) / 15) * 1e6) } };
    await clock(org, at(2));
    await org.control('/usage', runaway);
    await clock(org, at(4));
    await sync(user.accountId, connectionId, at(4));
    expect(await status()).toBe('inactive');
    const member = await joinAs(user, 'member');
    const released = await api(`/keys/${hash}/release`, { method: 'POST', token: member.token });
    expect(released.status).toBe(200);
    expect(released.body.released).toMatchObject([{ lever: 'key', status: 'releasing' }]);
    await clock(org, at(5));
    await sync(user.accountId, connectionId, at(5));
    expect(await status()).toBe('active');
    expect((await ruleActions(user))[0]).toMatchObject({ kind: 'key_reactivated', reason: 'released', actor: member.userId, result: 'ok' });
    await org.control('/usage', runaway);
    await clock(org, at(6));
    await sync(user.accountId, connectionId, at(6));
    expect(await status()).toBe('active');
    expect(await anomalies(user)).toHaveLength(1);
    expect((await api(`/keys/${hash}/release`, { method: 'POST', token: member.token })).status).toBe(409);
  });

  it('Anthropic: a key idle today is first seen by a sync, which only starts its rate; the next sync sees the rate and stops it', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    let keyId = '';
    const { org, connectionId } = await connected(user, 'anthropic', async (o) => {
      // A key that spent yesterday and nothing today so far.
      keyId = ((await o.control('/keys', { name: 'night-batch' })) as any).id as string;
      await o.control('/usage', { apiKeyId: keyId, model: 'claude-sonnet-4-5-20250929', at: new Date(Math.floor(T0.getTime() / DAY) * DAY - DAY / 2).toISOString(), add: { output: 20_000 } });
    });
    const hash = keyHash('anthropic', keyId);
    const status = async () => ((await org.state()).keys as any[]).find((k) => k.id === keyId)!.status as string;
    expect((await api(`/keys/${hash}`, { token: user.token })).body.spend.today).toBe(0);
    // Burnrate found the key yesterday (here, the stack's own first sync of the connection ran at the real clock,
    // after this file's syncs).
    await db().send(new UpdateCommand({ TableName: tableName(), Key: dbKeys.providerKey(user.accountId, hash), UpdateExpression: 'SET firstSeenAt = :t', ExpressionAttributeValues: { ':t': new Date(T0.getTime() - DAY).toISOString() } }));
    expect((await rule(user, { minUsdPerHour: 5, action: 'stop' })).status).toBe(201);
    const runaway = { apiKeyId: keyId, model: 'claude-sonnet-4-5-20250929', add: { output: 1_000_000 } }; // $15
    await clock(org, at(2));
    await org.control('/usage', runaway);
    await clock(org, at(3));
    await sync(user.accountId, connectionId, at(3)); // the first sync that sees it today
    expect(await anomalies(user)).toHaveLength(0);
    expect(await status()).toBe('active');
    await org.control('/usage', runaway);
    await clock(org, at(4));
    await sync(user.accountId, connectionId, at(4));
    expect(await status()).toBe('inactive');
    expect(await anomalies(user)).toMatchObject([{ keyHash: hash }]);
  });

  it('OpenRouter: a runaway key is disabled by the sync that sees it and the key page says so', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'openrouter');
    const prod = ((await org.state()).keys as any[]).find((k) => k.name === 'Production')!;
    const hash = keyHash('openrouter', prod.id);
    expect((await rule(user, { minUsdPerHour: 20, action: 'stop' })).status).toBe(201);
    await clock(org, at(2));
    await org.control('/usage', { apiKeyId: prod.id, model: 'openai/gpt-4.1', tier: 'OpenAI', add: { cost: 100_000_000, requests: 50, prompt: 10, completion: 10 } }); // $100
    await clock(org, at(3));
    await sync(user.accountId, connectionId, at(3));
    expect((await org.get(`/api/v1/keys/${prod.id}`)).body.data).toMatchObject({ disabled: true });
    const [alert] = await anomalies(user);
    expect(alert).toMatchObject({ keyHash: hash });
    expect(alert.message).toMatch(/disabled at OpenRouter/);
    expect(await ruleActions(user)).toMatchObject([{ kind: 'key_disabled', provider: 'openrouter', keyHash: hash, reason: 'anomaly', result: 'ok', holder: { kind: 'anomaly', id: alert.ruleId }, holderName: 'Runaway keys', targetName: 'Production' }]);
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toEqual([{ kind: 'anomaly', id: alert.ruleId, name: 'Runaway keys', lever: 'openrouter_key', since: at(3).toISOString() }]);
    expect((await api(`/keys/${hash}/release`, { method: 'POST', token: user.token })).body.released).toMatchObject([{ lever: 'key', status: 'releasing' }]);
    await clock(org, at(4));
    await sync(user.accountId, connectionId, at(4));
    expect((await org.get(`/api/v1/keys/${prod.id}`)).body.data).toMatchObject({ disabled: false });
  });

  it('OpenAI: an anomaly alerts, saying OpenAI can’t pause a key, and calls no lever', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const { org, connectionId } = await connected(user, 'openai');
    const keyId = ((await org.state()).keys as any[]).find((k) => k.status === 'active' && k.projectId)!.id as string;
    const hash = keyHash('openai', keyId);
    expect((await rule(user, { minUsdPerHour: 5, action: 'stop' })).status).toBe(201);
    await clock(org, at(2));
    await org.control('/usage', { apiKeyId: keyId, model: 'gpt-4o-2024-08-06', add: { uncached: 0, output: 5_000_000, requests: 10 } }); // $50
    await org.control('/requests', undefined, 'DELETE');
    await clock(org, at(3));
    await sync(user.accountId, connectionId, at(3));
    const [alert, ...more] = await anomalies(user);
    expect(more).toHaveLength(0);
    expect(alert).toMatchObject({ keyHash: hash });
    expect(alert.message).toMatch(/OpenAI can't pause a single API key/);
    expect(await ruleActions(user)).toHaveLength(0);
    const requests = JSON.stringify(await org.control('/requests'));
    expect(requests).not.toMatch(/api_keys\/|spend_limit/);
    expect((await api(`/keys/${hash}/release`, { method: 'POST', token: user.token })).status).toBe(409);
  });
});
