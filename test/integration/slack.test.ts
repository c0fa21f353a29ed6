/**
 * The Slack channel end to end on the local stack: a rule with `slack` delivers one Block Kit message (`text` and
 * `blocks`) to a loopback receiver; a failing receiver is retried like webhooks; signed webhooks are unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature } from '#shared/notify/webhook.ts';
import { api, registerUser } from './harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
let server: Server;
let base: string;
const received: { path: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body });
      res.writeHead(req.url?.startsWith('/broken') ? 500 : 200).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the slack channel', () => {
  it('refuses a URL that is not a Slack incoming webhook (or a loopback receiver locally), and slack without its URL', async () => {
    const user = await registerUser();
    const rule = (config: object, channels: string[]) =>
      api('/alert-rules', { method: 'POST', token: user.token, body: { type: 'new_key', name: 'x', config, channels } });
    for (const url of ['https://example.com/hook', 'http://hooks.slack.com/services/x', 'https://hooks.slack.com.evil.com/x', 'http://10.0.0.1/x', 'https://u:p@hooks.slack.com/x']) {
      const res = await rule({ slackWebhookUrl: url }, ['slack']);
      expect(res.status, url).toBe(400);
      expect(res.body.errors[0].path).toBe('config.slackWebhookUrl');
    }
    expect((await rule({}, ['slack'])).status).toBe(400);
    expect((await rule({ slackWebhookUrl: 'https://hooks.slack.com/services/T0/B0/x' }, ['email'])).status).toBe(400);
    expect((await rule({ slackWebhookUrl: 'https://hooks.slack.com/services/T0/B0/x' }, ['slack'])).status).toBe(201);
  });

  it('delivers a Block Kit message to the receiver; a failing one is retried then failed; the signed webhook is unchanged', async () => {
    const user = await registerUser();
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key;
    const secret = (await api('/webhook-secret', { token: user.token })).body.secret;
    const tag = randomUUID();
    for (const [name, path, channels] of [
      ['Team Slack', `/slack-${tag}`, ['slack', 'webhook']],
      ['Broken Slack', `/broken-${tag}`, ['slack']],
    ] as const) {
      const config = { threshold: 1, period: 'daily', slackWebhookUrl: `${base}${path}`, ...(channels.includes('webhook' as never) ? { webhookUrl: `${base}/hook-${tag}` } : {}) };
      const res = await api('/alert-rules', { method: 'POST', token: user.token, body: { type: 'cost_threshold', name, config, channels } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const keyHash = sha256(randomUUID());
    await api('/ingest', {
      method: 'POST',
      headers: { 'x-api-key': ingestKey },
      body: { events: [{ requestId: randomUUID(), keyHash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd: 2.5 }] },
    });
    const settled = await waitFor(async () => {
      const list = (await api('/alerts', { token: user.token })).body.items as { id: string; title: string; deliveries: { channel: string; status: string; attempts: number }[] }[];
      return list.length === 2 && list.every((a) => a.deliveries.every((d) => d.status === 'sent' || d.status === 'failed')) ? list : undefined;
    }, 25_000);
    const good = settled.find((a) => a.title.startsWith('Team Slack'))!;
    expect(good.deliveries).toEqual([
      { channel: 'slack', status: 'sent', attempts: 1 },
      { channel: 'webhook', status: 'sent', attempts: 1 },
    ]);
    expect(settled.find((a) => a.title.startsWith('Broken Slack'))!.deliveries).toEqual([{ channel: 'slack', status: 'failed', attempts: 5 }]);

    const posts = received.filter((r) => r.path === `/slack-${tag}`);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers['content-type']).toBe('application/json');
    const message = JSON.parse(posts[0]!.body);
    expect(message.text).toContain(good.title);
    expect(message.text).toContain(`/alerts/${good.id}`);
    expect(message.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: good.title, emoji: false } });
    const fields = message.blocks.find((b: { fields?: unknown }) => b.fields).fields.map((f: { text: string }) => f.text);
    expect(fields).toContain('*Amount*\n$2.50 against $1.00');
    expect(fields.some((f: string) => f.startsWith('*Key*'))).toBe(false); // an account-wide rule names no key
    const button = message.blocks.find((b: { type: string }) => b.type === 'actions').elements[0];
    expect(button.url).toMatch(new RegExp(`/alerts/${good.id}$`));
    expect(received.filter((r) => r.path === `/broken-${tag}`)).toHaveLength(5);

    const hook = received.filter((r) => r.path === `/hook-${tag}`);
    expect(hook).toHaveLength(1);
    expect(verifyWebhookSignature(secret, hook[0]!.body, String(hook[0]!.headers['burnrate-signature']))).toBe(true);
    expect(JSON.parse(hook[0]!.body)).toMatchObject({ id: good.id, type: 'alert.triggered' });
  }, 40_000);
});
