/**
 * End to end on the running local stack: ingest → evaluation → the in-process queue → the notifier handler →
 * e-mail in the outbox and a signed webhook; a failing webhook is retried, then `failed`, without holding up e-mail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyWebhookSignature } from '#shared/notify/webhook.ts';
import { api, markEmailVerified, registerUser, stack } from './harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let server: Server;
let base: string;
const received: { path: string; signature: string; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', signature: String(req.headers['burnrate-signature'] ?? ''), body });
      res.writeHead(req.url === '/broken' ? 503 : 204).end();
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

describe('alert delivery through the local queue', () => {
  it('sends e-mail to the outbox and a verifiable webhook; a failing webhook ends failed after retries', async () => {
    const user = await registerUser();
    await markEmailVerified(user.accountId, user.userId); // alert e-mail goes to verified addresses only
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key;
    const secret = (await api('/webhook-secret', { token: user.token })).body.secret;
    for (const [name, path] of [
      ['Good hook', '/good'],
      ['Broken hook', '/broken'],
    ]) {
      const res = await api('/alert-rules', {
        method: 'POST',
        token: user.token,
        body: { type: 'cost_threshold', name, config: { threshold: 1, period: 'daily', webhookUrl: `${base}${path}` }, channels: ['email', 'webhook'] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const started = Date.now();
    const ingest = await api('/ingest', {
      method: 'POST',
      headers: { 'x-api-key': ingestKey },
      body: { events: [{ requestId: randomUUID(), keyHash: sha256(randomUUID()), provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd: 2 }] },
    });
    expect(ingest.body.accepted).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000); // delivery does not run on the ingest path

    const settled = await waitFor(async () => {
      const list = (await api('/alerts', { token: user.token })).body.items as { title: string; deliveries: { channel: string; status: string; attempts: number }[] }[];
      const done = list.length === 2 && list.every((a) => a.deliveries.every((d) => d.status === 'sent' || d.status === 'failed'));
      return done ? list : undefined;
    });
    const good = settled.find((a) => a.title.startsWith('Good hook'))!;
    const broken = settled.find((a) => a.title.startsWith('Broken hook'))!;
    expect(good.deliveries).toEqual([
      { channel: 'email', status: 'sent', attempts: 1 },
      { channel: 'webhook', status: 'sent', attempts: 1 },
    ]);
    expect(broken.deliveries).toEqual([
      { channel: 'email', status: 'sent', attempts: 1 },
      { channel: 'webhook', status: 'failed', attempts: 5 },
    ]);

    const goodPosts = received.filter((r) => r.path === '/good');
    expect(goodPosts).toHaveLength(1);
    expect(verifyWebhookSignature(secret, goodPosts[0]!.body, goodPosts[0]!.signature)).toBe(true);
    expect(received.filter((r) => r.path === '/broken')).toHaveLength(5);

    const files = (await readdir(stack().outboxDir)).filter((f) => f.endsWith('.eml'));
    const mine = [];
    for (const f of files) {
      const text = await readFile(join(stack().outboxDir, f), 'utf8');
      // Alert e-mail only (register sent the address its verification e-mail too).
      if (text.includes(`To: ${user.email}`) && text.includes('X-Burnrate-Alert-Id:')) mine.push(text);
    }
    expect(mine).toHaveLength(2);
    expect(mine.join('\n')).toContain('Observed spend: $2.00');
  }, 30_000);
});
