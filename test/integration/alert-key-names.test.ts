/**
 * Alert texts name a key by its label, else its hint, else the first 12 characters of its hash, and give each
 * amount once, in dollars (docs/features/budgets-and-alerts.md) — end to end on the local stack: a key is labelled with
 * PATCH /keys/:hash, an ingest passes a rule's threshold, and the alert itself, its e-mail (outbox), its signed
 * webhook and its Slack message all name the key by that label; a key with neither label nor hint is named by
 * its hash prefix, never by its whole hash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, markEmailVerified, registerUser } from './harness.ts';
import { mailTo } from './outbox.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
let server: Server;
let base: string;
const received: { path: string; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', body });
      res.writeHead(200).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 25_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(100);
  }
}

/** An amount written any way but once in dollars: `$2.50 (2.5)`, micro-dollars, or a bare number next to a `$`. */
const amountTwice = /\$[\d,.]+ \(|\b2500000\b|\b3250000\b|\b1000000\b/;

interface AlertView {
  id: string;
  title: string;
  message: string;
  keyHash: string;
  deliveries: { channel: string; status: string }[];
}

describe('alert texts name keys by label, else hint, else hash prefix', () => {
  it('label (set with PATCH /keys/:hash) in the alert, the e-mail, the webhook and the Slack message; a bare key by its 12-character prefix', async () => {
    const user = await registerUser();
    await markEmailVerified(user.accountId, user.userId);
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key;
    const tag = randomUUID();
    const labelled = sha256(`sk-labelled-${tag}`);
    const bare = sha256(`sk-bare-${tag}`);
    const event = (keyHash: string, costUsd: number, extra: object = {}) => ({ requestId: randomUUID(), keyHash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd, ...extra });
    const ingest = async (events: object[]) => {
      const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events } });
      expect(res.body).toMatchObject({ accepted: events.length });
    };

    // The keys exist (below any threshold); one gets a label, the other has neither label nor hint.
    await ingest([event(labelled, 0.01, { keyHint: 'sk-…lbl1' }), event(bare, 0.01)]);
    const patched = await api(`/keys/${labelled}`, { method: 'PATCH', token: user.token, body: { label: 'Prod bot' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    for (const [name, keyHash] of [
      ['Labelled', labelled],
      ['Bare', bare],
    ] as const) {
      const config = { threshold: 1, period: 'daily', keyHash, webhookUrl: `${base}/hook-${name}-${tag}`, slackWebhookUrl: `${base}/slack-${name}-${tag}` };
      const res = await api('/alert-rules', { method: 'POST', token: user.token, body: { type: 'cost_threshold', name, config, channels: ['email', 'webhook', 'slack'] } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    await ingest([event(labelled, 2.49), event(bare, 3.24)]);

    const alerts = await waitFor(async () => {
      const list = (await api('/alerts', { token: user.token })).body.items as AlertView[];
      return list.length === 2 && list.every((a) => a.deliveries.every((d) => d.status === 'sent')) ? list : undefined;
    });
    const mails = await waitFor(async () => {
      const mine = (await mailTo(user.email)).filter((m) => /^X-Burnrate-Alert-Id: /m.test(m.text));
      return mine.length === 2 ? mine : undefined;
    });

    for (const [name, keyHash, keyName, observed] of [
      ['Labelled', labelled, 'Prod bot', '$2.50'],
      ['Bare', bare, bare.slice(0, 12), '$3.25'],
    ] as const) {
      const alert = alerts.find((a) => a.keyHash === keyHash)!;
      // The alert as the API lists it.
      expect(alert.title).toBe(`${name}: daily spend of key "${keyName}" reached $1.00`);
      expect(alert.message).toContain(`Spend of key "${keyName}" on `);
      expect(alert.message).toContain(`is ${observed}, at or above the rule "${name}" threshold of $1.00.`);
      for (const text of [alert.title, alert.message]) {
        expect(text).not.toContain(keyHash); // never the whole hash
        expect(text).not.toMatch(amountTwice);
      }
      if (name === 'Labelled') expect(alert.message).not.toContain('sk-…lbl1'); // the label wins over the hint

      // The e-mail: Subject (our fixed text first), body (the key by name, each amount once, in dollars).
      const mail = mails.find((m) => m.text.includes(`X-Burnrate-Alert-Id: ${alert.id}`))!;
      const split = mail.text.indexOf('\r\n\r\n');
      const [head, body] = [mail.text.slice(0, split), mail.text.slice(split + 4)];
      const subject = /^Subject: (.*)$/m.exec(head.replace(/\r\n /g, ' '))![1];
      expect(subject).toBe(`[Burnrate] Cost threshold: ${alert.title}`);
      expect(body).toMatch(new RegExp(`^Key: +${keyName}\\r?$`, 'm'));
      expect(body).not.toContain(keyHash);
      expect(body).toMatch(new RegExp(`^Observed spend: +\\${observed}\\r?$`, 'm'));
      expect(body).toMatch(/^Threshold: +\$1\.00\r?$/m);
      expect(body).not.toMatch(amountTwice);

      // The signed webhook: the alert's texts.
      const hooks = received.filter((r) => r.path === `/hook-${name}-${tag}`);
      expect(hooks).toHaveLength(1);
      const hook = JSON.parse(hooks[0]!.body);
      expect(hook.alert).toMatchObject({ id: alert.id, title: alert.title, message: alert.message });
      expect(hooks[0]!.body).not.toMatch(amountTwice);

      // Slack: text, message block and the Key field.
      const posts = received.filter((r) => r.path === `/slack-${name}-${tag}`);
      expect(posts).toHaveLength(1);
      const slack = JSON.parse(posts[0]!.body);
      expect(slack.text).toContain(`key "${keyName}"`);
      const fields = slack.blocks.find((b: { fields?: unknown }) => b.fields).fields.map((f: { text: string }) => f.text);
      expect(fields).toContain(`*Key*\n${keyName}`);
      expect(fields).toContain(`*Amount*\n${observed} against $1.00`);
      expect(posts[0]!.body).not.toContain(keyHash);
      expect(posts[0]!.body).not.toMatch(amountTwice);
    }
  }, 60_000);
});
