/**
 * CDK assertions on the asynchronous exports of BurnrateStack (infra/exports.ts): the files bucket, the job queue and
 * its dead-letter queue, the worker, and exactly the grants of the routes that queue jobs and sign download links.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '#infra/app.ts';
import { EXPORT_WORKER_TIMEOUT, EXPORTS_MAX_RECEIVE_COUNT } from '#infra/exports.ts';
import { routeId, routes } from '#shared/routes.ts';
import { EXPORT_LEASE_MS } from '#shared/spend/exports.ts';
import { asList, DEPLOY_CONTEXT, props, refId, roleStatements, ROOT, statementsIn, type Resource, type Statement } from './template.ts';

let outdir: string;
let stack: ReturnType<typeof buildApp>['stack'];
let resources: Record<string, Resource>;

const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);
const bucketId = () => logicalId(stack.exports.bucket);
const queueId = () => logicalId(stack.exports.queue);
const dlqId = () => logicalId(stack.exports.deadLetterQueue);
const workerId = () => logicalId(stack.exports.worker.function);
const routeFunctionId = (handler: string) => logicalId(stack.functions.get(routeId(routes.find((r) => r.handler === handler)!))!.function);

/** The statements of a function's role (inline and attached policies), without the log group's. */
function grantsOf(functionId: string): Statement[] {
  const roleId = refId(props(resources[functionId]!).Role)!;
  return roleStatements(resources, roleId).filter((s) => !asList(s.Action).some((a) => a.startsWith('logs:')));
}
const objectsArn = () => ({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId(), 'Arn'] }, '/exports/*']] });

beforeAll(() => {
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  outdir = mkdtempSync(join(ROOT, '.test-data', 'cdk.out-'));
  ({ stack } = buildApp({ app: { context: { 'aws:cdk:bundling-stacks': [], ...DEPLOY_CONTEXT }, outdir } }));
  resources = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
}, 60_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('the export files bucket', () => {
  it('is private, encrypted, SSL-only, without ACLs, logged beside the dashboard, emptied after a day, and retained', () => {
    const bucket = resources[bucketId()]!;
    expect(bucket.Type).toBe('AWS::S3::Bucket');
    const p = props(bucket);
    expect(p.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(p.BucketEncryption).toEqual({ ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] });
    expect(p.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    expect(refId(p.LoggingConfiguration.DestinationBucketName)).toMatch(/^DashboardLogs/);
    expect(p.LoggingConfiguration.LogFilePrefix).toBe('exports/');
    expect(p.LifecycleConfiguration.Rules).toEqual([
      { Prefix: 'exports/', ExpirationInDays: 1, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
    ]);
    expect(bucket.DeletionPolicy).toBe('Retain');
    const policy = Object.values(resources).find((r) => r.Type === 'AWS::S3::BucketPolicy' && refId(props(r).Bucket) === bucketId())!;
    const statements = statementsIn(props(policy).PolicyDocument);
    // Only the SSL-only deny: no principal is granted anything by the bucket itself.
    expect(statements.map((s) => s.Effect)).toEqual(['Deny']);
    expect(JSON.stringify(statements[0])).toContain('"aws:SecureTransport":"false"');
  });
});

describe('the job queue', () => {
  it('is encrypted and SSL-only with a dead-letter queue after 2 receives (kept 14 days, alarmed), visible again after 6× the worker timeout', () => {
    const queue = props(resources[queueId()]!);
    expect(refId(queue.RedrivePolicy.deadLetterTargetArn)).toBe(dlqId());
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(EXPORTS_MAX_RECEIVE_COUNT);
    expect(queue.VisibilityTimeout).toBe(6 * EXPORT_WORKER_TIMEOUT.toSeconds());
    expect(props(resources[dlqId()]!).MessageRetentionPeriod).toBe(14 * 24 * 3600);
    for (const id of [queueId(), dlqId()]) {
      expect(props(resources[id]!).SqsManagedSseEnabled, id).toBe(true);
      const policy = Object.values(resources).find((r) => r.Type === 'AWS::SQS::QueuePolicy' && asList(props(r).Queues).some((q) => refId(q) === id))!;
      expect(JSON.stringify(props(policy).PolicyDocument), id).toContain('"aws:SecureTransport":"false"');
    }
    const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm' && JSON.stringify(props(r).Dimensions).includes(dlqId()));
    expect(alarms).toHaveLength(1);
    expect(props(alarms[0]!)).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });
});

describe('the export worker', () => {
  it('is fed one job at a time, at most 5 at once, reporting batch item failures', () => {
    const mappings = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && refId(props(r).FunctionName) === workerId());
    expect(mappings).toHaveLength(1);
    const p = props(mappings[0]!);
    expect(refId(p.EventSourceArn)).toBe(queueId());
    expect(p.BatchSize).toBe(1);
    expect(p.ScalingConfig).toEqual({ MaximumConcurrency: 5 });
    expect(p.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('runs functions/spend/export-worker.ts on nodejs22.x / arm64, 1 GB, 15 minutes (less than the lease), with the bucket name', () => {
    expect(stack.exports.worker.entry).toMatch(/functions\/spend\/export-worker\.ts$/);
    const p = props(resources[workerId()]!);
    expect(p).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: 1024, Timeout: 900 });
    expect(p.Timeout * 1000).toBeLessThan(EXPORT_LEASE_MS);
    expect(refId(p.Environment.Variables.EXPORTS_BUCKET)).toBe(bucketId());
    expect(p.Environment.Variables.EXPORTS_QUEUE_URL).toBeUndefined();
  });

  it('may read and settle exports, and write (never read) the export objects of its bucket — nothing else', () => {
    const grants = grantsOf(workerId());
    const dynamo = grants.filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));
    expect(new Set(dynamo.flatMap((s) => asList(s.Action)))).toEqual(new Set(['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query']));
    const s3 = grants.filter((s) => asList(s.Action).some((a) => a.startsWith('s3:')));
    expect(s3).toHaveLength(1);
    expect(new Set(asList(s3[0]!.Action))).toEqual(new Set(['s3:PutObject', 's3:AbortMultipartUpload']));
    expect(s3[0]!.Resource).toEqual(objectsArn());
    // Receiving from its queue (the event source mapping's grant); it sends nowhere.
    const sqs = grants.filter((s) => asList(s.Action).some((a) => a.startsWith('sqs:')));
    expect(sqs.flatMap((s) => asList(s.Action))).not.toContain('sqs:SendMessage');
    for (const s of sqs) expect(refId(s.Resource)).toBe(queueId());
    expect(grants.length).toBe(dynamo.length + s3.length + sqs.length);
  });
});

describe('the routes', () => {
  it('POST /spend/exports alone may send to the job queue (with its URL in its env)', () => {
    for (const route of routes) {
      const id = logicalId(stack.functions.get(routeId(route))!.function);
      const sends = grantsOf(id).filter((s) => asList(s.Action).includes('sqs:SendMessage') && refId(s.Resource) === queueId());
      const env = props(resources[id]!).Environment.Variables as Record<string, unknown>;
      if (route.queuesExports) {
        expect(sends, route.handler).toHaveLength(1);
        expect(refId(env.EXPORTS_QUEUE_URL), route.handler).toBe(queueId());
      } else {
        expect(sends, route.handler).toEqual([]);
        expect(env.EXPORTS_QUEUE_URL, route.handler).toBeUndefined();
      }
    }
    expect(routes.filter((r) => r.queuesExports).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /spend/exports']);
  });

  it('GET /spend/exports/{id} alone may read the export objects (it signs the download links with its own rights)', () => {
    const readers = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .filter(([id]) => grantsOf(id).some((s) => asList(s.Action).includes('s3:GetObject') && JSON.stringify(s.Resource).includes(bucketId())))
      .map(([id]) => id);
    expect(readers).toEqual([routeFunctionId('spend/exports-get')]);
    const read = grantsOf(routeFunctionId('spend/exports-get')).filter((s) => asList(s.Action).some((a) => a.startsWith('s3:')));
    expect(read).toHaveLength(1);
    expect(asList(read[0]!.Action)).toEqual(['s3:GetObject']);
    expect(read[0]!.Resource).toEqual(objectsArn());
    expect(refId((props(resources[routeFunctionId('spend/exports-get')]!).Environment.Variables as Record<string, unknown>).EXPORTS_BUCKET)).toBe(bucketId());
  });
});
