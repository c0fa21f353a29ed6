/**
 * cdk-nag (AwsSolutions pack) and least privilege on the synthesized BurnrateStack (bundling skipped).
 *
 * cdk-nag 3 is a CDK policy-validation plugin, not an Aspect: findings are no longer Annotations, and suppressions are
 * CDK's own `Validations.of(construct).acknowledge({id, reason})`. `validateScope(stack)` runs the pack directly and
 * returns the unacknowledged findings, errors and warnings alike; `cdk synth` runs the same pack (infra/app.ts) and
 * fails on any of them.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { PolicyValidationPluginReport, PolicyViolation } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '#infra/app.ts';
import type { BuildAppProps } from '#infra/app.ts';
import { DEFAULT_RESERVED_CONCURRENCY, SES_IDENTITY_WILDCARD_FINDING } from '#infra/burnrate-stack.ts';
import { exportObjectsFinding } from '#infra/exports.ts';
import { routeId, routes } from '#shared/routes.ts';
import { asList, DEPLOY_CONTEXT, deploymentRoleIds, props, refId, roleStatements, ROOT, statementsIn, type Resource, type Statement } from './template.ts';


const dirs: string[] = [];
let stack: ReturnType<typeof buildApp>['stack'];
let resources: Record<string, Resource>;
let report: PolicyValidationPluginReport;

/** A synth with bundling skipped, inside the project (removed after the run). */
function synth(props: Omit<BuildAppProps, 'app'> & { context?: Record<string, unknown> } = {}) {
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  const outdir = mkdtempSync(join(ROOT, '.test-data', 'cdk.out-'));
  dirs.push(outdir);
  const { context, ...rest } = props;
  return buildApp({ ...rest, app: { context: { 'aws:cdk:bundling-stacks': [], ...DEPLOY_CONTEXT, ...context }, outdir } });
}

function resourcesOf(s: typeof stack): Record<string, Resource> {
  return Template.fromStack(s).toJSON().Resources as Record<string, Resource>;
}

const allStatements = statementsIn;

/** CDK's BucketDeployment upload function (one per stack; infra/dashboard.ts), the one function not ours. */
function deploymentHandler(): IConstruct {
  const found = stack.node.children.filter((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
  expect(found).toHaveLength(1);
  return found[0]!;
}


/** The Lambda function serving `METHOD /path` (its description), by logical id. */
function functionFor(json: Record<string, Resource>, description: string): [string, Resource] {
  const found = Object.entries(json).filter(([, r]) => r.Type === 'AWS::Lambda::Function' && props(r).Description === description);
  expect(found, description).toHaveLength(1);
  return found[0]!;
}

/** `RULE: path, path` per violation, for a readable failure (cdk-nag 3 names resources by construct path). */
function describeViolations(violations: PolicyViolation[]): string[] {
  return violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath ?? r.resourceLogicalId).join(', ')}`);
}

/** Every acknowledgment recorded on a construct of the tree: rule id → reason. */
function acknowledgments(root: IConstruct): { path: string; id: string; reason: string }[] {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && m.data)
      .flatMap((m) =>
        Object.entries(m.data as Record<string, string>).map(([key, reason]) => ({
          path: c.node.path,
          // aws-cdk-lib writes `Annotation::<id>` (older versions `annotation::<id>`).
          id: key.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

beforeAll(() => {
  ({ stack } = synth());
  resources = resourcesOf(stack);
  report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(stack);
}, 60_000);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('cdk-nag AwsSolutions', () => {
  it('has no unacknowledged errors', () => {
    expect(describeViolations(report.violations.filter((v) => v.severity === 'error'))).toEqual([]);
  });

  it('has no unacknowledged warnings', () => {
    expect(describeViolations(report.violations.filter((v) => v.severity !== 'error'))).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('acknowledges only the reviewed rules, each with a concrete reason in code', () => {
    // aws-cdk-lib acknowledges cfn-lint rules of its own constructs (CloudFormation-Validate::…): not ours to review.
    const acks = acknowledgments(stack).filter((a) => a.id.startsWith('AwsSolutions-'));
    const deploymentRole = `${deploymentHandler().node.path}/ServiceRole`;
    for (const ack of acks) {
      // Whole rules, never a blanket id; or one reviewed finding of a rule: SES identity/*, and the policy CDK gives
      // its BucketDeployment upload function (infra/dashboard.ts), finding by finding, on that role only.
      if (ack.path === deploymentRole) expect(ack.id, ack.path).toMatch(/^AwsSolutions-IAM[45]\[(Action|Resource|Policy)::.+\]$/);
      else if (ack.id !== SES_IDENTITY_WILDCARD_FINDING && ack.id !== exportObjectsFinding(stack.exports)) expect(ack.id, ack.path).toMatch(/^AwsSolutions-[A-Z]+\d+$/);
      expect(ack.reason.length, `${ack.path} ${ack.id}`).toBeGreaterThanOrEqual(80);
    }
    // A new acknowledgment is a reviewed change of this list, not a way to silence a finding.
    expect([...new Set(acks.map((a) => a.id.replace(/\[.*$/, '')))].sort()).toEqual([
      'AwsSolutions-APIG4', // public, ingest-key and Stripe-signature routes: authenticated in the handler
      'AwsSolutions-CFR1', // no geo restriction: customers anywhere
      'AwsSolutions-CFR2', // no WAF: us-east-1 only and a monthly fee; throttle, authorizer and limits instead
      'AwsSolutions-CFR4', // default *.cloudfront.net certificate: CloudFront fixes its minimum TLS version
      'AwsSolutions-COG1', // the contract's password policy (no required symbol)
      'AwsSolutions-COG2', // no MFA flow in the product yet
      'AwsSolutions-COG8', // Essentials tier
      'AwsSolutions-IAM4', // CDK's BucketDeployment function: AWSLambdaBasicExecutionRole
      'AwsSolutions-IAM5', // SES identity/* (sandbox recipients), held to the one sender by ses:FromAddress; the BucketDeployment's s3 grants; the export files' prefix
      'AwsSolutions-L1', // nodejs22.x pinned with the esbuild target; the BucketDeployment's Python runtime (CDK's)
      'AwsSolutions-S1', // the access-log bucket does not log into itself
      'AwsSolutions-SMG4', // the cursor key: rotating it only restarts open list cursors
    ]);
    // IAM4 and the BucketDeployment's IAM5 findings only on CDK's upload function role.
    const reviewedIam5 = new Set([SES_IDENTITY_WILDCARD_FINDING, exportObjectsFinding(stack.exports)]);
    expect(new Set(acks.filter((a) => a.id.startsWith('AwsSolutions-IAM4') || (a.id.startsWith('AwsSolutions-IAM5') && !reviewedIam5.has(a.id))).map((a) => a.path))).toEqual(
      new Set([deploymentRole]),
    );
    // The export files' finding exactly on the worker's role and the roles of the routes that sign download links.
    expect(new Set(acks.filter((a) => a.id === exportObjectsFinding(stack.exports)).map((a) => a.path))).toEqual(
      new Set([stack.exports.worker.role.node.path, ...routes.filter((r) => r.signsExportLinks).map((r) => `${stack.functions.get(routeId(r))!.role.node.path}`)]),
    );
    // Nothing on the stack or the app as a whole: every acknowledgment names its resource.
    expect(acks.filter((a) => a.path === stack.node.path || a.path === '')).toEqual([]);
    // APIG4 exactly on the routes without the JWT authorizer.
    const apig4 = acks.filter((a) => a.id === 'AwsSolutions-APIG4');
    expect(apig4).toHaveLength(routes.filter((r) => r.auth !== 'jwt').length);
  });

  it('runs on `cdk synth` (infra/app.ts): a compliant app synthesizes, a finding fails the synth', () => {
    expect(() => synth({ nag: true }).app.synth()).not.toThrow();
    const bad = synth({ nag: true });
    new Queue(bad.stack, 'PlainQueue'); // no DLQ (SQS3), no SSL-only policy (SQS4)
    expect(() => bad.app.synth()).toThrow(/SQS queue does not require requests to use SSL/);
  }, 60_000);
});

describe('least privilege', () => {
  /** Every Allow but the two reviewed below: CDK's upload function's policy and CloudFront's read of the app bucket. */
  const allows = () => {
    const { policyId } = deploymentRoleIds(resources);
    const { [policyId]: _deployment, ...ours } = resources;
    return allStatements(ours).filter((s) => s.Effect === 'Allow' && !isCloudFrontRead(s));
  };
  const isCloudFrontRead = (s: Statement) => JSON.stringify((s as { Principal?: unknown }).Principal) === '{"Service":"cloudfront.amazonaws.com"}';

  it("CDK's upload function (BucketDeployment) may touch only the CDK asset bucket and the dashboard's bucket", () => {
    const { policyId, roleId } = deploymentRoleIds(resources);
    const [appBucketId] = Object.entries(resources).find(([id, r]) => r.Type === 'AWS::S3::Bucket' && id.startsWith('DashboardApp'))!;
    const statements = allStatements(props(resources[policyId]!).PolicyDocument);
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      expect(s.Effect).toBe('Allow');
      for (const action of asList(s.Action)) expect(action, JSON.stringify(s)).toMatch(/^(s3|logs):/);
      for (const resource of asList(s.Resource)) {
        const text = JSON.stringify(resource);
        expect(text.includes('cdk-hnb659fds-assets-') || text.includes(`"${appBucketId}"`) || text.includes('DashboardDeployLogs'), text).toBe(true);
      }
    }
    expect(props(resources[roleId]!).ManagedPolicyArns).toEqual([{ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole']] }]);
  });

  it('CloudFront (Origin Access Control) may only GetObject in the app bucket, for this distribution', () => {
    const reads = allStatements(resources).filter(isCloudFrontRead);
    expect(reads).toHaveLength(1);
    expect(reads[0]!.Action).toBe('s3:GetObject');
    expect(JSON.stringify(reads[0]!.Resource)).toMatch(/^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["DashboardApp[0-9A-F]+","Arn"\]\},"\/\*"\]\]\}$/);
    expect(JSON.stringify(reads[0]!.Condition)).toMatch(/"AWS:SourceArn".*:distribution\/.*"Ref":"DashboardDistribution/);
  });

  it('never allows dynamodb:* (or any wildcard action), nor NotAction / NotResource', () => {
    expect(allows().length).toBeGreaterThan(0);
    for (const s of allows()) {
      expect(s.NotAction).toBeUndefined();
      expect(s.NotResource).toBeUndefined();
      for (const action of asList(s.Action)) expect(action).not.toContain('*');
    }
  });

  it('never allows Resource "*", nor a wildcard in any resource (table indexes are named)', () => {
    for (const s of allows()) {
      // Trust policies have no Resource; every permission names its table, index, queue, pool, secret or log group.
      if (asList(s.Action).every((a) => a === 'sts:AssumeRole')) continue;
      // The one reviewed exception (AwsSolutions-IAM5): SES authorizes the recipients' identities too in the sandbox,
      // so SendEmail names identity/* of this account and region, held to one sender by ses:FromAddress.
      if (asList(s.Action).every((a) => a.startsWith('ses:'))) {
        expect(s.Resource).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':identity/*']] });
        expect(s.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'alerts@example.com' } });
        continue;
      }
      // The other reviewed one: the export files, named at run time, under their bucket's exports/ prefix only.
      if (asList(s.Action).every((a) => a.startsWith('s3:'))) {
        expect(JSON.stringify(s.Resource)).toMatch(/^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["ExportsFiles[0-9A-F]+","Arn"\]\},"\/exports\/\*"\]\]\}$/);
        continue;
      }
      // A KMS key policy's Resource is the key itself, always written "*": only the connections key's two statements.
      if (asList(s.Action).every((a) => a.startsWith('kms:')) && JSON.stringify((s as { Principal?: unknown }).Principal ?? '').includes(':root')) {
        expect(s.Resource).toBe('*');
        expect(asList(s.Action)).not.toContain('kms:*');
        continue;
      }
      const resourceList = asList(s.Resource);
      expect(resourceList.length, JSON.stringify(s)).toBeGreaterThan(0);
      expect(resourceList).not.toContain('*');
      expect(JSON.stringify(resourceList), JSON.stringify(s.Action)).not.toContain('*');
    }
  });

  it('gives every function its own role with no managed policy, writing to its own log group only', () => {
    const { functionId: deploymentFunctionId } = deploymentRoleIds(resources);
    const functions = Object.entries(resources).filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && id !== deploymentFunctionId);
    expect(functions).toHaveLength(routes.length + 8); // + the notifier, the alert sweeper, the export worker, the connector dispatcher, a worker per provider (3) and the evaluator (CDK's upload function: above)
    const roles = new Set<string>();
    for (const [id, fn] of functions) {
      const roleId = refId(props(fn).Role)!;
      roles.add(roleId);
      const role = resources[roleId]!;
      expect(role.Type, id).toBe('AWS::IAM::Role');
      expect(props(role).ManagedPolicyArns, id).toBeUndefined();
      const logs = roleStatements(resources, roleId).filter((s) => asList(s.Action).some((a) => a.startsWith('logs:')));
      expect(logs, id).toHaveLength(1);
      expect(new Set(asList(logs[0]!.Action)), id).toEqual(new Set(['logs:CreateLogStream', 'logs:PutLogEvents']));
      expect(asList(logs[0]!.Resource).map(refId), id).toEqual([refId(props(fn).LoggingConfig.LogGroup)]);
    }
    expect(roles.size).toBe(functions.length);
  });
});

describe('API Gateway', () => {
  const stage = () => {
    const stages = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(1);
    return props(stages[0]!);
  };

  it('throttles the stage', () => {
    const settings = stage().DefaultRouteSettings;
    expect(settings.ThrottlingRateLimit).toBeGreaterThan(0);
    expect(settings.ThrottlingBurstLimit).toBeGreaterThan(0);
  });

  it('writes JSON access logs without headers or query strings to a log group kept one month', () => {
    const logs = stage().AccessLogSettings;
    const group = resources[refId(logs.DestinationArn)!]!;
    expect(group.Type).toBe('AWS::Logs::LogGroup');
    expect(props(group).RetentionInDays).toBe(30);
    const format = JSON.parse(logs.Format) as Record<string, string>;
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', routeKey: '$context.routeKey' });
    expect(logs.Format).not.toMatch(/header|querystring|requestOverride|body/i);
  });
});

describe('reserved concurrency', () => {
  const reserved = (json: Record<string, Resource>, description: string): unknown =>
    props(functionFor(json, description)[1]).ReservedConcurrentExecutions;

  it('reserves nothing by default: a new account (quota < 160, 100 kept unreserved) must deploy', () => {
    expect(DEFAULT_RESERVED_CONCURRENCY).toEqual({ ingest: 0, webhook: 0 });
    const fns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    for (const fn of fns) expect(props(fn).ReservedConcurrentExecutions, props(fn).Description).toBeUndefined();
  });

  it('reserves concurrency for POST /ingest and the Stripe webhook only, when asked', () => {
    const json = resourcesOf(synth({ context: { ingestReservedConcurrency: 50, webhookReservedConcurrency: '10' } }).stack);
    expect(reserved(json, 'POST /ingest')).toBe(50);
    expect(reserved(json, 'POST /billing/webhook')).toBe(10);
    const others = Object.values(json).filter(
      (r) => r.Type === 'AWS::Lambda::Function' && !['POST /ingest', 'POST /billing/webhook'].includes(props(r).Description),
    );
    for (const fn of others) expect(props(fn).ReservedConcurrentExecutions, props(fn).Description).toBeUndefined();
    const [webhookId] = functionFor(json, 'POST /billing/webhook');
    const urls = Object.values(json).filter((r) => r.Type === 'AWS::Lambda::Url');
    expect(urls.map((u) => refId(props(u).TargetFunctionArn))).toEqual([webhookId]);
  }, 60_000);

  it('takes the values from context; 0 leaves the function unreserved (new accounts with a low quota)', () => {
    const json = resourcesOf(synth({ context: { ingestReservedConcurrency: '5', webhookReservedConcurrency: 0 } }).stack);
    expect(reserved(json, 'POST /ingest')).toBe(5);
    expect(reserved(json, 'POST /billing/webhook')).toBeUndefined();
    expect(() => synth({ context: { ingestReservedConcurrency: -1 } })).toThrow(/ingestReservedConcurrency/);
    expect(() => synth({ context: { webhookReservedConcurrency: 2.5 } })).toThrow(/webhookReservedConcurrency/);
  }, 60_000);
});
