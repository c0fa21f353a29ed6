/**
 * The artifact test's IAM check over the REAL synthesized template: the requests our functions make are allowed
 * by their own role, and taking one statement out of a role (or asking for something it was never given) denies
 * them — so a grant missing from infra fails the artifact test (test/integration/artifacts.test.ts) instead of
 * the first request in AWS.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_STRIPE_PRICES } from '#local/stripe-mock.ts';
import { localValues, resolveStatements, synthesize, type SynthesizedApp } from '../artifacts/cfn.ts';
import { evaluate, type PolicyStatement } from '../artifacts/iam.ts';
import { authorizationsFor, type ProxyEnvironment, type Service } from '../artifacts/proxy.ts';
import { DEPLOY_CONTEXT } from './template.ts';

const STRIPE_SECRET = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:burnrate/stripe-AbC123';
const env: ProxyEnvironment = {
  region: 'us-east-1',
  accountId: '000000000000',
  secrets: [
    { name: 'burnrate/stripe', arn: STRIPE_SECRET, value: '{}' },
    { name: 'other/secret', arn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:other/secret-XyZ789', value: '{}' },
  ],
  sesIdentities: ['example.com'],
};

let app: SynthesizedApp;
let policies: Map<string, PolicyStatement[]>;

beforeAll(() => {
  app = synthesize({ ...DEPLOY_CONTEXT, stripePriceGrowth: LOCAL_STRIPE_PRICES.GROWTH, stripePriceScale: LOCAL_STRIPE_PRICES.SCALE });
  const local = localValues(app.template, {
    region: env.region,
    accountId: env.accountId,
    tableName: 'burnrate',
    userPoolId: 'us-east-1_Pool',
    userPoolClientId: 'client',
    sqsEndpoint: 'http://127.0.0.1:1',
    templateSecrets: {},
    externalSecrets: env.secrets,
  });
  policies = new Map(app.functions.map((f) => [f.name, resolveStatements(f.statements, local)]));
});

/** Every authorization of the request, decided by `fn`'s role (or by `statements` given instead). */
function decide(fn: string, service: Service, operation: string, input: Record<string, any>, statements = policies.get(fn)!) {
  const needed = authorizationsFor(service, operation, input, env);
  if (needed === 'public') return [];
  return needed.map((request) => ({ ...request, ...evaluate(statements, request) }));
}
const allowed = (decisions: { allowed: boolean }[]) => decisions.length > 0 && decisions.every((d) => d.allowed);

/** The statements of `fn` without the one that grants `action` (the defect: that grant forgotten in infra). */
function without(fn: string, action: string): PolicyStatement[] {
  const statements = policies.get(fn)!;
  const kept = statements.filter((s) => ![s.Action].flat().includes(action));
  expect(kept.length, `${fn} has one statement granting ${action}`).toBe(statements.length - 1);
  return kept;
}

/** An ingest-key create: the key item and its hash lookup put, the keys' cap counter moved (shared/db/caps.ts). */
const CAPPED_CREATE = {
  TransactItems: [
    { Update: { TableName: 'burnrate', Key: {}, UpdateExpression: 'ADD n :one' } },
    { Put: { TableName: 'burnrate', Item: {} } },
    { Put: { TableName: 'burnrate', Item: {} } },
  ],
};

describe("the synthesized roles, checked as the artifact test's proxy checks them", () => {
  it('the cap counter transaction of a create is allowed — and denied once its DynamoDB statement is removed', () => {
    expect(allowed(decide('ingest-keys/create', 'dynamodb', 'TransactWriteItems', CAPPED_CREATE))).toBe(true);
    const broken = decide('ingest-keys/create', 'dynamodb', 'TransactWriteItems', CAPPED_CREATE, without('ingest-keys/create', 'dynamodb:PutItem'));
    expect(broken.map((d) => d.allowed)).toEqual([false, false, false]);
    expect(broken[0]!.reason).toBe('no statement allows it (implicit deny)');
  });

  it('an action a route does not declare is denied (the notifier may not delete, the sweeper may not write)', () => {
    expect(allowed(decide('notify/worker', 'dynamodb', 'DeleteItem', { TableName: 'burnrate' }))).toBe(false);
    expect(allowed(decide('notify/sweep', 'dynamodb', 'PutItem', { TableName: 'burnrate' }))).toBe(false);
    expect(allowed(decide('health/get', 'dynamodb', 'GetItem', { TableName: 'burnrate' }))).toBe(false);
  });

  it('Query on the indexes by their own ARNs; an index the table does not have is denied', () => {
    expect(allowed(decide('spend/export', 'dynamodb', 'Query', { TableName: 'burnrate', IndexName: 'gsi1' }))).toBe(true);
    expect(allowed(decide('notify/sweep', 'dynamodb', 'Query', { TableName: 'burnrate', IndexName: 'gsi2' }))).toBe(true);
    expect(allowed(decide('spend/export', 'dynamodb', 'Query', { TableName: 'burnrate', IndexName: 'gsi9' }))).toBe(false);
  });

  it("SES: our sender to any recipient (the sandbox's recipient identity too); another sender, or without the statement, denied", () => {
    const mail = (from: string) => ({ FromEmailAddress: from, Destination: { ToAddresses: ['ada@customer.org'] } });
    expect(allowed(decide('notify/worker', 'ses', 'SendEmail', mail('alerts@example.com')))).toBe(true);
    expect(allowed(decide('auth/register', 'ses', 'SendEmail', mail('Burnrate <alerts@example.com>')))).toBe(true);
    expect(allowed(decide('notify/worker', 'ses', 'SendEmail', mail('ceo@example.com')))).toBe(false);
    expect(allowed(decide('notify/worker', 'ses', 'SendEmail', mail('alerts@example.com'), without('notify/worker', 'ses:SendEmail')))).toBe(false);
    expect(allowed(decide('auth/login', 'ses', 'SendEmail', mail('alerts@example.com')))).toBe(false);
  });

  it('SQS: the functions that publish alerts may send to the alerts queue, not to its dead-letter queue; ingestion to the evaluation queue only', () => {
    const queue = (name: string) => ({ QueueUrl: `http://127.0.0.1:1/000000000000/${name}`, Entries: [] });
    const alerts = Object.keys(app.template.Resources).find((id) => id.startsWith('AlertsQueue'))!;
    const dlq = Object.keys(app.template.Resources).find((id) => id.startsWith('AlertsDeadLetterQueue'))!;
    const evaluations = Object.keys(app.template.Resources).find((id) => id.startsWith('ConnectorEvaluationQueue'))!;
    expect(allowed(decide('budgets/create', 'sqs', 'SendMessageBatch', queue(`burnrate-${alerts}`)))).toBe(true);
    expect(allowed(decide('notify/sweep', 'sqs', 'SendMessageBatch', queue(`burnrate-${alerts}`)))).toBe(true);
    expect(allowed(decide('connections/evaluate', 'sqs', 'SendMessageBatch', queue(`burnrate-${alerts}`)))).toBe(true);
    expect(allowed(decide('budgets/create', 'sqs', 'SendMessageBatch', queue(`burnrate-${dlq}`)))).toBe(false);
    expect(allowed(decide('budgets/list', 'sqs', 'SendMessageBatch', queue(`burnrate-${alerts}`)))).toBe(false);
    // POST /ingest raises no alert itself: it hands its evaluation to the evaluator's queue, and only that.
    expect(allowed(decide('ingest/post', 'sqs', 'SendMessageBatch', queue(`burnrate-${evaluations}`)))).toBe(true);
    expect(allowed(decide('ingest/post', 'sqs', 'SendMessageBatch', queue(`burnrate-${alerts}`)))).toBe(false);
  });

  it('exports: the worker writes export files only (its prefix, its bucket), the status route reads them to sign links, the start route queues jobs', () => {
    const bucket = `burnrate-${Object.keys(app.template.Resources).find((id) => id.startsWith('ExportsFiles'))!.toLowerCase()}`;
    const dashboard = `burnrate-${Object.keys(app.template.Resources).find((id) => id.startsWith('DashboardApp'))!.toLowerCase()}`;
    const object = (key: string, b = bucket) => ({ Bucket: b, Key: key });
    const file = 'exports/br_01JZ3N5Q8W4XKJ7T2M9R6V0ABC/exp_01JZ3N5Q8W4XKJ7T2M9R6V0ABC.csv.gz';
    for (const operation of ['PutObject', 'CreateMultipartUpload', 'UploadPart', 'CompleteMultipartUpload', 'AbortMultipartUpload']) {
      expect(allowed(decide('spend/export-worker', 's3', operation, object(file))), operation).toBe(true);
      expect(allowed(decide('spend/export-worker', 's3', operation, object('elsewhere/x.csv.gz'))), operation).toBe(false);
      expect(allowed(decide('spend/export-worker', 's3', operation, object(file, dashboard))), operation).toBe(false);
      expect(allowed(decide('spend/exports-get', 's3', operation, object(file))), operation).toBe(false);
    }
    expect(allowed(decide('spend/export-worker', 's3', 'GetObject', object(file)))).toBe(false);
    expect(allowed(decide('spend/exports-get', 's3', 'GetObject', object(file)))).toBe(true);
    expect(allowed(decide('spend/exports-get', 's3', 'GetObject', object('index.html', dashboard)))).toBe(false);
    expect(allowed(decide('spend/exports-get', 's3', 'GetObject', object(file), without('spend/exports-get', 's3:GetObject')))).toBe(false);
    expect(allowed(decide('spend/export', 's3', 'GetObject', object(file)))).toBe(false);

    const queue = (prefix: string) => ({ QueueUrl: `http://127.0.0.1:1/000000000000/burnrate-${Object.keys(app.template.Resources).find((id) => id.startsWith(prefix))!}`, MessageBody: '{}' });
    expect(allowed(decide('spend/exports-create', 'sqs', 'SendMessage', queue('ExportsJobs')))).toBe(true);
    expect(allowed(decide('spend/exports-create', 'sqs', 'SendMessage', queue('ExportsDeadLetterQueue')))).toBe(false);
    expect(allowed(decide('spend/exports-create', 'sqs', 'SendMessage', queue('AlertsQueue')))).toBe(false);
    expect(allowed(decide('ingest/post', 'sqs', 'SendMessage', queue('ExportsJobs')))).toBe(false);
    expect(allowed(decide('spend/exports-create', 'sqs', 'SendMessage', queue('ExportsJobs'), without('spend/exports-create', 'sqs:SendMessage')))).toBe(false);
  });

  it('Secrets Manager: the billing functions read exactly the Stripe secret (its full ARN matches `-??????`)', () => {
    expect(allowed(decide('billing/checkout', 'secretsmanager', 'GetSecretValue', { SecretId: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:burnrate/stripe' }))).toBe(true);
    expect(allowed(decide('billing/webhook', 'secretsmanager', 'GetSecretValue', { SecretId: 'burnrate/stripe' }))).toBe(true);
    expect(allowed(decide('billing/checkout', 'secretsmanager', 'GetSecretValue', { SecretId: 'other/secret' }))).toBe(false);
    expect(allowed(decide('billing/status', 'secretsmanager', 'GetSecretValue', { SecretId: 'burnrate/stripe' }))).toBe(false);
  });

  it('Cognito: admin calls only on our pool, only by the functions that declare them', () => {
    expect(allowed(decide('auth/register', 'cognito-idp', 'AdminCreateUser', { UserPoolId: 'us-east-1_Pool' }))).toBe(true);
    expect(allowed(decide('auth/register', 'cognito-idp', 'AdminCreateUser', { UserPoolId: 'us-east-1_Other' }))).toBe(false);
    expect(allowed(decide('users/list', 'cognito-idp', 'AdminDeleteUser', { UserPoolId: 'us-east-1_Pool' }))).toBe(false);
  });
});
