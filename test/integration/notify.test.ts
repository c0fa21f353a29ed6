/**
 * Alert delivery against the real DynamoDB Local of the stack: `deliverAlert` runs in THIS process, pointed at the
 * stack's table, with e-mail going to a temp outbox and webhooks to a receiver on 127.0.0.1.
 */
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, Delivery } from '#shared/alerting/model.ts';
import { keys } from '#shared/db/keys.ts';
import { newId } from '#shared/ids.ts';
import { CLAIM_LEASE_MS, deliverAlert, MAX_ATTEMPTS } from '#shared/notify/deliver.ts';
import { verifyWebhookSignature } from '#shared/notify/webhook.ts';
import { signingSecrets } from '#shared/notify/webhook-secret.ts';
import { api, dynamo, markEmailVerified, pointAtStack, registerUser, stack, type RegisteredUser } from './harness.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let restoreEnv: () => void;

let outbox: string;
let server: Server;
let baseUrl: string;
const received: Received[] = [];
/** Status the receiver answers per path (default 200). */
const answers = new Map<string, number>();

let owner: RegisteredUser;
const secondEmail = `second-${Date.now().toString(36)}@example.com`;
let secret: string;

beforeAll(async () => {
  outbox = await mkdtemp(join(tmpdir(), 'burnrate-outbox-'));
  restoreEnv = pointAtStack({
    OUTBOX_DIR: outbox,
    ALLOW_INSECURE_WEBHOOKS: 'true',
    ALERT_EMAIL_FROM: 'alerts@burnrate.test',
    DASHBOARD_URL: 'https://app.burnrate.test',
  });

  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body });
      res.writeHead(answers.get(path) ?? 200, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  owner = await registerUser();
  await markEmailVerified(owner.accountId, owner.userId); // alert e-mail goes to verified addresses only
  // A second user of the same account (no invite API yet): planted directly.
  const userId = newId('user');
  await dynamo().send(
    new PutCommand({
      TableName: stack().tableName,
      Item: {
        ...keys.user(owner.accountId, userId),
        type: 'User',
        userId,
        accountId: owner.accountId,
        email: secondEmail,
        firstName: 'Grace',
        lastName: 'Hopper',
        role: 'member',
        emailVerified: true,
        alertEmails: true,
        createdAt: new Date().toISOString(),
        updatedAt: new Date().toISOString(),
      },
    }),
  );

  const res = await api('/webhook-secret', { token: owner.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  secret = res.body.secret;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  restoreEnv();
  if (outbox) await rm(outbox, { recursive: true, force: true });
});

/** A triggered alert with pending e-mail and webhook deliveries, written straight into the table. */
async function plantAlert(webhookPath: string, deliveries?: Delivery[]): Promise<Alert> {
  const alert: Alert = {
    id: newId('alert'),
    accountId: owner.accountId,
    type: 'cost_threshold',
    status: 'triggered',
    ruleId: newId('rule'),
    budgetId: null,
    keyHash: null,
    keyHashes: [],
    title: 'Daily cap: daily spend reached $25.00',
    message: 'Spend of the account on 2026-11-21 (UTC) is $31.415926, at or above the rule "Daily cap" threshold of $25.00.',
    period: '2026-11-21',
    thresholdMicros: 25_000_000,
    observedMicros: 31_415_926,
    deliveries: deliveries ?? [
      { channel: 'email', status: 'pending', attempts: 0 },
      { channel: 'webhook', status: 'pending', attempts: 0 },
    ],
    webhookUrl: `${baseUrl}${webhookPath}`,
    triggeredAt: new Date().toISOString(),
    acknowledgedAt: null,
    acknowledgedBy: null,
  };
  const { acknowledgedAt: _a, acknowledgedBy: _b, ...rest } = alert;
  await dynamo().send(
    new PutCommand({
      TableName: stack().tableName,
      Item: { ...keys.alert(alert.accountId, alert.id), ...keys.alertIndex(alert.accountId, alert.id, 'triggered'), entity: 'Alert', ...rest },
    }),
  );
  return alert;
}

async function storedDeliveries(alert: Alert): Promise<(Delivery & Record<string, unknown>)[]> {
  const res = await dynamo().send(new GetCommand({ TableName: stack().tableName, Key: keys.alert(alert.accountId, alert.id), ConsistentRead: true }));
  return res.Item?.deliveries as (Delivery & Record<string, unknown>)[];
}

async function emailsOf(alert: Alert): Promise<{ name: string; text: string }[]> {
  const names = (await readdir(outbox)).filter((n) => n.includes(alert.id)).sort();
  return Promise.all(names.map(async (name) => ({ name, text: await readFile(join(outbox, name), 'utf8') })));
}

const postsTo = (path: string) => received.filter((r) => r.path === path);

describe('GET /webhook-secret', () => {
  it('shows the account secret and how to verify with it, the same on every call', async () => {
    const res = await api('/webhook-secret', { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      header: 'burnrate-signature',
      algorithm: 'HMAC-SHA256',
      format: 't=<unix>,v1=<hex of HMAC(secret, "<t>.<body>")> (one v1 per live secret)',
      previousSecretExpiresAt: null,
    });
    expect(res.body.secret).toBe(secret);
  });

  it('differs between accounts, and needs a token', async () => {
    const other = await registerUser();
    const res = await api('/webhook-secret', { token: other.token });
    expect(res.status).toBe(200);
    expect(res.body.secret).not.toBe(secret);
    expect((await api('/webhook-secret')).status).toBe(401);
  });
});

describe('deliverAlert', () => {
  it('e-mails every user (one .eml each) and POSTs one signed webhook; both become sent with 1 attempt', async () => {
    const alert = await plantAlert('/ok-1');
    expect(await deliverAlert(owner.accountId, alert.id)).toEqual({ done: true });

    const emails = await emailsOf(alert);
    expect(emails).toHaveLength(2);
    for (const { name } of emails) expect(name).toMatch(new RegExp(`^\\d{8}T\\d{9}Z-${alert.id}-[12]\\.eml$`));
    const recipients = emails.map((e) => /^To: (.+)$/m.exec(e.text)?.[1]?.trim()).sort();
    expect(recipients).toEqual([owner.email.toLowerCase(), secondEmail].sort());
    for (const { text } of emails) {
      expect(text).toMatch(/^From: Burnrate Alerts <alerts@burnrate\.test>\r$/m);
      expect(text).toMatch(/^Subject: \[Burnrate\] Cost threshold: Daily cap: daily spend reached \$25\.00\r$/m);
      expect(text).toMatch(/^Message-ID: <.+@burnrate\.test>\r$/m);
      expect(text).toMatch(/Threshold:\s+\$25\.00\r\n/);
      expect(text).toMatch(/Observed spend:\s+\$31\.415926\r\n/);
      expect(text).toMatch(/Period:\s+2026-11-21\r\n/);
      expect(text).toContain(`https://app.burnrate.test/alerts/${alert.id}`);
    }
    // Written atomically: no temp files left behind.
    expect((await readdir(outbox)).filter((n) => !n.endsWith('.eml'))).toEqual([]);

    const posts = postsTo('/ok-1');
    expect(posts).toHaveLength(1);
    const [post] = posts as [Received];
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers['user-agent']).toBe('Burnrate-Webhooks/1');
    expect(post.headers['burnrate-delivery']).toBe(alert.id);
    expect(verifyWebhookSignature(secret, post.body, post.headers['burnrate-signature'] as string)).toBe(true);
    expect(verifyWebhookSignature('whsec_wrong', post.body, post.headers['burnrate-signature'] as string)).toBe(false);
    const payload = JSON.parse(post.body);
    expect(payload).toMatchObject({
      id: alert.id,
      type: 'alert.triggered',
      alert: { id: alert.id, type: 'cost_threshold', threshold: 25, observedSpend: 31.415926, period: '2026-11-21', status: 'triggered' },
    });
    expect(payload.alert.accountId).toBeUndefined();

    const deliveries = await storedDeliveries(alert);
    expect(deliveries).toEqual([
      { channel: 'email', status: 'sent', attempts: 1, sentAt: expect.any(String) },
      { channel: 'webhook', status: 'sent', attempts: 1, sentAt: expect.any(String) },
    ]);

    // The same queue message again: nothing more is sent.
    expect(await deliverAlert(owner.accountId, alert.id)).toEqual({ done: true });
    expect(await emailsOf(alert)).toHaveLength(2);
    expect(postsTo('/ok-1')).toHaveLength(1);
    expect((await storedDeliveries(alert)).map((d) => d.attempts)).toEqual([1, 1]);
  });

  it('sends each channel once when copies of the message are delivered concurrently', async () => {
    const alert = await plantAlert('/ok-concurrent');
    // Each copy may see a channel another copy is still sending and answer done=false (the queue retries it);
    // what matters is that every channel went out exactly once.
    await Promise.all([1, 2, 3, 4].map(() => deliverAlert(owner.accountId, alert.id)));
    expect(postsTo('/ok-concurrent')).toHaveLength(1);
    expect(await emailsOf(alert)).toHaveLength(2);
    const deliveries = await storedDeliveries(alert);
    expect(deliveries.map((d) => [d.channel, d.status, d.attempts])).toEqual([
      ['email', 'sent', 1],
      ['webhook', 'sent', 1],
    ]);
    // A late copy finds everything done.
    expect(await deliverAlert(owner.accountId, alert.id)).toEqual({ done: true });
    expect(postsTo('/ok-concurrent')).toHaveLength(1);
  });

  it('retries a failing webhook once per call and marks it failed after 5 attempts; e-mail is unaffected', async () => {
    answers.set('/fail', 500);
    const alert = await plantAlert('/fail');
    for (let call = 1; call <= MAX_ATTEMPTS; call++) {
      const result = await deliverAlert(owner.accountId, alert.id);
      const [email, webhook] = await storedDeliveries(alert);
      expect(email).toMatchObject({ status: 'sent', attempts: 1 });
      expect(webhook).toMatchObject({ attempts: call, lastError: 'HTTP 500', status: call < MAX_ATTEMPTS ? 'pending' : 'failed' });
      expect(webhook!.claimedAt).toBeUndefined();
      expect(result.done, `call ${call}`).toBe(call === MAX_ATTEMPTS);
      expect(postsTo('/fail')).toHaveLength(call);
    }
    expect(await emailsOf(alert)).toHaveLength(2);
    // Failed is final.
    expect(await deliverAlert(owner.accountId, alert.id)).toEqual({ done: true });
    expect(postsTo('/fail')).toHaveLength(MAX_ATTEMPTS);
    // The API shows the outcome.
    const view = await api('/alerts', { token: owner.token });
    expect(view.status).toBe(200);
    const listed = (view.body.items as { id: string; deliveries: unknown }[]).find((a) => a.id === alert.id);
    expect(listed?.deliveries).toEqual([
      { channel: 'email', status: 'sent', attempts: 1 },
      { channel: 'webhook', status: 'failed', attempts: 5 },
    ]);
  });

  it('leaves a live claim alone and takes over one whose lease expired', async () => {
    const now = new Date();
    const alert = await plantAlert('/lease', [
      { channel: 'webhook', status: 'sending', attempts: 1, claimedAt: new Date(now.getTime() - 10_000).toISOString() },
    ]);
    expect(await deliverAlert(owner.accountId, alert.id, now)).toEqual({ done: false });
    expect(postsTo('/lease')).toHaveLength(0);

    const later = new Date(now.getTime() + CLAIM_LEASE_MS);
    expect(await deliverAlert(owner.accountId, alert.id, later)).toEqual({ done: true });
    expect(postsTo('/lease')).toHaveLength(1);
    expect(await storedDeliveries(alert)).toEqual([{ channel: 'webhook', status: 'sent', attempts: 2, sentAt: later.toISOString() }]);
  });

  it('fails a webhook delivery for good when the alert has no usable URL', async () => {
    const alert = await plantAlert('/unused', [{ channel: 'webhook', status: 'pending', attempts: 0 }]);
    await dynamo().send(
      new UpdateCommand({ TableName: stack().tableName, Key: keys.alert(alert.accountId, alert.id), UpdateExpression: 'REMOVE webhookUrl' }),
    );
    expect(await deliverAlert(owner.accountId, alert.id)).toEqual({ done: true });
    expect(await storedDeliveries(alert)).toEqual([
      { channel: 'webhook', status: 'failed', attempts: 1, lastError: 'the alert has no webhook URL' },
    ]);
  });

  it('is done at once for an alert that does not exist', async () => {
    expect(await deliverAlert(owner.accountId, newId('alert'))).toEqual({ done: true });
  });
});

describe('webhook secret rotation', () => {
  it('a new secret signs at once, the previous one alongside for 24 hours, then alone the new one', async () => {
    const user = await registerUser();
    const before = (await api('/webhook-secret', { token: user.token })).body;
    expect(before.previousSecretExpiresAt).toBeNull();
    const rotated = await api('/webhook-secret/rotate', { method: 'POST', token: user.token });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(before.secret);
    const graceEnds = Date.parse(rotated.body.previousSecretExpiresAt);
    expect(graceEnds - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect((await api('/webhook-secret', { token: user.token })).body).toMatchObject({ secret: rotated.body.secret, previousSecretExpiresAt: rotated.body.previousSecretExpiresAt });

    expect(await signingSecrets(user.accountId)).toEqual([rotated.body.secret, before.secret]);
    expect(await signingSecrets(user.accountId, new Date(graceEnds + 1))).toEqual([rotated.body.secret]);
    expect((await api('/webhook-secret/rotate', { method: 'POST' })).status).toBe(401);
  });
});
