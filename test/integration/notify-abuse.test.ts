/**
 * Notifications that can't be turned into spam, against the real local stack (docs/security.md,
 * "Abuse limits"). The review's scenario: 20 `new_key` rules named like a phishing Subject and one ingest of 5 new
 * keys once sent 100 e-mails to an address nobody had verified. Now: one alert per rule per ingest, no alert e-mail
 * before the address is verified, after it at most 30 an hour and one "paused" notice; a webhook URL gets at most
 * 60 deliveries an hour, the rest are `suppressed`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, AlertType } from '#shared/alerting/model.ts';
import { keys } from '#shared/db/keys.ts';
import { newId } from '#shared/ids.ts';
import { EMAIL_CAP_PER_HOUR, hourWindow, takeSlot, URL_CAP_PER_HOUR } from '#shared/notify/caps.ts';
import { deliverAlert } from '#shared/notify/deliver.ts';
import { SUBJECT_MAX } from '#shared/notify/subject.ts';
import { api, type ApiResponse, dynamo, markEmailVerified, pointAtStack, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';
import { mailTo, type Mail } from './outbox.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newKeyHash = () => sha256(`sk-test-${randomUUID()}`);
const PHISHING = 'URGENT: your account is suspended - confirm your password at https://evil.example/login';

interface Tenant {
  user: RegisteredUser;
  ingestKey: string;
}

async function tenant(plan: 'FREE' | 'GROWTH' = 'FREE'): Promise<Tenant> {
  const user = await registerUser();
  if (plan !== 'FREE') await setPlan(user.accountId, plan);
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: {} });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { user, ingestKey: res.body.key };
}

async function ingestNewKeys(t: Tenant, count: number): Promise<string[]> {
  const hashes = Array.from({ length: count }, newKeyHash);
  const events = hashes.map((keyHash, i) => ({
    requestId: randomUUID(),
    keyHash,
    keyHint: `sk-…${i}`,
    provider: 'openai',
    model: 'gpt-4o',
    inputTokens: 1,
    outputTokens: 1,
    costUsd: 0.001,
  }));
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, body: { events } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.accepted).toBe(count);
  return hashes;
}

async function createRule(t: Tenant, body: Record<string, unknown>) {
  const res = await api('/alert-rules', { method: 'POST', token: t.user.token, body: { type: 'new_key', config: {}, isActive: true, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

type Listed = { id: string; type: string; ruleId: string; keyHash: string; keyHashes: string[]; deliveries: { channel: string; status: string; attempts: number }[] };

/** Every alert of the account, once there are `count` of them and none has a delivery still pending. */
async function settledAlerts(t: Tenant, count: number, timeoutMs = 60_000): Promise<Listed[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items: Listed[] = [];
    let cursor: string | null = null;
    do {
      const res: ApiResponse = await api(`/alerts?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: t.user.token });
      expect(res.status).toBe(200);
      items.push(...(res.body.items as Listed[]));
      cursor = res.body.nextCursor;
    } while (cursor);
    if (items.length === count && items.every((a) => a.deliveries.every((d) => d.status !== 'pending'))) return items;
    if (items.length > count) return items; // more than expected: let the test's assertion say so
    if (Date.now() > deadline) throw new Error(`timed out: ${items.length} alerts, ${JSON.stringify(items.map((a) => a.deliveries))}`);
    await sleep(200);
  }
}

const isAlertMail = (m: Mail) => /^X-Burnrate-Alert-Id: /m.test(m.text);
const isPausedNotice = (m: Mail) => m.subject.startsWith('[Burnrate] Alert e-mail paused until ');

/** RFC 2047 encoded-words decoded (the Subject of a non-ASCII alert). */
const decodeHeader = (value: string) =>
  value.replace(/\?=\s+=\?/g, '?==?').replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));

/**
 * The caps count per UTC clock hour: a scenario that must land in ONE window waits out the last `marginMs` of an
 * hour (at most that long) instead of straddling two windows.
 */
async function awayFromHourEnd(marginMs = 90_000): Promise<void> {
  const left = hourWindow(new Date()).endsAt.getTime() - Date.now();
  if (left < marginMs) await sleep(left + 1_000);
}

describe('the phishing scenario on the local stack', () => {
  it('20 phishing-named new_key rules × 5 new keys: 20 alerts; 0 e-mails unverified; verified: ≤ 30 an hour and one notice', async () => {
    await awayFromHourEnd();
    const t = await tenant('GROWTH'); // 15 keys: past FREE's 5
    const rules = [];
    for (let i = 0; i < 20; i++) rules.push(await createRule(t, { name: `${PHISHING} (${i})`, channels: ['email'] }));

    // One ingest discovering 5 keys: one alert per rule, listing all 5.
    const first = await ingestNewKeys(t, 5);
    let listed = await settledAlerts(t, 20);
    expect(listed).toHaveLength(20);
    expect(new Set(listed.map((a) => a.ruleId))).toEqual(new Set(rules.map((r) => r.id)));
    for (const a of listed) {
      expect(a.type).toBe('new_key');
      expect([...a.keyHashes].sort()).toEqual([...first].sort());
      expect(a.keyHash).toBe(a.keyHashes[0]);
      // The registrant never proved the address: nobody may be mailed, settled at once, no retries.
      expect(a.deliveries).toEqual([{ channel: 'email', status: 'suppressed', attempts: 1 }]);
    }
    expect((await mailTo(t.user.email)).filter(isAlertMail)).toHaveLength(0);

    // Verified: the next 40 alerts of this hour mail at most 30, and the first one held back sends ONE notice.
    await markEmailVerified(t.user.accountId, t.user.userId);
    await ingestNewKeys(t, 5);
    await settledAlerts(t, 40);
    await ingestNewKeys(t, 5);
    listed = await settledAlerts(t, 60);
    expect(listed).toHaveLength(60); // every alert stays listed, suppressed or not
    const later = listed.slice(0, 40).map((a) => a.deliveries[0]!.status);
    expect(later.filter((s) => s === 'sent')).toHaveLength(EMAIL_CAP_PER_HOUR);
    expect(later.filter((s) => s === 'suppressed')).toHaveLength(40 - EMAIL_CAP_PER_HOUR);

    const mails = await mailTo(t.user.email);
    const alertMails = mails.filter(isAlertMail);
    expect(alertMails).toHaveLength(EMAIL_CAP_PER_HOUR);
    for (const m of alertMails) {
      const subject = decodeHeader(m.subject);
      expect(subject.startsWith('[Burnrate] New key: URGENT')).toBe(true);
      expect([...subject].length).toBeLessThanOrEqual(SUBJECT_MAX);
    }
    const notices = mails.filter(isPausedNotice);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.subject).toMatch(/^\[Burnrate\] Alert e-mail paused until \d\d:00 UTC$/);
    expect(notices[0]!.text).toContain('Burnrate has sent 30 alert e-mails');
    expect(notices[0]!.text).not.toContain('evil.example');
  }, 240_000);
});

/** A loopback receiver answering `status` to every POST, recording the paths it got. */
async function receiver(status: number): Promise<{ server: Server; base: string; posts: string[] }> {
  const posts: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts.push(req.url ?? '/');
      res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts };
}

/** Every alert of the account once each delivery is final (sent, suppressed or failed: no retry left). */
async function finalAlerts(t: Tenant, count: number, timeoutMs = 120_000): Promise<Listed[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api('/alerts?limit=100', { token: t.user.token });
    expect(res.status).toBe(200);
    const items = res.body.items as Listed[];
    if (items.length >= count && items.every((a) => a.deliveries.every((d) => ['sent', 'suppressed', 'failed'].includes(d.status)))) return items;
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(items.map((a) => a.deliveries))}`);
    await sleep(250);
  }
}

describe('the per-URL cap on the local stack', () => {
  let server: Server;
  let base: string;
  let posts: string[];

  beforeAll(async () => {
    ({ server, base, posts } = await receiver(204));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('counts per receiver: ?N, #N, //, an upper-case scheme and dot segments reach the same cap', async () => {
    await awayFromHourEnd();
    const own = await receiver(204);
    try {
      const t = await tenant();
      const port = new URL(own.base).port;
      const variants = (i: number) => [
        `${own.base}/hook?${i}`,
        `${own.base}/hook#${i}`,
        `${own.base}//hook`,
        `HTTP://127.0.0.1:${port}/hook`,
        `${own.base}/x/../hook?n=${i}`,
        `${own.base}/hook`,
      ];
      for (let i = 0; i < 31; i++) await createRule(t, { name: `Hook ${i}`, channels: ['webhook'], config: { webhookUrl: variants(i)[i % 6] } });
      await ingestNewKeys(t, 1);
      await settledAlerts(t, 31);
      await ingestNewKeys(t, 1);
      const statuses = (await settledAlerts(t, 62)).map((a) => a.deliveries[0]!.status);
      expect(statuses.filter((s) => s === 'sent')).toHaveLength(URL_CAP_PER_HOUR);
      expect(statuses.filter((s) => s === 'suppressed')).toHaveLength(2);
      expect(own.posts).toHaveLength(URL_CAP_PER_HOUR);
    } finally {
      await new Promise<void>((resolve) => own.server.close(() => resolve()));
    }
  }, 240_000);

  it('a failing receiver: every attempt counts, so it gets 60 POSTs an hour, not 5 per counted delivery', async () => {
    await awayFromHourEnd(120_000);
    const failing = await receiver(500);
    try {
      const t = await tenant();
      const path = `/down-${randomUUID()}`;
      for (let i = 0; i < 13; i++) await createRule(t, { name: `Down ${i}`, channels: ['webhook'], config: { webhookUrl: `${failing.base}${path}` } });
      await ingestNewKeys(t, 1);
      const listed = await finalAlerts(t, 13);
      // 13 deliveries × 5 attempts would be 65 POSTs: past the 60th, an attempt finds the cap and settles its delivery.
      expect(failing.posts).toHaveLength(URL_CAP_PER_HOUR);
      const deliveries = listed.map((a) => a.deliveries[0]!);
      const failed = deliveries.filter((d) => d.status === 'failed');
      const suppressed = deliveries.filter((d) => d.status === 'suppressed');
      expect(failed.length + suppressed.length).toBe(13);
      expect(suppressed.length).toBeGreaterThan(0);
      expect(failed.every((d) => d.attempts === 5)).toBe(true);
      // Every attempt but each suppressed delivery's last one was a POST.
      expect(deliveries.reduce((n, d) => n + d.attempts, 0) - suppressed.length).toBe(URL_CAP_PER_HOUR);
    } finally {
      await new Promise<void>((resolve) => failing.server.close(() => resolve()));
    }
  }, 240_000);

  it('a webhook URL gets 60 deliveries in an hour; the rest are suppressed and stay listed', async () => {
    await awayFromHourEnd();
    const t = await tenant();
    const path = `/hook-${randomUUID()}`;
    for (let i = 0; i < 31; i++) await createRule(t, { name: `Hook ${i}`, channels: ['webhook'], config: { webhookUrl: `${base}${path}` } });
    await ingestNewKeys(t, 1);
    await settledAlerts(t, 31);
    await ingestNewKeys(t, 1);
    const listed = await settledAlerts(t, 62);
    expect(listed).toHaveLength(62);
    const statuses = listed.map((a) => a.deliveries[0]!.status);
    expect(statuses.filter((s) => s === 'sent')).toHaveLength(URL_CAP_PER_HOUR);
    expect(statuses.filter((s) => s === 'suppressed')).toHaveLength(2);
    expect(posts.filter((p) => p === path)).toHaveLength(URL_CAP_PER_HOUR);
  }, 240_000);
});

describe('in this process, against the stack table', () => {
  let restore: () => void;
  let outbox: string;
  beforeAll(async () => {
    outbox = await mkdtemp(join(tmpdir(), 'burnrate-abuse-'));
    restore = pointAtStack({ OUTBOX_DIR: outbox, ALERT_EMAIL_FROM: 'alerts@burnrate.test', DASHBOARD_URL: 'https://app.burnrate.test' });
  });
  afterAll(async () => {
    restore();
    await rm(outbox, { recursive: true, force: true });
  });

  it('the counters are exact under concurrency: 100 at once → 30 allowed, one first refusal; URLs 60; a new hour starts afresh', async () => {
    const now = new Date();
    const address = `cap-${randomUUID()}@example.com`;
    const decisions = await Promise.all(Array.from({ length: 100 }, () => takeSlot('email', address, now)));
    expect(decisions.filter((d) => d === 'allowed')).toHaveLength(30);
    expect(decisions.filter((d) => d === 'first-suppressed')).toHaveLength(1);
    expect(decisions.filter((d) => d === 'suppressed')).toHaveLength(69);
    // The same address in other case is the same recipient.
    expect(await takeSlot('email', address.toUpperCase(), now)).toBe('suppressed');

    const url = `https://hooks.example.com/${randomUUID()}`;
    const urlDecisions = await Promise.all(Array.from({ length: 80 }, () => takeSlot('url', url, now)));
    expect(urlDecisions.filter((d) => d === 'allowed')).toHaveLength(60);
    // The same receiver spelt otherwise shares that full counter: query, fragment, //, case of scheme and host, :443.
    const { pathname } = new URL(url);
    for (const variant of [`${url}?1`, `${url}#2`, `https://hooks.example.com/${pathname}`, `HTTPS://HOOKS.EXAMPLE.COM${pathname}`, `https://hooks.example.com:443${pathname}`]) {
      expect(await takeSlot('url', variant, now), variant).toBe('suppressed');
    }

    const nextHour = new Date(hourWindow(now).endsAt.getTime() + 1);
    expect(await takeSlot('email', address, nextHour)).toBe('allowed');

    // One small item per target and hour, with a TTL an hour after its window.
    const w = hourWindow(now);
    const item = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.notifyCap('email', sha256(address), w.hour), ConsistentRead: true }));
    expect(item.Item).toMatchObject({ n: 31, expiresAt: w.expiresAt });
  });

  async function plant(accountId: string, type: AlertType): Promise<Alert> {
    const alert: Alert = {
      id: newId('alert'),
      accountId,
      type,
      status: 'triggered',
      ruleId: null,
      budgetId: type === 'plan_limit' ? null : newId('budget'),
      keyHash: null,
      keyHashes: [],
      title: type === 'plan_limit' ? 'Plan limit reached on FREE' : `Budget "${PHISHING}" exceeded: $12.00 of $10.00`,
      message: 'm',
      period: new Date().toISOString().slice(0, 7),
      thresholdMicros: 10_000_000,
      observedMicros: 12_000_000,
      deliveries: [{ channel: 'email', status: 'pending', attempts: 0 }],
      triggeredAt: new Date().toISOString(),
      acknowledgedAt: null,
      acknowledgedBy: null,
    };
    const { acknowledgedAt: _a, acknowledgedBy: _b, ...rest } = alert;
    await dynamo().send(
      new PutCommand({
        TableName: stack().tableName,
        Item: { ...keys.alert(accountId, alert.id), ...keys.alertIndex(accountId, alert.id, 'triggered'), entity: 'Alert', ...rest },
      }),
    );
    return alert;
  }

  const stored = async (a: Alert) =>
    (await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.alert(a.accountId, a.id), ConsistentRead: true }))).Item!.deliveries;
  const mailsOf = async (a: Alert) => (await readdir(outbox)).filter((n) => n.includes(a.id));

  it('budget and plan_limit alerts too: only verified users who want alert e-mail; nobody → suppressed at once', async () => {
    const owner = await registerUser();
    for (const type of ['budget_exceeded', 'plan_limit'] as const) {
      const unverified = await plant(owner.accountId, type);
      expect(await deliverAlert(owner.accountId, unverified.id)).toEqual({ done: true });
      expect(await stored(unverified)).toEqual([{ channel: 'email', status: 'suppressed', attempts: 1, suppressedBy: 'no-recipient' }]);
      expect(await mailsOf(unverified)).toEqual([]);
      // A second copy of the queue message changes nothing.
      expect(await deliverAlert(owner.accountId, unverified.id)).toEqual({ done: true });
      expect((await stored(unverified))[0].attempts).toBe(1);
    }

    // Verified but alert e-mail turned off: still nobody.
    await markEmailVerified(owner.accountId, owner.userId);
    await dynamo().send(
      new UpdateCommand({ TableName: stack().tableName, Key: keys.user(owner.accountId, owner.userId), UpdateExpression: 'SET alertEmails = :f', ExpressionAttributeValues: { ':f': false } }),
    );
    const optedOut = await plant(owner.accountId, 'budget_exceeded');
    await deliverAlert(owner.accountId, optedOut.id);
    expect((await stored(optedOut))[0]).toMatchObject({ status: 'suppressed' });
    expect(await mailsOf(optedOut)).toEqual([]);

    // Verified and wanting it: sent, with our prefix first.
    await dynamo().send(
      new UpdateCommand({ TableName: stack().tableName, Key: keys.user(owner.accountId, owner.userId), UpdateExpression: 'SET alertEmails = :t', ExpressionAttributeValues: { ':t': true } }),
    );
    for (const type of ['budget_exceeded', 'plan_limit'] as const) {
      const alert = await plant(owner.accountId, type);
      await deliverAlert(owner.accountId, alert.id);
      expect((await stored(alert))[0]).toMatchObject({ status: 'sent', attempts: 1 });
      const [name] = await mailsOf(alert);
      const text = await readFile(join(outbox, name!), 'utf8');
      expect(text).toMatch(type === 'plan_limit' ? /^Subject: \[Burnrate\] Plan limit: Plan limit reached on FREE\r$/m : /^Subject: \[Burnrate\] Budget exceeded: Budget "URGENT/m);
      expect(text).toContain(`To: ${owner.email.toLowerCase()}`);
    }

    // An unverified second user of the same account is never mailed.
    const secondId = newId('user');
    const secondEmail = `unverified-${randomUUID()}@example.com`;
    await dynamo().send(
      new PutCommand({
        TableName: stack().tableName,
        Item: { ...keys.user(owner.accountId, secondId), type: 'User', userId: secondId, accountId: owner.accountId, email: secondEmail, firstName: 'U', lastName: 'V', role: 'member', emailVerified: false, alertEmails: true, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() },
      }),
    );
    const alert = await plant(owner.accountId, 'budget_exceeded');
    await deliverAlert(owner.accountId, alert.id);
    const texts = await Promise.all((await mailsOf(alert)).map((n) => readFile(join(outbox, n), 'utf8')));
    expect(texts).toHaveLength(1);
    expect(texts.join('\n')).not.toContain(secondEmail);
  });
});
