/**
 * The request limits of docs/security.md, on a local stack of their own started as `npm start` starts it —
 * with the limits ON (the default; the suite's shared stack runs with RATE_LIMITS=off). Every request comes from
 * 127.0.0.1, one source IP: the 11th register in an hour is a 429 with Retry-After and writes nothing; so is the
 * 11th forgot-password; the 11th sign-in of one e-mail after 10 failures is refused before the password is tried.
 * Behind CloudFront every request comes from an edge server's address (here 127.0.0.1 too): with the edge secret
 * the limits count each viewer of CloudFront-Viewer-Address instead, and without it the header changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { ipSubject } from '#shared/auth/limits.ts';
import { EDGE_SECRET_HEADER, VIEWER_ADDRESS_HEADER } from '#shared/http/client-ip.ts';
import { startStackProcess, type StackProcess } from './global-setup.ts';
import { uniqueEmail } from './harness.ts';

/** The stack's edge secret (env EDGE_SECRET, as the Lambdas get it in AWS): what our CloudFront sends as x-burnrate-edge. */
const EDGE_SECRET = randomBytes(24).toString('hex');

let running: StackProcess;
let dynamo: DynamoDBDocumentClient;

beforeAll(async () => {
  running = await startStackProcess(undefined, { RATE_LIMITS: 'on', EDGE_SECRET });
  const { info } = running;
  dynamo = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: info.dynamodbEndpoint, region: info.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
}, 90_000);

afterAll(async () => {
  dynamo?.destroy();
  await running?.stop();
  if (running) await rm(running.dataDir, { recursive: true, force: true });
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${running.info.apiUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}

function expectThrottled(res: Awaited<ReturnType<typeof post>>, maxSeconds: number): void {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ type: '/problems/too-many-requests', status: 429 });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
}

async function mailsTo(to: string): Promise<string[]> {
  const dir = running.info.outboxDir;
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml'));
  const texts = await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')));
  return texts.filter((text) => new RegExp(`^To: ${to.replace(/[.+]/g, '\\$&')}\\r?$`, 'mi').test(text));
}

const PASSWORD = 'Limits9Password';
const newUser = (email = uniqueEmail('limit')) => ({ email, password: PASSWORD, firstName: 'Ada', lastName: 'L', companyName: 'Limits' });

describe('abuse limits (RATE_LIMITS on), all requests from one IP', () => {
  const registered: string[] = [];

  it('the 11th register from one IP in an hour is a 429 with Retry-After, and nothing is written for it', async () => {
    for (let i = 0; i < 10; i++) {
      const user = newUser();
      const res = await post('/auth/register', user);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      registered.push(user.email);
    }
    const eleventh = newUser();
    const res = await post('/auth/register', eleventh);
    expectThrottled(res, 3600);
    // Nothing written: no e-mail item, no identity (its credentials don't sign in), no verification e-mail.
    const item = await dynamo.send(new GetCommand({ TableName: running.info.tableName, Key: keys.email(eleventh.email), ConsistentRead: true }));
    expect(item.Item).toBeUndefined();
    expect((await post('/auth/login', { email: eleventh.email, password: PASSWORD })).status).toBe(401);
    expect(await mailsTo(eleventh.email)).toEqual([]);
    // An invalid body is refused before the limit (400), not counted and not throttled into a 429 either way.
    expect((await post('/auth/register', { ...newUser(), password: 'weak' })).status).toBe(400);
  }, 60_000);

  it('the 11th forgot-password from one IP in an hour is a 429, and sends nothing', async () => {
    for (const email of registered) expect((await post('/auth/forgot-password', { email })).status).toBe(202);
    for (const email of registered) expect((await mailsTo(email)).some((m) => m.includes('/reset-password?token='))).toBe(true);
    const target = registered[0]!;
    const before = (await mailsTo(target)).length;
    expectThrottled(await post('/auth/forgot-password', { email: target }), 3600);
    expect(await mailsTo(target)).toHaveLength(before);
  }, 60_000);

  it('after 10 failed logins of one e-mail from one IP in 15 minutes, the 11th attempt is a 429 even with the right password', async () => {
    const email = registered[1]!;
    for (let i = 0; i < 10; i++) {
      expect((await post('/auth/login', { email, password: `Wrong${randomBytes(4).toString('hex')}9` })).status).toBe(401);
    }
    expectThrottled(await post('/auth/login', { email, password: PASSWORD }), 900);
    // Another address from the same IP is not affected, and a success does not count as a failure.
    const other = registered[2]!;
    for (let i = 0; i < 12; i++) expect((await post('/auth/login', { email: other, password: PASSWORD })).status).toBe(200);
  }, 60_000);
});

describe('behind CloudFront: one edge source IP, the limits count each viewer (with the edge secret)', () => {
  const viaEdge = (viewerAddress: string, secret = EDGE_SECRET) => ({ [EDGE_SECRET_HEADER]: secret, [VIEWER_ADDRESS_HEADER]: viewerAddress });
  const registerHits = async (ip: string) => {
    const res = await dynamo.send(new GetCommand({ TableName: running.info.tableName, Key: keys.rateLimit('register', ipSubject(ip)), ConsistentRead: true }));
    return res.Item?.hits as number | undefined;
  };

  it('11 sign-ups through one edge from 11 viewers are all accepted; the 11th from one viewer (any port) is a 429', async () => {
    for (let i = 1; i <= 11; i++) {
      const res = await post('/auth/register', newUser(), viaEdge(`198.51.100.${i}:${40_000 + i}`));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(await registerHits(`198.51.100.${i}`)).toBe(1);
    }
    // An IPv6 viewer, as CloudFront writes it (unbracketed, the port last), counted by its /64.
    for (let i = 0; i < 10; i++) {
      const res = await post('/auth/register', newUser(), viaEdge(`2001:db8:77:1::${i + 1}:${50_000 + i}`));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    expectThrottled(await post('/auth/register', newUser(), viaEdge('2001:db8:77:1::ff:443')), 3600);
    // Another viewer through the same edge still has its own budget.
    expect((await post('/auth/register', newUser(), viaEdge('203.0.113.77:1024'))).status).toBe(201);
  }, 90_000);

  it('a CloudFront-Viewer-Address without the right secret is not believed: the request counts against its source IP', async () => {
    const forged = '192.0.2.200';
    const before = (await registerHits('127.0.0.1')) ?? 0;
    const res = await post('/auth/register', newUser(), viaEdge(`${forged}:443`, `${EDGE_SECRET}x`));
    expect(await registerHits(forged)).toBeUndefined();
    if (before < 10) {
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(await registerHits('127.0.0.1')).toBe(before + 1);
    } else {
      expectThrottled(res, 3600);
    }
    expect(await registerHits(forged)).toBeUndefined();
  }, 30_000);
});
