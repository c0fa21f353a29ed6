/**
 * Alert delivery, the pure parts: RFC 5322 rendering, webhook signatures, the URL/SSRF guard, queue message
 * parsing, and the local in-process queue (with a stub handler).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '#shared/alerting/model.ts';
import { fromHeader, renderAlertEmail, rfc5322Date } from '#shared/notify/email.ts';
import { formatUsd } from '#shared/pricing/pricing.ts';
import { parseAlertMessage } from '#shared/alerting/queue.ts';
import { isNonPublicAddress, sendWebhook, signWebhook, verifyWebhookSignature, webhookBody } from '#shared/notify/webhook.ts';
import { startAlertQueue, type AlertQueue } from '#local/alert-queue.ts';
import { handler as worker } from '#functions/notify/worker.ts';
import { lambdaContext } from './helpers.ts';

const ACCOUNT = 'br_01JD0000000000000000000000';
const ALERT = 'alt_01JD0000000000000000000001';

function alert(overrides: Partial<Alert> = {}): Alert {
  return {
    id: ALERT,
    accountId: ACCOUNT,
    type: 'cost_threshold',
    status: 'triggered',
    ruleId: 'rul_01JD0000000000000000000002',
    budgetId: null,
    keyHash: null,
    keyHashes: [],
    title: 'Daily cap: daily spend reached $10.00',
    message: 'Spend of the account on 2026-11-21 (UTC) is $12.50, at or above the rule "Daily cap" threshold of $10.00.',
    period: '2026-11-21',
    thresholdMicros: 10_000_000,
    observedMicros: 12_500_000,
    deliveries: [
      { channel: 'email', status: 'pending', attempts: 0 },
      { channel: 'webhook', status: 'pending', attempts: 0 },
    ],
    webhookUrl: 'https://hooks.example.com/burnrate',
    triggeredAt: '2026-11-21T22:34:24.000Z',
    acknowledgedAt: null,
    acknowledgedBy: null,
    ...overrides,
  };
}

const settings = { from: 'alerts@example.com', dashboardUrl: 'https://app.example.com/' };
const date = new Date('2026-11-21T22:34:25.000Z');

/** Header name (lower-case) → unfolded value. */
function headersOf(raw: string): Map<string, string> {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]/g, ' ');
  return new Map(head.split('\r\n').map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
}

describe('alert e-mail (RFC 5322)', () => {
  const raw = renderAlertEmail({ alert: alert(), to: 'ada@example.com', settings, date });
  const headers = headersOf(raw);
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);

  it('has the required headers', () => {
    expect(headers.get('from')).toBe('Burnrate Alerts <alerts@example.com>');
    expect(headers.get('to')).toBe('ada@example.com');
    expect(headers.get('subject')).toBe('[Burnrate] Cost threshold: Daily cap: daily spend reached $10.00');
    expect(headers.get('date')).toBe('Sat, 21 Nov 2026 22:34:25 +0000');
    expect(headers.get('message-id')).toMatch(/^<alt_01JD0000000000000000000001\.[0-9a-f]{16}@example\.com>$/);
    expect(headers.get('mime-version')).toBe('1.0');
    expect(headers.get('content-type')).toBe('text/plain; charset=UTF-8');
    expect(headers.get('content-transfer-encoding')).toBe('7bit');
  });

  it('uses CRLF line endings only, with lines of at most 78 characters', () => {
    expect(raw).toContain('\r\n\r\n');
    expect(raw.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(raw.endsWith('\r\n')).toBe(true);
    for (const line of raw.split('\r\n')) expect(line.length, line).toBeLessThanOrEqual(78);
  });

  it('names the rule, the type, the period and the figures in dollars, and links the dashboard', () => {
    expect(body).toContain('Daily cap: daily spend reached $10.00');
    expect(body).toMatch(/Type:\s+Cost threshold \(cost_threshold\)/);
    expect(body).toMatch(/Rule:\s+rul_01JD0000000000000000000002/);
    expect(body).toMatch(/Period:\s+2026-11-21/);
    expect(body).toMatch(/Threshold:\s+\$10\.00\r\n/);
    expect(body).toMatch(/Observed spend:\s+\$12\.50\r\n/);
    expect(body).toContain('https://app.example.com/alerts/alt_01JD0000000000000000000001');
  });

  it('names a budget and leaves the dashboard link out when none is configured', () => {
    const text = renderAlertEmail({
      alert: alert({ type: 'budget_exceeded', ruleId: null, budgetId: 'bud_01JD0000000000000000000003', thresholdMicros: 500_000_000, observedMicros: 512_345_678 }),
      to: 'ada@example.com',
      settings: { from: 'Ops <ops@example.org>' },
      date,
    });
    expect(headersOf(text).get('from')).toBe('Ops <ops@example.org>');
    expect(text).toMatch(/Budget:\s+bud_01JD0000000000000000000003/);
    expect(text).toMatch(/Type:\s+Budget exceeded \(budget_exceeded\)/);
    expect(text).toMatch(/Threshold:\s+\$500\.00/);
    expect(text).toMatch(/Observed spend:\s+\$512\.345678/);
    expect(text).not.toContain('/alerts/');
  });

  it('cannot be given extra headers through the title or the recipient', () => {
    const text = renderAlertEmail({ alert: alert({ title: 'Hi\r\nBcc: victim@example.com' }), to: 'ada@example.com\r\nBcc: x@example.com', settings, date });
    const head = text.slice(0, text.indexOf('\r\n\r\n'));
    expect(head).not.toMatch(/^Bcc:/im);
    expect(headersOf(text).get('subject')).toBe('[Burnrate] Cost threshold: Hi Bcc: victim@example.com');
  });

  it('encodes a non-ASCII subject (RFC 2047) and body (quoted-printable)', () => {
    const text = renderAlertEmail({ alert: alert({ title: 'Budget « Équipe » exceeded', message: 'Key sk-…abcd spent €€ — too much.' }), to: 'a@example.com', settings, date });
    const headers = headersOf(text);
    // Our ASCII prefix stays readable; from the first non-ASCII word on: RFC 2047 encoded-words.
    expect(headers.get('subject')).toMatch(/^\[Burnrate\] Cost threshold: Budget (=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?= ?)+$/);
    const decoded = headers
      .get('subject')!
      .replace(/^\[Burnrate\] Cost threshold: Budget /, '')
      .split(' ')
      .map((w) => Buffer.from(w.slice(10, -2), 'base64').toString('utf8'))
      .join('');
    expect(decoded).toBe('« Équipe » exceeded');
    expect(headers.get('content-transfer-encoding')).toBe('quoted-printable');
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    expect(text).toContain('=E2=80=A6');
  });

  it('formats dollars exactly, with at least two decimals', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(75_000)).toBe('$0.075');
    expect(formatUsd(1)).toBe('$0.000001');
    expect(formatUsd(1_234_567_890_000)).toBe('$1,234,567.89');
    expect(formatUsd(10_000_000)).toBe('$10.00');
  });

  it('wraps a bare sender address in the Burnrate display name', () => {
    expect(fromHeader('alerts@x.io')).toEqual({ header: 'Burnrate Alerts <alerts@x.io>', address: 'alerts@x.io' });
    expect(fromHeader('Team <t@x.io>')).toEqual({ header: 'Team <t@x.io>', address: 't@x.io' });
    expect(rfc5322Date(new Date('2026-01-02T03:04:05Z'))).toBe('Fri, 02 Jan 2026 03:04:05 +0000');
  });
});

describe('webhook signatures', () => {
  const secret = 'whsec_test-secret';
  const body = webhookBody(alert());
  const now = new Date('2026-11-21T22:34:25.000Z');
  const t = Math.floor(now.getTime() / 1000);

  it('signs "<t>.<body>" with HMAC-SHA256 in the t=…,v1=… format', () => {
    expect(signWebhook(secret, body, t)).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64}$`));
    expect(JSON.parse(body)).toMatchObject({ id: ALERT, type: 'alert.triggered', alert: { id: ALERT, threshold: 10, observedSpend: 12.5 } });
  });

  it('verifies a genuine signature', () => {
    expect(verifyWebhookSignature(secret, body, signWebhook(secret, body, t), 300, now)).toBe(true);
    expect(verifyWebhookSignature(secret, body, signWebhook(secret, body, t - 299), 300, now)).toBe(true);
  });

  it('refuses a tampered body, a wrong secret, a stale or future timestamp and malformed headers', () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature(secret, body.replace('12.5', '1.25'), header, 300, now)).toBe(false);
    expect(verifyWebhookSignature('whsec_other', body, header, 300, now)).toBe(false);
    expect(verifyWebhookSignature(secret, body, signWebhook(secret, body, t - 301), 300, now)).toBe(false);
    expect(verifyWebhookSignature(secret, body, signWebhook(secret, body, t + 301), 300, now)).toBe(false);
    // The timestamp is signed: moving it invalidates the signature.
    expect(verifyWebhookSignature(secret, body, header.replace(`t=${t}`, `t=${t + 1}`), 300, now)).toBe(false);
    for (const bad of [undefined, '', 'v1=abc', `t=${t}`, `t=x,v1=${'0'.repeat(64)}`, 'garbage']) {
      expect(verifyWebhookSignature(secret, body, bad, 300, now), String(bad)).toBe(false);
    }
  });

  it('signs with every live secret during a rotation, and each verifies alone', () => {
    const header = signWebhook([secret, 'whsec_previous'], body, t);
    expect(header).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`));
    expect(verifyWebhookSignature(secret, body, header, 300, now)).toBe(true);
    expect(verifyWebhookSignature('whsec_previous', body, header, 300, now)).toBe(true);
    expect(verifyWebhookSignature('whsec_other', body, header, 300, now)).toBe(false);
  });

  it('accepts any one of several v1 signatures (secret rotation)', () => {
    const good = signWebhook(secret, body, t).split(',')[1]!;
    expect(verifyWebhookSignature(secret, body, `t=${t},v1=${'a'.repeat(64)},${good}`, 300, now)).toBe(true);
  });
});

describe('webhook sending', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  async function receiver(answer: (req: IncomingMessage, body: string) => number | 'hang'): Promise<string> {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const status = answer(req, body);
        if (status !== 'hang') res.writeHead(status).end('ok');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }

  it('POSTs the signed JSON body with the delivery headers; 2xx is sent', async () => {
    const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
    const url = await receiver((req, body) => (seen.push({ headers: req.headers, body }), 204));
    const outcome = await sendWebhook(alert({ webhookUrl: url }), { secrets: ['whsec_s'], allowInsecure: true });
    expect(outcome).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    const [{ headers, body }] = seen as [(typeof seen)[0]];
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe('Burnrate-Webhooks/1');
    expect(headers['burnrate-delivery']).toBe(ALERT);
    expect(verifyWebhookSignature('whsec_s', body, headers['burnrate-signature'] as string)).toBe(true);
  });

  it('treats another status and a timeout as retryable failures', async () => {
    const url500 = await receiver(() => 500);
    expect(await sendWebhook(alert({ webhookUrl: url500 }), { secrets: ['s'], allowInsecure: true })).toEqual({ ok: false, error: 'HTTP 500' });
    await new Promise((resolve) => server!.close(resolve));
    const urlHang = await receiver(() => 'hang');
    const started = Date.now();
    expect(await sendWebhook(alert({ webhookUrl: urlHang }), { secrets: ['s'], allowInsecure: true, timeoutMs: 200 })).toEqual({
      ok: false,
      error: 'timeout after 0.2 s',
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses for good: no URL, http, credentials, and non-public hosts outside the local stack', async () => {
    const cases = ['', 'http://hooks.example.com/x', 'https://user:pw@hooks.example.com/x', 'https://127.0.0.1/x', 'https://[::1]/x', 'https://169.254.169.254/latest'];
    for (const webhookUrl of cases) {
      const outcome = await sendWebhook(alert({ webhookUrl }), { secrets: ['s'], allowInsecure: false });
      expect(outcome, webhookUrl).toMatchObject({ ok: false, permanent: true });
    }
    // A name that resolves to loopback is caught at connection time.
    expect(await sendWebhook(alert({ webhookUrl: 'https://localhost/x' }), { secrets: ['s'], allowInsecure: false })).toMatchObject({
      ok: false,
      permanent: true,
    });
  });

  it('classifies addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', 'example.com']) expect(isNonPublicAddress(a), a).toBe(false);
  });
});

describe('queue messages', () => {
  it('parses {accountId, alertId} with well-formed ids only', () => {
    expect(parseAlertMessage(JSON.stringify({ accountId: ACCOUNT, alertId: ALERT }))).toEqual({ accountId: ACCOUNT, alertId: ALERT });
    for (const bad of ['', 'not json', 'null', '[]', '{}', JSON.stringify({ accountId: ACCOUNT }), JSON.stringify({ accountId: 'x', alertId: ALERT })]) {
      expect(parseAlertMessage(bad), bad).toBeUndefined();
    }
  });

  it('the notifier drops a malformed record instead of retrying it forever', async () => {
    const event = {
      Records: [{ messageId: 'm1', receiptHandle: 'r', body: 'nonsense', attributes: {}, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn', awsRegion: 'us-east-1' }],
    } as unknown as SQSEvent;
    expect(await worker(event, lambdaContext as never)).toEqual({ batchItemFailures: [] });
  });
});

describe('local alert queue', () => {
  let queue: AlertQueue | undefined;
  afterEach(async () => {
    await queue?.stop();
    queue = undefined;
  });

  const message = (n: number) => ({ accountId: ACCOUNT, alertId: `alt_01JD00000000000000000000${String(n).padStart(2, '0')}` });

  it('hands batches to the handler as SQS events, without blocking publish, and does not retry successes', async () => {
    const events: SQSEvent[] = [];
    queue = startAlertQueue({ handler: async (event) => (events.push(event), { batchItemFailures: [] }), baseDelayMs: 10, log: () => undefined });
    queue.publish(Array.from({ length: 12 }, (_, i) => message(i)));
    expect(events).toHaveLength(0); // enqueued on a later turn
    await queue.drain();
    expect(events.map((e) => e.Records.length)).toEqual([10, 2]);
    const record = events[0]!.Records[0]!;
    expect(JSON.parse(record.body)).toEqual(message(0));
    expect(record).toMatchObject({ eventSource: 'aws:sqs', attributes: { ApproximateReceiveCount: '1' } });
    expect(record.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(record.eventSourceARN).toMatch(/^arn:aws:sqs:/);
    expect(queue.deadLetters).toEqual([]);
  });

  it('retries reported failures with exponential backoff, then dead-letters them', async () => {
    const receives: { at: number; count: string; alertId: string }[] = [];
    const lines: string[] = [];
    queue = startAlertQueue({
      handler: async (event) => {
        for (const r of event.Records) receives.push({ at: Date.now(), count: r.attributes.ApproximateReceiveCount, alertId: JSON.parse(r.body).alertId });
        // message 1 always fails; message 2 succeeds
        return { batchItemFailures: event.Records.filter((r) => r.body.includes(message(1).alertId)).map((r) => ({ itemIdentifier: r.messageId })) };
      },
      baseDelayMs: 20,
      maxReceiveCount: 4,
      log: (line) => lines.push(line),
    });
    queue.publish([message(1), message(2)]);
    await queue.drain();
    const failing = receives.filter((r) => r.alertId === message(1).alertId);
    expect(failing.map((r) => r.count)).toEqual(['1', '2', '3', '4']);
    expect(receives.filter((r) => r.alertId === message(2).alertId)).toHaveLength(1);
    // 20, 40, 80 ms between the receives (timers may fire late, never early)
    const gaps = failing.slice(1).map((r, i) => r.at - failing[i]!.at);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(20 * 2 ** i - 2));
    expect(queue.deadLetters).toHaveLength(1);
    expect(queue.deadLetters[0]).toMatchObject({ receiveCount: 4, body: JSON.stringify(message(1)) });
    expect(lines.some((l) => l.includes('dead letter'))).toBe(true);
  });

  it('retries every record of a batch whose handler throws', async () => {
    let calls = 0;
    const redelivered: string[] = [];
    queue = startAlertQueue({
      handler: async (event) => {
        calls += 1;
        if (calls === 1) throw new Error('crash');
        // Each record comes back on its own backoff timer: in one batch or two, depending on the timers.
        redelivered.push(...event.Records.map((r) => r.body));
        return { batchItemFailures: [] };
      },
      baseDelayMs: 5,
      log: () => undefined,
    });
    queue.publish([message(1), message(2)]);
    await queue.drain();
    expect(redelivered.sort()).toEqual([JSON.stringify(message(1)), JSON.stringify(message(2))].sort());
    expect(queue.deadLetters).toEqual([]);
  });

  it('stop() drops waiting retries and ignores later publishes', async () => {
    let calls = 0;
    queue = startAlertQueue({
      handler: async (event) => (calls++, { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) }),
      baseDelayMs: 10_000,
      log: () => undefined,
    });
    queue.publish([message(1)]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await queue.stop();
    queue.publish([message(2)]);
    await queue.drain();
    expect(calls).toBe(1);
  });

  it('one batch at a time by default (one container); `concurrency` runs that many at once, and drain waits for them all', async () => {
    const peak = async (options: { batchSize: number; concurrency?: number }) => {
      let inFlight = 0;
      let most = 0;
      const seen: string[] = [];
      queue = startAlertQueue({
        ...options,
        handler: async (event) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await new Promise((resolve) => setTimeout(resolve, 20));
          seen.push(...event.Records.map((r) => JSON.parse(r.body).alertId as string));
          inFlight -= 1;
        },
        log: () => undefined,
      });
      queue.publish(Array.from({ length: 12 }, (_, i) => message(i)));
      await queue.drain();
      expect(seen.sort()).toEqual(Array.from({ length: 12 }, (_, i) => message(i).alertId).sort());
      await queue.stop();
      return most;
    };
    expect(await peak({ batchSize: 1 })).toBe(1);
    expect(await peak({ batchSize: 1, concurrency: 5 })).toBe(5);
    expect(await peak({ batchSize: 10, concurrency: 5 })).toBe(2);
  });
});
