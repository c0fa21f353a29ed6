/**
 * The deployed artifacts, run as Lambda runs them (issue 11): every function of the synthesized stack is bundled
 * with the esbuild options CDK uses, copied alone into a temporary directory (no node_modules reachable), and run
 * in its own Node process with exactly its template environment (resolved to the local stack's values) plus the
 * runtime's variables and the AWS endpoint override. Its AWS calls go through a recording proxy that checks each
 * against the function's synthesized IAM policy, then on to the local stack. One realistic request per function:
 * API Gateway v2 events built by the local gateway (its JWT authorizer with a real cognito-local token), the Stripe
 * webhook also as a Function URL event, the notifier with the SQS batch our ingest sent, the sweeper with a
 * scheduled event; a provider connection made against the OpenAI admin stand-in (its admin key sealed through the
 * proxy's KMS stand-in), queued by the dispatcher and synced by the worker with that SQS record. Any denied call,
 * crash, error log or unexpected status fails.
 */
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '#local/gateway.ts';
import { LOCAL_STRIPE_PRICES, LOCAL_STRIPE_SECRET_KEY } from '#local/stripe-mock.ts';
import { fireAlert } from '#shared/db/alerts.ts';
import { db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { newId } from '#shared/ids.ts';
import { SWEEP_GRACE_MS } from '#shared/notify/sweep.ts';
import { routes } from '#shared/routes.ts';
import type { Alert } from '#shared/alerting/model.ts';
import { buildAlone, buildArtifacts, type Artifact } from '../artifacts/bundles.ts';
import { synthesize, type SynthesizedApp } from '../artifacts/cfn.ts';
import { evaluate } from '../artifacts/iam.ts';
import { authorizationsFor, type SentMessage } from '../artifacts/proxy.ts';
import { artifactRuntime, problemsOf, type ArtifactRuntime, type Run } from '../artifacts/runtime.ts';
import { DEPLOY_CONTEXT } from '../infra/template.ts';
import { api, markEmailVerified, pointAtStack, registerUser, setPlan, stack, uniqueEmail, type ApiOptions, type RegisteredUser } from './harness.ts';
import { linkInMail } from './outbox.ts';
import { newStandInOrg } from './standins.ts';
import { nowSeconds, signStripe, stripeEvent, subscriptionObject } from './stripe-fixtures.ts';

/** The deploy settings, with the local Stripe stand-in's prices (the webhook maps them to plans). */
const CONTEXT = { ...DEPLOY_CONTEXT, stripePriceGrowth: LOCAL_STRIPE_PRICES.GROWTH, stripePriceScale: LOCAL_STRIPE_PRICES.SCALE };
const ACCOUNT_ID = '000000000000';
const STRIPE_SECRET_NAME = 'burnrate/stripe';
const PASSWORD = 'Artifact-Test-Pw1';

let app: SynthesizedApp;
let artifacts: Artifact[];
let runtime: ArtifactRuntime;
let buildDir: string;
let gatewayUrl: string;
let closeGateway: () => Promise<void>;
let restoreEnv: () => void;
const timings: Record<string, number> = {};

/** One request to the ARTIFACT gateway (the bundles behind it), and the run that answered it. */
async function through(path: string, options: ApiOptions = {}) {
  const res = await api(path, { ...options, baseUrl: gatewayUrl });
  const requestId = res.headers.get('apigw-requestid');
  const run = runtime.runs.find((r) => (r.event as { requestContext?: { requestId?: string } }).requestContext?.requestId === requestId);
  return { res, run };
}

/** A run's story for a failure message: its status, problems, calls and output. */
function explain(run: Run | undefined, extra: unknown = ''): string {
  if (!run) return `no artifact ran ${JSON.stringify(extra)}`;
  const calls = run.calls.map((c) => `${c.service}:${c.operation} ${c.status} ${c.allowed ? 'allowed' : 'DENIED'}`).join('; ');
  return [
    `functions/${run.artifact.fn.name}: ${String(JSON.stringify(run.invocation.result ?? run.invocation.error)).slice(0, 600)}`,
    `problems: ${problemsOf(run).join(' | ') || 'none'}`,
    `calls: ${calls}`,
    `stdout: ${run.invocation.stdout.slice(-1500)}`,
    `stderr: ${run.invocation.stderr.slice(-800)}`,
    typeof extra === 'string' ? extra : JSON.stringify(extra),
  ].join('\n');
}

/** The run is clean (no problem), made every call in `expected` (service:Operation), and all were allowed. */
function expectClean(run: Run | undefined, expected: string[] = []) {
  expect(run, 'an artifact ran').toBeDefined();
  expect(problemsOf(run!), explain(run)).toEqual([]);
  const made = new Set(run!.calls.map((c) => `${c.service}:${c.operation}`));
  for (const call of expected) expect(made.has(call), `${call} expected\n${explain(run)}`).toBe(true);
}

async function expectStatus(path: string, options: ApiOptions, status: number, calls: string[] = []) {
  const { res, run } = await through(path, options);
  expect(res.status, explain(run, res.body)).toBe(status);
  expectClean(run, calls);
  return { res, run: run! };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The SQS record the event source mapping would hand a consumer for a message a function sent. */
const sqsRecord = (sent: SentMessage, queueArn: string) => ({
  messageId: sent.messageId,
  receiptHandle: `${sent.messageId}#1`,
  body: sent.body,
  attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'AROAARTIFACT', ApproximateFirstReceiveTimestamp: String(Date.now()) },
  messageAttributes: {},
  md5OfBody: sent.md5OfBody,
  eventSource: 'aws:sqs',
  eventSourceARN: queueArn,
  awsRegion: stack().region,
});
const newKeyHash = () => sha256(`sk-artifact-${randomUUID()}`);
/** The event EventBridge hands a function for a scheduled rule. */
const scheduledEvent = (rule: string) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: ACCOUNT_ID,
  time: new Date().toISOString(),
  region: stack().region,
  resources: [`arn:aws:events:${stack().region}:${ACCOUNT_ID}:rule/${rule}`],
  detail: {},
});
/** The JSON log lines (Powertools) a run wrote with this message. */
const logged = (run: Run, message: string) =>
  run.invocation.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.message === message);
const usage = (keyHash: string) => ({ requestId: randomUUID(), keyHash, keyHint: 'sk-…art1', provider: 'openai', model: 'gpt-4o', inputTokens: 1000, outputTokens: 200 });

/** Expects a 2xx from the LOCAL stack (the state the artifacts' requests need) and returns the body. */
async function ok(path: string, options: ApiOptions = {}) {
  const res = await api(path, options);
  expect(res.status, `${options.method ?? 'GET'} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** Everything the requests refer to, made through the local stack (in-process handlers) before any artifact runs. */
interface World {
  owner: RegisteredUser;
  ingestKey: string;
  keyToDelete: string;
  keyHash: string;
  budgets: string[];
  rules: string[];
  alertId: string;
  lostAlertId: string;
  verifyToken: string;
  resendUser: RegisteredUser;
  resetToken: string;
  changeUser: RegisteredUser;
  loginUser: RegisteredUser;
  members: string[];
  invitationToDelete: string;
  acceptToken: string;
  checkoutUser: RegisteredUser;
  portalUser: RegisteredUser;
  webhookUser: RegisteredUser;
}
let world: World;

async function member(owner: RegisteredUser): Promise<string> {
  const email = uniqueEmail('artifact-member');
  await ok('/invitations', { method: 'POST', token: owner.token, body: { email, role: 'member' } });
  const { token } = await linkInMail(email, '/accept-invitation');
  const accepted = await ok('/auth/accept-invitation', { method: 'POST', body: { token, password: PASSWORD, firstName: 'Grace', lastName: 'Member' } });
  return accepted.userId as string;
}

async function makeWorld(): Promise<World> {
  const [owner, verifyUser, resendUser, resetUser, changeUser, loginUser, checkoutUser, portalUser, webhookUser] = await Promise.all(
    Array.from({ length: 9 }, () => registerUser({ password: PASSWORD })),
  );
  await setPlan(owner!.accountId, 'SCALE');
  await markEmailVerified(owner!.accountId, owner!.userId);
  const t = { token: owner!.token };
  const [ingestKey, keyToDelete] = await Promise.all([
    ok('/ingest-keys', { method: 'POST', ...t, body: { name: 'artifact' } }),
    ok('/ingest-keys', { method: 'POST', ...t, body: { name: 'to delete' } }),
  ]);
  // A new_key rule with e-mail: the key the artifact's ingest discovers raises an alert for the notifier.
  const rules = await Promise.all(
    [
      { type: 'new_key', name: 'New keys', config: {} },
      { type: 'cost_threshold', name: 'To update', config: { threshold: 1000, period: 'daily' } },
      { type: 'cost_threshold', name: 'To delete', config: { threshold: 1000, period: 'daily' } },
    ].map((body) => ok('/alert-rules', { method: 'POST', ...t, body: { channels: ['email'], isActive: true, ...body } })),
  );
  const keyHash = newKeyHash();
  await ok('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey.key }, body: { events: [usage(keyHash)] } });
  const budgets = await Promise.all([1, 2].map((i) => ok('/budgets', { method: 'POST', ...t, body: { monthlyLimit: 1000 * i, alertThreshold: 0.8, scope: 'ACCOUNT' } })));
  await ok('/prices/openai/artifact-model', { method: 'PUT', ...t, body: { input: 1, output: 2 } });
  await ok('/webhook-secret', t);
  const alerts = await ok('/alerts', t);
  // A lost alert (its queue message never made it), old enough for the sweeper.
  const lost: Alert = {
    id: newId('alert'),
    accountId: owner!.accountId,
    type: 'plan_limit',
    status: 'triggered',
    ruleId: null,
    budgetId: null,
    keyHash: null,
    keyHashes: [],
    title: 'A lost alert',
    message: 'Its queue message never made it.',
    period: new Date().toISOString().slice(0, 10),
    thresholdMicros: null,
    observedMicros: null,
    deliveries: [{ channel: 'email', status: 'pending', attempts: 0 }],
    triggeredAt: new Date(Date.now() - SWEEP_GRACE_MS - 60_000).toISOString(),
    acknowledgedAt: null,
    acknowledgedBy: null,
  };
  expect(await fireAlert(lost, { source: 'artifact-test', level: 'lost', period: lost.id })).toBe(true);

  const members = [await member(owner!), await member(owner!)];
  const pending = await ok('/invitations', { method: 'POST', ...t, body: { email: uniqueEmail('artifact-pending'), role: 'viewer' } });
  const acceptEmail = uniqueEmail('artifact-accept');
  await ok('/invitations', { method: 'POST', ...t, body: { email: acceptEmail, role: 'viewer' } });
  await ok('/auth/forgot-password', { method: 'POST', body: { email: resetUser!.email } });
  await ok('/billing/checkout', { method: 'POST', token: portalUser!.token, body: { plan: 'GROWTH' } });
  return {
    owner: owner!,
    ingestKey: ingestKey.key,
    keyToDelete: keyToDelete.id,
    keyHash,
    budgets: budgets.map((b) => b.id),
    rules: rules.slice(1).map((r) => r.id),
    alertId: alerts.items[0].id,
    lostAlertId: lost.id,
    verifyToken: (await linkInMail(verifyUser!.email, '/verify-email')).token,
    resendUser: resendUser!,
    resetToken: (await linkInMail(resetUser!.email, '/reset-password')).token,
    changeUser: changeUser!,
    loginUser: loginUser!,
    members,
    invitationToDelete: pending.id,
    acceptToken: (await linkInMail(acceptEmail, '/accept-invitation')).token,
    checkoutUser: checkoutUser!,
    portalUser: portalUser!,
    webhookUser: webhookUser!,
  };
}

beforeAll(async () => {
  const s = stack();
  // This process's domain code (fireAlert) and the gateway's JWT authorizer talk to the local stack.
  restoreEnv = pointAtStack();
  let started = performance.now();
  app = synthesize(CONTEXT);
  timings.synth = performance.now() - started;

  started = performance.now();
  buildDir = await mkdtemp(join(tmpdir(), 'burnrate-artifacts-'));
  artifacts = await buildArtifacts(app.functions, buildDir);
  timings.build = performance.now() - started;

  // The secrets the stack generates (the cursor key, the CloudFront edge secret) reach functions as dynamic
  // references in their environment; locally each gets a value of its own.
  const generatedSecrets = Object.fromEntries(
    Object.entries(app.template.Resources as Record<string, { Type: string; Properties?: { GenerateSecretString?: unknown } }>)
      .filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret' && r.Properties?.GenerateSecretString)
      .map(([id]) => [id, id.startsWith('CursorSecret') ? (process.env.CURSOR_SECRET ?? 'artifact-cursor-secret') : `artifact-${id}`]),
  );
  runtime = artifactRuntime({
    template: app.template,
    artifacts,
    stack: {
      region: s.region,
      accountId: ACCOUNT_ID,
      tableName: s.tableName,
      userPoolId: s.userPoolId,
      userPoolClientId: s.userPoolClientId,
      templateSecrets: generatedSecrets,
      externalSecrets: [
        {
          name: STRIPE_SECRET_NAME,
          arn: `arn:aws:secretsmanager:${s.region}:${ACCOUNT_ID}:secret:${STRIPE_SECRET_NAME}-AbC123`,
          value: JSON.stringify({ secretKey: LOCAL_STRIPE_SECRET_KEY, webhookSecret: s.stripeWebhookSecret }),
        },
      ],
    },
    upstream: { dynamodb: s.dynamodbEndpoint, 'cognito-idp': s.cognitoEndpoint },
    sesIdentities: [CONTEXT.sesIdentity],
    serviceEndpoints: [
      // The Stripe SDK's host, for the functions that call Stripe: the local stand-in instead of api.stripe.com.
      { whenSet: 'STRIPE_SECRET_ARN', env: { STRIPE_API_BASE: s.stripeUrl } },
      // The functions that call the providers' admin APIs (they hold the connections' KMS key): the stand-ins. Those
      // URLs count only on a local stack (shared/config.ts: DYNAMODB_ENDPOINT set; in AWS the real hosts, always), so
      // these functions also name their DynamoDB endpoint, which is the proxy all the same.
      { whenSet: 'CONNECTIONS_KMS_KEY_ID', env: (proxyUrl) => ({ DYNAMODB_ENDPOINT: proxyUrl, OPENAI_ADMIN_URL: s.openaiAdmin.url, ANTHROPIC_ADMIN_URL: s.anthropicAdmin.url }) },
    ],
    concurrency: 2,
  });

  // The local gateway builds each API Gateway v2 event (and checks the JWT like the authorizer); each handler is
  // the artifact in its own process.
  const gateway = createGateway({ logRequests: false, resolveHandler: async (name) => (event) => runtime.invoke(name, event).then((run) => run.invocation.result) });
  gateway.server.listen(0, '127.0.0.1');
  await once(gateway.server, 'listening');
  const address = gateway.server.address() as { port: number };
  gatewayUrl = `http://127.0.0.1:${address.port}/api`;
  closeGateway = () => new Promise<void>((resolve) => {
    gateway.server.closeAllConnections();
    gateway.server.close(() => resolve());
  });

  started = performance.now();
  world = await makeWorld();
  timings.setup = performance.now() - started;
}, 180_000);

afterAll(async () => {
  await closeGateway?.();
  restoreEnv?.();
  if (buildDir) await rm(buildDir, { recursive: true, force: true });
  if (runtime) {
    const total = runtime.runs.reduce((sum, r) => sum + r.invocation.ms, 0);
    console.log(
      `[artifacts] ${artifacts.length} bundles: synth ${(timings.synth! / 1000).toFixed(1)} s, build ${(timings.build! / 1000).toFixed(1)} s, ` +
        `setup ${(timings.setup! / 1000).toFixed(1)} s; ${runtime.runs.length} runs, ${(total / 1000).toFixed(1)} s of processes`,
    );
  }
});

describe('the stack and its artifacts', () => {
  it('every function of the template is ours, one per route plus the notifier and the sweeper; CDK helpers aside', () => {
    const names = app.functions.map((f) => f.name).sort();
    expect(names).toEqual([...routes.map((r) => r.handler), 'notify/sweep', 'notify/worker', 'spend/export-worker', 'connections/dispatch', 'connections/worker-openai', 'connections/worker-anthropic', 'connections/worker-openrouter', 'connections/evaluate', 'connections/limits-openai', 'connections/limits-anthropic', 'connections/limits-openrouter'].sort());
    // Helper functions CDK adds (custom-resource providers, BucketDeployment) are not built from functions/.
    for (const id of app.helperFunctions) expect(app.functions.some((f) => f.logicalId === id)).toBe(false);
    expect(artifacts.every((a) => a.bytes > 10_000)).toBe(true);
  });

  it('a bundle of the shared build is byte for byte the one its entry built alone with infra\'s esbuild options makes', async () => {
    const sample = artifacts.find((a) => a.fn.name === 'health/get')!;
    const alone = join(buildDir, 'alone', 'index.mjs');
    await buildAlone(sample.fn, alone);
    expect((await readFile(join(sample.dir, 'index.mjs'))).equals(await readFile(alone))).toBe(true);
  });
});

describe.concurrent('one realistic request per function, through its artifact', () => {
  const o = () => ({ token: world.owner.token });

  it('GET /health, GET /openapi.json', async () => {
    await expectStatus('/health', {}, 200);
    await expectStatus('/openapi.json', {}, 200);
  });

  it('POST /auth/register: Cognito, the table and the verification e-mail through SES', async () => {
    const { run } = await expectStatus(
      '/auth/register',
      { method: 'POST', body: { email: uniqueEmail('artifact-register'), password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace', companyName: 'Artifacts' } },
      201,
      ['cognito-idp:AdminCreateUser', 'cognito-idp:AdminSetUserPassword', 'dynamodb:TransactWriteItems', 'ses:SendEmail'],
    );
    expect(run.emails[0]?.FromEmailAddress).toBe('alerts@example.com');
  });

  it('POST /auth/login, POST /auth/refresh', async () => {
    const login = await expectStatus('/auth/login', { method: 'POST', body: { email: world.loginUser.email, password: PASSWORD } }, 200, ['cognito-idp:InitiateAuth']);
    expect(login.res.body.token).toEqual(expect.any(String));
    await expectStatus('/auth/refresh', { method: 'POST', body: { refreshToken: world.loginUser.refreshToken } }, 200, ['cognito-idp:InitiateAuth']);
  });

  it('GET and PATCH /auth/me', async () => {
    await expectStatus('/auth/me', o(), 200, ['dynamodb:GetItem']);
    await expectStatus('/auth/me', { method: 'PATCH', ...o(), body: { firstName: 'Ada' } }, 200);
  });

  it('verify-email, resend-verification, forgot-password, reset-password, change-password', async () => {
    await expectStatus('/auth/verify-email', { method: 'POST', body: { token: world.verifyToken } }, 200);
    await expectStatus('/auth/resend-verification', { method: 'POST', token: world.resendUser.token }, 202, ['ses:SendEmail']);
    await expectStatus('/auth/forgot-password', { method: 'POST', body: { email: world.loginUser.email } }, 202, ['ses:SendEmail']);
    await expectStatus('/auth/reset-password', { method: 'POST', body: { token: world.resetToken, password: `${PASSWORD}x` } }, 204, [
      'cognito-idp:AdminSetUserPassword',
      'cognito-idp:AdminUserGlobalSignOut',
    ]);
    await expectStatus(
      '/auth/change-password',
      { method: 'POST', token: world.changeUser.token, body: { currentPassword: PASSWORD, newPassword: `${PASSWORD}y` } },
      204,
      ['cognito-idp:AdminSetUserPassword'],
    );
  });

  it("ingest keys: create, list, delete; the reporter's block list (ingest key)", async () => {
    await expectStatus('/ingest-keys', { method: 'POST', ...o(), body: { name: 'from the artifact' } }, 201, ['dynamodb:TransactWriteItems']);
    await expectStatus('/ingest-keys', o(), 200);
    await expectStatus(`/ingest-keys/${world.keyToDelete}`, { method: 'DELETE', ...o() }, 204);
    const { res } = await expectStatus('/ingest/blocks', { headers: { 'x-api-key': world.ingestKey } }, 200, ['dynamodb:Query']);
    expect(res.body).toEqual({ blocked: [], refreshAfterSeconds: expect.any(Number) });
  });

  it('POST /ingest → its evaluation on the evaluation queue (SQS) → the evaluator → an alert on the alerts queue → the notifier with that SQS batch → SES', async () => {
    const { res, run } = await expectStatus(
      '/ingest',
      { method: 'POST', headers: { 'x-api-key': world.ingestKey }, body: { events: [usage(newKeyHash()), usage(world.keyHash)] } },
      200,
      ['dynamodb:TransactWriteItems', 'sqs:SendMessageBatch'],
    );
    expect(res.body).toMatchObject({ accepted: 2, duplicates: 0 });
    // Every item of every transaction was authorized on its own (PutItem/UpdateItem/…), and allowed.
    const items = run.calls.filter((c) => c.operation === 'TransactWriteItems').flatMap((c) => c.authorizations);
    expect(items.length).toBeGreaterThan(1);
    expect(items.every((a) => a.allowed && /^dynamodb:(PutItem|UpdateItem|DeleteItem|ConditionCheckItem)$/.test(a.action))).toBe(true);
    // The ingest raises nothing itself: one message, to the evaluation queue, names the key it discovered.
    expect(run.messages).toHaveLength(1);
    const evaluationArn = run.calls.find((c) => c.operation === 'SendMessageBatch')!.authorizations[0]!.resource;
    expect(evaluationArn).toMatch(/:burnrate-ConnectorEvaluationQueue[0-9A-F]+$/);
    expect(JSON.parse(run.messages[0]!.body)).toMatchObject({ source: 'ingest', spendMoved: true, discovered: [expect.objectContaining({ keyHash: expect.stringMatching(/^[0-9a-f]{64}$/) })] });
    const evaluator = await runtime.invoke('connections/evaluate', { Records: [sqsRecord(run.messages[0]!, evaluationArn)] });
    expectClean(evaluator, ['dynamodb:Query', 'sqs:SendMessageBatch']);
    expect(evaluator.invocation.result, explain(evaluator)).toEqual({ batchItemFailures: [] });
    expect(evaluator.messages).toHaveLength(1);

    const sent = evaluator.messages[0]!;
    const queueArn = evaluator.calls.find((c) => c.operation === 'SendMessageBatch')!.authorizations[0]!.resource;
    const notifier = await runtime.invoke('notify/worker', { Records: [sqsRecord(sent, queueArn)] });
    expectClean(notifier, ['dynamodb:GetItem', 'dynamodb:Query', 'ses:SendEmail']);
    expect(notifier.invocation.result, explain(notifier)).toEqual({ batchItemFailures: [] });
    // One message per verified user of the account (the owner and the members who accepted), from our sender.
    expect(notifier.emails.map((e) => e.Destination.ToAddresses[0])).toContain(world.owner.email);
    expect(notifier.emails.every((e) => e.FromEmailAddress === 'alerts@example.com')).toBe(true);
  });

  it('the sweeper, on its schedule: Query of the sparse index, the lost alert back on the queue', async () => {
    const run = await runtime.invoke('notify/sweep', scheduledEvent('AlertSweepSchedule'));
    expectClean(run, ['dynamodb:Query', 'sqs:SendMessageBatch']);
    expect(run.calls.find((c) => c.operation === 'Query')!.authorizations[0]!.resource).toMatch(/:table\/[^/]+\/index\/gsi2$/);
    expect(run.messages.map((m) => JSON.parse(m.body).alertId)).toContain(world.lostAlertId);
    expect((run.invocation.result as { requeued: number }).requeued).toBeGreaterThanOrEqual(1);
  });

  it('keys: list, detail, label', async () => {
    await expectStatus('/keys', o(), 200);
    await expectStatus(`/keys/${world.keyHash}`, o(), 200);
    await expectStatus(`/keys/${world.keyHash}`, { method: 'PATCH', ...o(), body: { label: 'production' } }, 200);
    // Its incident view (no anomaly: its hours and baseline all the same) and a release of no anomaly hold (409).
    await expectStatus(`/keys/${world.keyHash}/incident`, o(), 200);
    await expectStatus(`/keys/${world.keyHash}/release`, { method: 'POST', ...o() }, 409);
  });

  it('projects: list, tag (a project of no connection: 404); customers; months: list, close (the current month: 409)', async () => {
    await expectStatus('/projects', o(), 200, ['dynamodb:Query']);
    await expectStatus('/projects/con_01M8HT0ASVBMZ0J2C7XJZRRFAK/proj_none', { method: 'PATCH', ...o(), body: { tags: { team: 'search' } } }, 404);
    await expectStatus('/customers', o(), 200);
    await expectStatus('/months', o(), 200);
    await expectStatus(`/months/${new Date().toISOString().slice(0, 7)}/close`, { method: 'POST', ...o(), body: {} }, 409);
  });

  it('budgets: list, create, update, release, delete; the enforcement record', async () => {
    await expectStatus('/budgets', o(), 200);
    await expectStatus('/budgets', { method: 'POST', ...o(), body: { monthlyLimit: 50, alertThreshold: 0.5, scope: 'ACCOUNT' } }, 201);
    await expectStatus(`/budgets/${world.budgets[0]}`, { method: 'PATCH', ...o(), body: { monthlyLimit: 75 } }, 200);
    // A notify budget has nothing stopped to release: 409 not-stopped, nothing recorded.
    await expectStatus(`/budgets/${world.budgets[0]}/release`, { method: 'POST', ...o() }, 409);
    await expectStatus('/enforcement-actions', o(), 200, ['dynamodb:Query']);
    await expectStatus(`/budgets/${world.budgets[1]}`, { method: 'DELETE', ...o() }, 204);
  });

  it('alert rules: list, create, update, delete; alerts: list, acknowledge', async () => {
    await expectStatus('/alert-rules', o(), 200);
    await expectStatus('/alert-rules', { method: 'POST', ...o(), body: { type: 'spend_spike', name: 'Spike', config: { multiplier: 3, minSpend: 2 }, channels: ['email'], isActive: true } }, 201);
    await expectStatus(`/alert-rules/${world.rules[0]}`, { method: 'PATCH', ...o(), body: { name: 'Renamed' } }, 200);
    await expectStatus(`/alert-rules/${world.rules[1]}`, { method: 'DELETE', ...o() }, 204);
    await expectStatus('/alerts', o(), 200);
    await expectStatus(`/alerts/${world.alertId}/acknowledge`, { method: 'PATCH', ...o() }, 200);
    await expectStatus('/alerts?type=new_key', o(), 200);
    await expectStatus('/alerts/acknowledge', { method: 'POST', ...o(), body: { all: true } }, 200);
  });

  it('webhook secret: read, rotate', async () => {
    await expectStatus('/webhook-secret', o(), 200);
    await expectStatus('/webhook-secret/rotate', { method: 'POST', ...o() }, 200);
  });

  it('billing: status, checkout and portal (Secrets Manager, then the Stripe stand-in)', async () => {
    await expectStatus('/billing/status', o(), 200);
    const checkout = await expectStatus('/billing/checkout', { method: 'POST', token: world.checkoutUser.token, body: { plan: 'GROWTH' } }, 201, [
      'secretsmanager:GetSecretValue',
    ]);
    // The partial ARN of the template was authorized as the secret's full ARN, which `-??????` must match.
    expect(checkout.run.calls.find((c) => c.service === 'secretsmanager')!.authorizations[0]!.resource).toMatch(/:secret:burnrate\/stripe-AbC123$/);
    await expectStatus('/billing/portal', { method: 'POST', token: world.portalUser.token }, 201, ['secretsmanager:GetSecretValue']);
  });

  it('the Stripe webhook, through API Gateway and as a Function URL event (base64 body)', async () => {
    // Our own price (the template's STRIPE_PRICE_SCALE): the upgrade is applied, not `ignored`. The second event
    // updates the same subscription, as a Function URL delivery.
    const subscription = subscriptionObject({ accountId: world.webhookUser.accountId, price: LOCAL_STRIPE_PRICES.SCALE, start: nowSeconds() - 60 });
    const payload = JSON.stringify(stripeEvent('customer.subscription.updated', subscription, nowSeconds() - 30));
    const viaApi = await expectStatus(
      '/billing/webhook',
      { method: 'POST', rawBody: payload, headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(payload) } },
      200,
      ['secretsmanager:GetSecretValue', 'dynamodb:TransactWriteItems'],
    );
    expect(viaApi.res.body).toEqual({ received: true });

    const second = JSON.stringify(stripeEvent('customer.subscription.updated', subscription));
    const now = new Date();
    const urlEvent = {
      version: '2.0',
      routeKey: '$default',
      rawPath: '/',
      rawQueryString: '',
      headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(second), host: 'abc123.lambda-url.us-east-1.on.aws', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
      requestContext: {
        accountId: 'anonymous',
        apiId: 'abc123',
        domainName: 'abc123.lambda-url.us-east-1.on.aws',
        domainPrefix: 'abc123',
        http: { method: 'POST', path: '/', protocol: 'HTTP/1.1', sourceIp: '3.18.12.63', userAgent: 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
        requestId: randomUUID(),
        routeKey: '$default',
        stage: '$default',
        time: now.toUTCString(),
        timeEpoch: now.getTime(),
      },
      body: Buffer.from(second).toString('base64'),
      isBase64Encoded: true,
    };
    const run = await runtime.invoke('billing/webhook', urlEvent);
    expectClean(run, ['dynamodb:TransactWriteItems']);
    const result = run.invocation.result as { statusCode: number; body: string };
    expect(result.statusCode, explain(run)).toBe(200);
    expect(JSON.parse(result.body)).toEqual({ received: true });
    const status = await ok('/billing/status', { token: world.webhookUser.token });
    expect(status).toMatchObject({ plan: 'SCALE', billingStatus: 'ACTIVE' });
  });

  it('users: list, change a role, remove one (its identity too)', async () => {
    await expectStatus('/users', o(), 200);
    await expectStatus(`/users/${world.members[0]}`, { method: 'PATCH', ...o(), body: { role: 'viewer' } }, 200);
    await expectStatus(`/users/${world.members[1]}`, { method: 'DELETE', ...o() }, 204, ['cognito-idp:AdminDeleteUser', 'dynamodb:TransactWriteItems']);
  });

  it('invitations: create (e-mail), list, delete, the invitation page, accept', async () => {
    await expectStatus('/invitations', { method: 'POST', ...o(), body: { email: uniqueEmail('artifact-invite'), role: 'member' } }, 201, ['ses:SendEmail', 'dynamodb:TransactWriteItems']);
    await expectStatus('/invitations', o(), 200);
    await expectStatus(`/invitations/${world.invitationToDelete}`, { method: 'DELETE', ...o() }, 204);
    await expectStatus(`/auth/invitation?token=${world.acceptToken}`, {}, 200, ['dynamodb:BatchGetItem']);
    await expectStatus('/auth/accept-invitation', { method: 'POST', body: { token: world.acceptToken, password: PASSWORD, firstName: 'Ann', lastName: 'Viewer' } }, 201, [
      'cognito-idp:AdminCreateUser',
    ]);
  });

  it('spend and its export (Query on gsi1 by the index ARN)', async () => {
    await expectStatus('/spend', o(), 200);
    const { run } = await expectStatus('/spend/export', o(), 200, ['dynamodb:Query']);
    expect(run.calls.flatMap((c) => c.authorizations).some((a) => /\/index\/gsi1$/.test(a.resource))).toBe(true);
  });

  it('asynchronous export: POST queues a job (SQS) → the worker with that SQS record (Query gsi1, S3 upload) → GET signs a link', async () => {
    // An account of its own: the file is compared with the synchronous export, which concurrent tests must not change.
    const user = await registerUser({ password: PASSWORD });
    const ingestKey = await ok('/ingest-keys', { method: 'POST', token: user.token, body: {} });
    await ok('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey.key }, body: { events: [usage(newKeyHash()), usage(newKeyHash())] } });
    const started = await expectStatus('/spend/exports', { method: 'POST', token: user.token, body: {} }, 202, ['dynamodb:TransactWriteItems', 'sqs:SendMessage']);
    expect(started.res.body.status).toBe('running');
    expect(started.run.messages).toHaveLength(1);
    const sent = started.run.messages[0]!;
    const queueArn = started.run.calls.find((c) => c.operation === 'SendMessage')!.authorizations[0]!.resource;
    expect(queueArn).toMatch(/:burnrate-ExportsJobs[0-9A-F]+$/);

    const worker = await runtime.invoke('spend/export-worker', { Records: [sqsRecord(sent, queueArn)] });
    expectClean(worker, ['dynamodb:GetItem', 'dynamodb:Query', 's3:PutObject', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']);
    expect(worker.invocation.result, explain(worker)).toEqual({ batchItemFailures: [] });
    // The rows through the spend index (gsi1); the settled days and connections from the account's own partition.
    const queried = worker.calls.filter((c) => c.service === 'dynamodb' && c.operation === 'Query').map((c) => c.authorizations[0]!.resource);
    expect(queried.some((r) => /\/index\/gsi1$/.test(r))).toBe(true);
    expect(queried.every((r) => /:table\/burnrate(\/index\/gsi1)?$/.test(r)), queried.join(', ')).toBe(true);
    expect(worker.objects.size, explain(worker)).toBe(1);
    const [objectKey, object] = [...worker.objects][0]!;
    expect(objectKey).toMatch(new RegExp(`^burnrate-exportsfiles[0-9a-f]+/exports/${user.accountId}/${started.res.body.id}\\.csv\\.gz$`));
    expect(object.headers['content-type']).toBe('application/gzip');
    const sync = await api(`/spend/export?from=${started.res.body.from}&to=${started.res.body.to}`, { token: user.token });
    expect(gunzipSync(object.body).toString('utf8')).toBe(sync.body);

    const { res, run } = await expectStatus(`/spend/exports/${started.res.body.id}`, { token: user.token }, 200);
    expect(res.body).toMatchObject({ status: 'ready', rows: 2, bytes: object.body.length });
    // A pre-signed GetObject of that very object, for 1 hour, signed by a role that may read it (no call made).
    const url = new URL(res.body.url);
    expect(decodeURIComponent(url.pathname.slice(1))).toBe(objectKey);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(run.calls.filter((c) => c.service === 's3')).toEqual([]);
    const [bucket, ...key] = objectKey.split('/');
    const signer = runtime.statements('spend/exports-get');
    const read = authorizationsFor('s3', 'GetObject', { Bucket: bucket, Key: key.join('/') }, { region: stack().region, accountId: ACCOUNT_ID, secrets: [], sesIdentities: [] });
    expect(read !== 'public' && read.every((a) => evaluate(signer, a).allowed)).toBe(true);
  });

  it('own prices: list, set, delete', async () => {
    await expectStatus('/prices', o(), 200);
    await expectStatus('/prices/anthropic/artifact-model', { method: 'PUT', ...o(), body: { input: 3, output: 15 } }, 200);
    await expectStatus('/prices/openai/artifact-model', { method: 'DELETE', ...o() }, 204);
  });

  it('provider connections: create (the key checked with the stand-in, sealed by KMS) → the dispatcher (gsi2, SQS) → the worker with that record (KMS Decrypt) → keys and spend equal the organization\'s usage; get, list, rotate, sync now, reconciliation, delete', async () => {
    // An organization of the OpenAI admin stand-in of its own, its clock frozen (no growth while the test runs): a
    // small one (3 keys × 2 models × 3 days), as what is exercised here is the artifacts' plumbing; the sync's
    // exactness on the richly seeded organizations is connections.test.ts's.
    const org = await newStandInOrg('openai', { big: { keys: 3, models: 2, days: 3 }, now: new Date().toISOString(), late: null });
    try {
      // An account of its own (the others ingest OpenAI events, which a connection would refuse), on a plan whose
      // limits the seeded organization stays under.
      const user = await registerUser({ password: PASSWORD });
      await setPlan(user.accountId, 'SCALE');
      const t = { token: user.token };
      const [keyArn] = runtime.kms.keyArns;

      const created = await expectStatus('/connections', { method: 'POST', ...t, body: { provider: 'openai', adminKey: org.adminKey } }, 201, [
        'kms:Encrypt',
        'dynamodb:TransactWriteItems',
        'sqs:SendMessageBatch',
      ]);
      const id = created.res.body.id as string;
      const context = { accountId: user.accountId, connectionId: id };
      const encrypt = created.run.calls.find((c) => c.service === 'kms')!;
      expect(encrypt.input).toMatchObject({ KeyId: keyArn, EncryptionContext: context });
      expect(encrypt.authorizations[0]!.resource).toBe(keyArn);
      // Created and queued at once, on the OpenAI connections' sync queue; the message names the provider.
      const message = { ...context, provider: 'openai' };
      expect(created.run.messages.map((m) => JSON.parse(m.body))).toEqual([message]);

      // What DynamoDB holds: the admin key sealed under a data key that KMS wrapped (the very blob Encrypt returned,
      // not the local AES format), with no trace of the key's text; the blob opens only with this connection's context.
      const item = (await db().send(new GetCommand({ TableName: stack().tableName, Key: keys.connection(user.accountId, id), ConsistentRead: true }))).Item!;
      expect(item.secret.wrap).toBe('kms');
      expect(item.secret.wrappedKey).toBe(encrypt.output!.CiphertextBlob);
      expect(JSON.stringify(item)).not.toContain(org.adminKey);
      const unwrap = (ctx: typeof context) => runtime.kms.handle('Decrypt', { CiphertextBlob: item.secret.wrappedKey, EncryptionContext: ctx });
      expect(Buffer.from(String(unwrap(context).body.Plaintext), 'base64')).toHaveLength(32);
      expect(unwrap({ ...context, connectionId: world.owner.accountId.replace('br_', 'con_') }).body.__type).toBe('InvalidCiphertextException');
      expect(unwrap({ ...context, accountId: world.owner.accountId }).body.__type).toBe('InvalidCiphertextException');

      // The dispatcher on its schedule: due connections from the sparse index, ours among the messages it queues.
      const dispatch = await runtime.invoke('connections/dispatch', scheduledEvent('ConnectorDispatchSchedule'));
      expectClean(dispatch, ['dynamodb:Query', 'sqs:SendMessageBatch']);
      expect(dispatch.calls.filter((c) => c.operation === 'Query').every((c) => /\/index\/gsi2$/.test(c.authorizations[0]!.resource))).toBe(true);
      const queued = dispatch.messages.find((m) => JSON.parse(m.body).connectionId === id);
      expect(queued, explain(dispatch)).toBeDefined();
      expect(JSON.parse(queued!.body)).toEqual(message);
      const queueArn = dispatch.calls.find((c) => c.operation === 'SendMessageBatch' && c.input && JSON.stringify(c.input).includes(id))!.authorizations[0]!.resource;
      expect(queueArn).toMatch(/:burnrate-ConnectorSyncQueueOpenAI[0-9A-F]+$/);

      // The worker with that SQS record. (The local stack's own dispatcher may hold the connection's lease for a
      // moment: a "busy" run leaves the sync to the holder, so ask again, as the next message would.)
      let worker!: Run;
      for (let attempt = 0; attempt < 3; attempt++) {
        worker = await runtime.invoke('connections/worker-openai', { Records: [sqsRecord(queued!, queueArn)] });
        if (logged(worker, 'connection synced')[0]?.status !== 'busy') break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expectClean(worker, ['kms:Decrypt', 'dynamodb:GetItem', 'dynamodb:Query', 'sqs:SendMessageBatch']);
      // One record per invocation (batch size 1): it succeeded when the handler returned without throwing.
      expect(worker.invocation.ok, explain(worker)).toBe(true);
      expect(logged(worker, 'connection synced'), explain(worker)).toMatchObject([{ connectionId: id, status: 'done' }]);
      // The other providers' workers, each with a message of its own provider's queue: a connection that is gone is
      // skipped (nothing to sync, no lever held), without opening any key.
      for (const provider of ['anthropic', 'openrouter'] as const) {
        const gone = { accountId: user.accountId, connectionId: id.replace(/.$/, (c) => (c === 'Z' ? 'Y' : 'Z')), provider };
        const name = `connections/worker-${provider}` as const;
        const other = await runtime.invoke(name, { Records: [sqsRecord({ ...queued!, body: JSON.stringify(gone) }, queueArn.replace('OpenAI', provider === 'anthropic' ? 'Anthropic' : 'OpenRouter'))] });
        expect(other.invocation.ok, explain(other)).toBe(true);
        expect(logged(other, 'connection synced'), explain(other)).toMatchObject([{ connectionId: gone.connectionId, status: 'skipped' }]);
        expect(other.calls.filter((c) => c.service === 'kms')).toEqual([]);
      }
      const decrypt = worker.calls.filter((c) => c.service === 'kms');
      expect(decrypt.map((c) => [c.operation, c.status, c.input.KeyId, c.input.EncryptionContext, c.authorizations[0]!.resource])).toEqual([['Decrypt', 200, keyArn, context, keyArn]]);

      // The limits pass, on the OpenAI limits queue (FIFO: the connection's message group) → the limits function with
      // that record: it opens the admin key itself, with the same context, and runs the budgets' pass.
      const limitsSend = worker.calls.find((c) => c.operation === 'SendMessageBatch' && /:burnrate-ConnectorLimitsQueueOpenAI[0-9A-F]+$/.test(c.authorizations[0]!.resource));
      expect(limitsSend, explain(worker)).toBeDefined();
      const pass = worker.messages.find((m) => m.queueUrl.includes('ConnectorLimitsQueueOpenAI'))!;
      expect(JSON.parse(pass.body)).toMatchObject({ ...context, provider: 'openai', at: expect.any(String), grown: expect.any(Array) });
      expect(pass.groupId).toBe(id);
      expect(pass.deduplicationId).toBe(`${id}:${JSON.parse(pass.body).at}:0`);
      const limitsRecord = (sent: typeof pass, arn: string) => ({ ...sqsRecord(sent, arn), attributes: { ...sqsRecord(sent, arn).attributes, MessageGroupId: sent.groupId ?? '', MessageDeduplicationId: sent.deduplicationId ?? '' } });
      const limitsArn = limitsSend!.authorizations[0]!.resource;
      const limits = await runtime.invoke('connections/limits-openai', { Records: [limitsRecord(pass, limitsArn)] });
      expectClean(limits, ['kms:Decrypt', 'dynamodb:GetItem', 'dynamodb:Query']);
      expect(limits.invocation.result, explain(limits)).toEqual({ batchItemFailures: [] });
      expect(logged(limits, 'limits pass done'), explain(limits)).toMatchObject([{ connectionId: id, outcome: 'enforced' }]);
      expect(limits.calls.filter((c) => c.service === 'kms').map((c) => [c.operation, c.status, c.input.EncryptionContext])).toEqual([['Decrypt', 200, context]]);
      // The other providers' limits functions, each with a pass of a connection that is gone: nothing held, nothing opened.
      for (const provider of ['anthropic', 'openrouter'] as const) {
        const gone = { accountId: user.accountId, connectionId: id.replace(/.$/, (c) => (c === 'Z' ? 'Y' : 'Z')), provider, at: new Date().toISOString(), grown: [] };
        const name = `connections/limits-${provider}` as const;
        const sent = { ...pass, body: JSON.stringify(gone), groupId: gone.connectionId };
        const other = await runtime.invoke(name, { Records: [limitsRecord(sent, limitsArn.replace('OpenAI', provider === 'anthropic' ? 'Anthropic' : 'OpenRouter'))] });
        expect(other.invocation.result, explain(other)).toEqual({ batchItemFailures: [] });
        expect(logged(other, 'limits pass done'), explain(other)).toMatchObject([{ connectionId: gone.connectionId, outcome: 'released' }]);
        expect(other.calls.filter((c) => c.service === 'kms')).toEqual([]);
      }

      // What the sync calls for in alerts, on the evaluation queue → the evaluator with that record (no KMS): the
      // new_key rule names the organization's keys.
      const evaluationSend = worker.calls.find((c) => c.operation === 'SendMessageBatch' && /:burnrate-ConnectorEvaluationQueue[0-9A-F]+$/.test(c.authorizations[0]!.resource));
      expect(evaluationSend, explain(worker)).toBeDefined();
      const evaluation = worker.messages.find((m) => JSON.parse(m.body).connectionId === id && 'spendMoved' in JSON.parse(m.body))!;
      expect(JSON.parse(evaluation.body)).toMatchObject({ accountId: user.accountId, connectionId: id, spendMoved: true, discovered: expect.any(Array) });
      const evaluator = await runtime.invoke('connections/evaluate', { Records: [sqsRecord(evaluation, evaluationSend!.authorizations[0]!.resource)] });
      expectClean(evaluator, ['dynamodb:Query']);
      expect(evaluator.invocation.result, explain(evaluator)).toEqual({ batchItemFailures: [] });
      expect(evaluator.calls.some((c) => c.service === 'kms')).toBe(false);

      // Keys and spend equal the organization's usage (the stand-in's truth over the imported range), per key.
      const [truth, state] = await Promise.all([org.control('/truth?detail=totals'), org.state()]);
      const hashOf = (keyId: string) => sha256(`openai:${keyId === 'null' ? 'unattributed' : keyId}`);
      const expected = Object.fromEntries(
        Object.entries(truth.byKey as Record<string, Record<string, number>>).map(([keyId, m]) => [
          hashOf(keyId),
          { requests: m.requests ?? 0, inputTokens: (m.uncached ?? 0) + (m.cached ?? 0) + (m.cacheWrite ?? 0) + (m.input ?? 0), cachedInputTokens: m.cached ?? 0, outputTokens: m.output ?? 0 },
        ]),
      );
      expect(Object.keys(expected)).toHaveLength(3);
      const today = new Date().toISOString().slice(0, 10);
      const spend = await ok(`/spend?from=${truth.from}&to=${today}&groupBy=key`, t);
      const imported = Object.fromEntries(
        (spend.groups as Record<string, any>[]).map((g) => [g.hash, { requests: g.requests, inputTokens: g.inputTokens, cachedInputTokens: g.cachedInputTokens, outputTokens: g.outputTokens }]),
      );
      expect(imported).toEqual(expected);
      expect(spend.total.costUsd).toBeGreaterThan(0);
      const listed = await ok('/keys?source=connection&limit=100', t);
      const listedIds = new Set((listed.items as { providerKeyId: string | null }[]).map((k) => k.providerKeyId));
      for (const key of (state.keys as { id: string; status: string }[]).filter((k) => k.status !== 'deleted')) expect(listedIds.has(key.id), key.id).toBe(true);

      // The rest of the connection's routes, through their artifacts.
      const got = await expectStatus(`/connections/${id}`, t, 200, ['dynamodb:GetItem']);
      expect(got.res.body).toMatchObject({ id, status: 'active', lastSuccessAt: expect.any(String) });
      expect(JSON.stringify(got.res.body)).not.toContain(org.adminKey);
      await expectStatus('/connections', t, 200, ['dynamodb:Query']);
      const { adminKey: rotatedKey } = await org.control('/admin-key', { rotate: true });
      const rotated = await expectStatus(`/connections/${id}`, { method: 'PATCH', ...t, body: { adminKey: rotatedKey, name: 'Rotated' } }, 200, ['kms:Encrypt']);
      expect(rotated.run.calls.find((c) => c.service === 'kms')!.input.EncryptionContext).toEqual(context);
      expect(rotated.res.body).toMatchObject({ name: 'Rotated', keyHint: rotatedKey.slice(-4) });
      const resealed = (await db().send(new GetCommand({ TableName: stack().tableName, Key: keys.connection(user.accountId, id), ConsistentRead: true }))).Item!;
      expect(resealed.secret).toMatchObject({ wrap: 'kms', wrappedKey: rotated.run.calls.find((c) => c.service === 'kms')!.output!.CiphertextBlob });
      const now = await expectStatus(`/connections/${id}/sync`, { method: 'POST', ...t }, 202, ['sqs:SendMessageBatch']);
      expect(now.run.messages.map((m) => JSON.parse(m.body))).toEqual([{ ...context, provider: 'openai' }]);
      const recon = await expectStatus(`/connections/${id}/reconciliation?from=${today}&to=${today}`, t, 200, ['dynamodb:Query']);
      expect(recon.res.body.days).toHaveLength(1);
      await expectStatus(`/connections/${id}`, { method: 'DELETE', ...t }, 204);
      expect((await db().send(new GetCommand({ TableName: stack().tableName, Key: keys.connection(user.accountId, id), ConsistentRead: true }))).Item).toBeUndefined();

      // Only the worker and the limits function unwrapped: the functions that seal may Encrypt, never Decrypt (their
      // policies say so too).
      const kmsCalls = runtime.runs.flatMap((r) => r.calls.filter((c) => c.service === 'kms').map((c) => `${r.artifact.fn.name} ${c.operation}`));
      expect(kmsCalls.filter((c) => c.endsWith('Decrypt'))).toEqual(['connections/worker-openai Decrypt', 'connections/limits-openai Decrypt']);
      const decryptRequest = { action: 'kms:Decrypt', resource: keyArn!, context: { 'kms:EncryptionContextKeys': ['accountId', 'connectionId'], 'kms:EncryptionContext:accountId': context.accountId, 'kms:EncryptionContext:connectionId': id } };
      for (const fn of ['connections/create', 'connections/update']) expect(evaluate(runtime.statements(fn), decryptRequest).allowed, fn).toBe(false);
      expect(evaluate(runtime.statements('connections/worker-openai'), decryptRequest).allowed).toBe(true);
      expect(evaluate(runtime.statements('connections/limits-openai'), decryptRequest).allowed).toBe(true);
    } finally {
      await org.remove();
    }
  });
});

describe('coverage', () => {
  it('every function ran at least once, and no run was denied, crashed or logged an error', () => {
    const ran = new Set(runtime.runs.map((r) => r.artifact.fn.name));
    expect(app.functions.map((f) => f.name).filter((n) => !ran.has(n))).toEqual([]);
    const broken = runtime.runs.flatMap((r) => problemsOf(r).map((p) => `${r.artifact.fn.name}: ${p}`));
    expect(broken).toEqual([]);
  });

  it('KMS: only the functions that seal admin keys encrypted, only the sync worker and its limits function decrypted', () => {
    const byOperation = (operation: string) => [...new Set(runtime.runs.filter((r) => r.calls.some((c) => c.service === 'kms' && c.operation === operation)).map((r) => r.artifact.fn.name))].sort();
    expect(byOperation('Encrypt')).toEqual(['connections/create', 'connections/update']);
    expect(byOperation('Decrypt')).toEqual(['connections/limits-openai', 'connections/worker-openai']);
  });
});
