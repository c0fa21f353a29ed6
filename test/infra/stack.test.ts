/**
 * CDK assertions on the synthesized BurnrateStack. One synth (bundling skipped) shared by every test.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '#infra/app.ts';
import { TABLE } from '#shared/db/table.ts';
import { API_PREFIX, routes } from '#shared/routes.ts';
import type { Route } from '#shared/routes.ts';
import { flattenNestedStacks, type Template as CfnTemplate } from '../artifacts/cfn.ts';
import { asList, DEPLOY_CONTEXT, deploymentRoleIds, props, refId, roleStatements, ROOT, statementsIn, type Resource, type Statement } from './template.ts';


let outdir: string;
let template: Template;
let resources: Record<string, Resource>;

/** The provider connections' resources (key, queues, alarm, schedule, dispatcher, worker): checked on their own below. */
const isConnector = (id: string) => id.startsWith('Connector') || id.startsWith('ConnectionsKey');

/**
 * Resources of one CloudFormation type, by logical id; functions and policies without CDK's upload function's, and
 * without the asynchronous exports' bucket, queues and worker (construct `Exports`: test/infra/exports.test.ts) nor
 * the connections'.
 */
function ofType(type: string): [string, Resource][] {
  const { functionId, roleId, policyId } = deploymentRoleIds(resources);
  return Object.entries(resources).filter(([id, r]) => r.Type === type && ![functionId, roleId, policyId].includes(id) && !id.startsWith('Exports') && !isConnector(id));
}

function only(type: string): [string, Resource] {
  const found = ofType(type);
  expect(found, `exactly one ${type}`).toHaveLength(1);
  return found[0]!;
}



/** Every IAM statement anywhere in the template (policies, inline role policies, trust policies). */
const allStatements = (node: unknown = resources): Statement[] => statementsIn(node);

const routeKey = (route: Route) => `${route.method} ${API_PREFIX}${route.path}`;

function apiRoute(route: Route): Resource {
  const matches = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => props(r).RouteKey === routeKey(route));
  expect(matches, routeKey(route)).toHaveLength(1);
  return matches[0]![1];
}

/** Follows route → integration → Lambda function; returns the function's logical id. */
function functionIdOf(route: Route): string {
  const target = props(apiRoute(route)).Target as { 'Fn::Join': [string, unknown[]] };
  const integrationId = refId(target['Fn::Join'][1].at(-1));
  expect(integrationId, `${routeKey(route)} has an integration`).toBeDefined();
  const integration = resources[integrationId!]!;
  expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
  const functionId = refId(props(integration).IntegrationUri);
  expect(resources[functionId!]?.Type).toBe('AWS::Lambda::Function');
  return functionId!;
}

/** The IAM statements attached to a function's execution role. */
function statementsOf(functionId: string): Statement[] {
  const roleId = refId(props(resources[functionId]!).Role);
  expect(roleId).toBeDefined();
  const inline = allStatements(props(resources[roleId!]!).Policies ?? []);
  const attached = ofType('AWS::IAM::Policy')
    .filter(([, p]) => asList(props(p).Roles).some((r) => refId(r) === roleId))
    .flatMap(([, p]) => allStatements(props(p).PolicyDocument));
  return [...inline, ...attached];
}

/** The function the alerts queue's event source mapping invokes. */
function notifierId(): string {
  const [, mapping] = only('AWS::Lambda::EventSourceMapping');
  const id = refId(props(mapping).FunctionName);
  expect(resources[id!]?.Type).toBe('AWS::Lambda::Function');
  return id!;
}

/** The alerts queue: the one with a redrive policy (the other queue is its DLQ). */
function alertsQueue(): { queueId: string; dlqId: string; queue: Resource } {
  const queues = ofType('AWS::SQS::Queue');
  expect(queues).toHaveLength(2);
  const withDlq = queues.filter(([, q]) => props(q).RedrivePolicy !== undefined);
  expect(withDlq).toHaveLength(1);
  const [queueId, queue] = withDlq[0]!;
  const dlqId = refId(props(queue).RedrivePolicy.deadLetterTargetArn)!;
  return { queueId, dlqId, queue };
}

function actionsWithPrefix(statements: Statement[], prefix: string): string[] {
  return statements.flatMap((s) => asList(s.Action)).filter((a) => a.startsWith(prefix));
}

beforeAll(() => {
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  outdir = mkdtempSync(join(ROOT, '.test-data', 'cdk.out-'));
  const { stack } = buildApp({ app: { context: { 'aws:cdk:bundling-stacks': [], ...DEPLOY_CONTEXT }, outdir } });
  template = Template.fromStack(stack);
  // With the nested stack's resources (the limits phase: infra/connector-limits.ts), as one template.
  resources = flattenNestedStacks(template.toJSON() as CfnTemplate, stack, outdir).Resources as Record<string, Resource>;
}, 60_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('routes and functions', () => {
  it('has a handler file on disk for every route', () => {
    const missing = routes.filter((r) => !existsSync(join(ROOT, 'functions', `${r.handler}.ts`)));
    expect(missing.map((r) => r.handler)).toEqual([]);
  });

  it('has exactly one Lambda function per route plus the notifier and the sweeper, and no custom resources but the upload', () => {
    // + CDK's BucketDeployment upload function (the dashboard's files; infra/dashboard.ts), for its two uploads, the
    // export worker, and the connector dispatcher, one worker per provider (three) and the evaluator.
    template.resourceCountIs('AWS::Lambda::Function', routes.length + 9);
    expect(ofType('AWS::Lambda::Function')).toHaveLength(routes.length + 2);
    expect(Object.values(resources).filter((r) => r.Type.startsWith('Custom::')).map((r) => r.Type)).toEqual(['Custom::CDKBucketDeployment', 'Custom::CDKBucketDeployment']);
  });

  it('has one API route per table entry, each with its own function', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Route', routes.length);
    const functionIds = routes.map(functionIdOf);
    expect(new Set(functionIds).size).toBe(routes.length);
  });

  it('puts the JWT authorizer on exactly the jwt routes', () => {
    const [authorizerId] = only('AWS::ApiGatewayV2::Authorizer');
    for (const route of routes) {
      const p = props(apiRoute(route));
      if (route.auth === 'jwt') {
        expect(p.AuthorizationType, routeKey(route)).toBe('JWT');
        expect(refId(p.AuthorizerId), routeKey(route)).toBe(authorizerId);
      } else {
        expect(p.AuthorizationType ?? 'NONE', routeKey(route)).toBe('NONE');
        expect(p.AuthorizerId, routeKey(route)).toBeUndefined();
      }
    }
  });

  it('runs every function on nodejs22.x / arm64 with its own one-month log group and the config env', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(0);
    const [tableId] = only('AWS::DynamoDB::Table');
    const [poolId] = only('AWS::Cognito::UserPool');
    const [clientId] = only('AWS::Cognito::UserPoolClient');
    const notifier = notifierId();
    const routeFunctions = new Set(routes.map(functionIdOf));
    for (const [id, fn] of functions) {
      const p = props(fn);
      expect(p.Runtime, id).toBe('nodejs22.x');
      expect(p.Architectures, id).toEqual(['arm64']);
      expect(p.MemorySize, id).toBe(512);
      expect(p.Timeout, id).toBe(id === notifier ? 30 : 10);
      const env = p.Environment.Variables as Record<string, unknown>;
      expect(refId(env.TABLE_NAME), id).toBe(tableId);
      if (routeFunctions.has(id)) {
        expect(refId(env.USER_POOL_ID), id).toBe(poolId);
        expect(refId(env.USER_POOL_CLIENT_ID), id).toBe(clientId);
        expect(env.CORS_ORIGINS, id).toBe('*');
      }
      expect(env.NODE_OPTIONS, id).toBeUndefined();
      const logGroup = resources[refId(p.LoggingConfig?.LogGroup)!];
      expect(logGroup?.Type, id).toBe('AWS::Logs::LogGroup');
      expect(props(logGroup!).RetentionInDays, id).toBe(30);
    }
  });
});

describe('IAM', () => {
  it('never grants a wildcard action', () => {
    // Deny statements may use wildcards: enforceSSL on the queues denies `sqs:*` over plain HTTP.
    // CDK's upload function's s3:GetObject* etc. are reviewed in test/infra/nag.test.ts.
    const { policyId } = deploymentRoleIds(resources);
    const { [policyId]: _upload, ...ours } = resources;
    const statements = allStatements(ours).filter((s) => s.Effect === 'Allow');
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      expect(s.NotAction).toBeUndefined();
      for (const action of asList(s.Action)) {
        expect(action).not.toMatch(/^\*$|^dynamodb:\*$|^cognito-idp:\*$/);
        expect(action).not.toContain('*');
      }
    }
  });

  it('grants each function exactly the DynamoDB and Cognito actions its route lists', () => {
    for (const route of routes) {
      const statements = statementsOf(functionIdOf(route));
      const dynamo = actionsWithPrefix(statements, 'dynamodb:');
      const cognito = actionsWithPrefix(statements, 'cognito-idp:');
      expect(new Set(dynamo), route.handler).toEqual(new Set(route.table.map((a) => `dynamodb:${a}`)));
      expect(new Set(cognito), route.handler).toEqual(new Set((route.cognito ?? []).map((a) => `cognito-idp:${a}`)));
      // Nothing else but writing to its own log group (and sending to the alerts queue, reading the Stripe secret).
      const others = statements
        .flatMap((s) => asList(s.Action))
        .filter((a) => !a.startsWith('dynamodb:') && !a.startsWith('cognito-idp:') && a !== 'sts:AssumeRole');
      const expected = [
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        ...(route.publishesAlerts ? ['sqs:SendMessage'] : []),
        ...(route.queuesSyncs ? ['sqs:SendMessage'] : []),
        ...(route.queuesEvaluations ? ['sqs:SendMessage'] : []),
        ...(route.sealsAdminKeys ? ['kms:Encrypt'] : []),
        ...(route.stripe ? ['secretsmanager:GetSecretValue'] : []),
        ...(route.sendsEmail ? ['ses:SendEmail', 'ses:SendRawEmail'] : []),
        ...(route.queuesExports ? ['sqs:SendMessage'] : []),
        ...(route.signsExportLinks ? ['s3:GetObject'] : []),
      ];
      expect([...others].sort(), route.handler).toEqual(expected.sort());
    }
  });

  it('scopes DynamoDB grants to the table and its indexes by name (for Query only), Cognito grants to the pool', () => {
    const [tableId] = only('AWS::DynamoDB::Table');
    const [poolId] = only('AWS::Cognito::UserPool');
    const tableArn = { 'Fn::GetAtt': [tableId, 'Arn'] };
    const indexArn = (name: string) => ({ 'Fn::Join': ['', [tableArn, `/index/${name}`]] });
    for (const s of allStatements()) {
      const actions = asList(s.Action);
      if (actions.some((a) => a.startsWith('dynamodb:'))) {
        const expected = actions.includes('dynamodb:Query') ? [tableArn, ...TABLE.indexes.map((i) => indexArn(i.name))] : [tableArn];
        expect(asList(s.Resource)).toEqual(expected);
      }
      if (actions.some((a) => a.startsWith('cognito-idp:'))) {
        expect(refId(s.Resource)).toBe(poolId);
      }
    }
  });
});

describe('table', () => {
  it('is on-demand with pk/sk, the GSIs, TTL and point-in-time recovery, and is retained', () => {
    const [, table] = only('AWS::DynamoDB::Table');
    const p = props(table);
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.KeySchema).toEqual([
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ]);
    expect(p.GlobalSecondaryIndexes).toEqual(
      TABLE.indexes.map((i) => ({
        IndexName: i.name,
        KeySchema: [
          { AttributeName: i.partitionKey, KeyType: 'HASH' },
          { AttributeName: i.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    );
    // gsi3's sort key is a NUMBER (a month's cost in µ$, which the writer ADDs to); every other key is a string.
    const keyAttributes: string[] = [TABLE.partitionKey, TABLE.sortKey, ...TABLE.indexes.flatMap((i) => [i.partitionKey, i.sortKey])];
    const numeric = new Set<string>(TABLE.indexes.flatMap((i) => ('sortType' in i && i.sortType === 'N' ? [i.sortKey] : [])));
    expect(numeric).toEqual(new Set(['gsi3sk']));
    expect(p.AttributeDefinitions).toEqual(keyAttributes.map((name) => ({ AttributeName: name, AttributeType: numeric.has(name) ? 'N' : 'S' })));
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: TABLE.ttlAttribute, Enabled: true });
    expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });
});

describe('Cognito', () => {
  it('has the contract password policy, email sign-in and no self sign-up', () => {
    const [, pool] = only('AWS::Cognito::UserPool');
    const p = props(pool);
    expect(p.Policies.PasswordPolicy).toMatchObject({
      MinimumLength: 8,
      RequireUppercase: true,
      RequireLowercase: true,
      RequireNumbers: true,
      RequireSymbols: false,
    });
    expect(p.UsernameAttributes).toEqual(['email']);
    expect(p.UsernameConfiguration).toEqual({ CaseSensitive: false });
    expect(p.AdminCreateUserConfig.AllowAdminCreateUserOnly).toBe(true);
    expect(p.AccountRecoverySetting.RecoveryMechanisms).toEqual([{ Name: 'verified_email', Priority: 1 }]);
    const custom = (p.Schema as { Name: string; Mutable?: boolean; AttributeDataType: string }[]).filter((a) =>
      ['accountId', 'userId'].includes(a.Name),
    );
    expect(custom).toHaveLength(2);
    for (const attribute of custom) expect(attribute).toMatchObject({ AttributeDataType: 'String', Mutable: false });
    expect(pool.DeletionPolicy).toBe('Retain');
  });

  it('has a public client that reads but can never write the custom attributes', () => {
    const [, client] = only('AWS::Cognito::UserPoolClient');
    const p = props(client);
    expect(p.GenerateSecret).toBe(false);
    expect(new Set(p.ExplicitAuthFlows)).toEqual(new Set(['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH']));
    expect(p.AllowedOAuthFlows).toBeUndefined();
    expect(p.ReadAttributes).toEqual(expect.arrayContaining(['custom:accountId', 'custom:userId']));
    expect(p.WriteAttributes.length).toBeGreaterThan(0); // an absent list would mean "all standard attributes"
    expect((p.WriteAttributes as string[]).filter((a) => a.startsWith('custom:'))).toEqual([]);
    expect(p.TokenValidityUnits.IdToken).toBe('minutes');
    expect(p.IdTokenValidity).toBe(60);
    expect(p.TokenValidityUnits.RefreshToken).toBe('minutes');
    expect(p.RefreshTokenValidity).toBe(30 * 24 * 60);
  });

  it('backs the API with a JWT authorizer for the pool whose audience is the client', () => {
    const [, authorizer] = only('AWS::ApiGatewayV2::Authorizer');
    const [poolId] = only('AWS::Cognito::UserPool');
    const [clientId] = only('AWS::Cognito::UserPoolClient');
    const p = props(authorizer);
    expect(p.AuthorizerType).toBe('JWT');
    expect(p.IdentitySource).toEqual(['$request.header.Authorization']);
    expect(p.JwtConfiguration.Audience.map(refId)).toEqual([clientId]);
    expect(JSON.stringify(p.JwtConfiguration.Issuer)).toContain(poolId);
  });
});

describe('HTTP API', () => {
  it('answers CORS preflight for the dashboard', () => {
    const [, api] = only('AWS::ApiGatewayV2::Api');
    const cors = props(api).CorsConfiguration;
    expect(cors.AllowOrigins).toEqual(['*']);
    expect(new Set(cors.AllowHeaders)).toEqual(new Set(['authorization', 'content-type', 'x-api-key']));
    expect(new Set(cors.AllowMethods)).toEqual(new Set(['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS']));
  });

  it('throttles the auto-deployed default stage', () => {
    const [, stage] = only('AWS::ApiGatewayV2::Stage');
    expect(props(stage)).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
    });
  });

  it('exports the API URL (with /api), pool, client and table', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(['ApiUrl', 'DashboardUrl', 'StripeWebhookUrl', 'TableName', 'UserPoolClientId', 'UserPoolId']);
    expect(JSON.stringify(outputs.ApiUrl!.Value)).toMatch(/\/api"\]\]\}$/);
  });
});

describe('alert delivery', () => {
  it('has an encrypted alerts queue with a dead-letter queue after 6 receives, kept 14 days', () => {
    const { queueId, dlqId, queue } = alertsQueue();
    expect(dlqId).not.toBe(queueId);
    expect(resources[dlqId]?.Type).toBe('AWS::SQS::Queue');
    expect(props(queue).RedrivePolicy.maxReceiveCount).toBe(6);
    expect(props(resources[dlqId]!).MessageRetentionPeriod).toBe(14 * 24 * 3600);
    for (const id of [queueId, dlqId]) expect(props(resources[id]!).SqsManagedSseEnabled, id).toBe(true);
    // At least 6× the notifier's timeout.
    expect(props(queue).VisibilityTimeout).toBeGreaterThanOrEqual(6 * props(resources[notifierId()]!).Timeout);
  });

  it('refuses plain-HTTP access to both queues', () => {
    const { queueId, dlqId } = alertsQueue();
    for (const id of [queueId, dlqId]) {
      const policies = ofType('AWS::SQS::QueuePolicy').filter(([, p]) => asList(props(p).Queues).some((q) => refId(q) === id));
      expect(policies, id).toHaveLength(1);
      const statements = allStatements(props(policies[0]![1]).PolicyDocument);
      expect(statements.some((s) => s.Effect === 'Deny' && JSON.stringify(s).includes('aws:SecureTransport'))).toBe(true);
    }
  });

  it('feeds the notifier from the queue in batches of 10, reporting batch item failures', () => {
    const { queueId } = alertsQueue();
    const [, mapping] = only('AWS::Lambda::EventSourceMapping');
    const p = props(mapping);
    expect(refId(p.EventSourceArn)).toBe(queueId);
    expect(p.BatchSize).toBe(10);
    expect(p.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('grants the notifier exactly GetItem, UpdateItem and Query on the table, and SES from its one sender only', () => {
    const statements = statementsOf(notifierId());
    expect(new Set(actionsWithPrefix(statements, 'dynamodb:'))).toEqual(new Set(['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:Query']));
    const ses = statements.filter((s) => asList(s.Action).some((a) => a.startsWith('ses:')));
    expect(ses).toHaveLength(1);
    expect(new Set(asList(ses[0]!.Action))).toEqual(new Set(['ses:SendEmail', 'ses:SendRawEmail']));
    // Sender and (in the SES sandbox) recipient identities are all authorized: identity/* of this account and
    // region, held to the one From address by the condition.
    const sesResources = asList(ses[0]!.Resource);
    expect(sesResources).toHaveLength(1);
    const arn = JSON.stringify(sesResources[0]);
    expect(arn).toContain(':ses:');
    expect(arn).toContain('{"Ref":"AWS::AccountId"},":identity/*"');
    expect(ses[0]!.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'alerts@example.com' } });
    expect(actionsWithPrefix(statements, 'cognito-idp:')).toEqual([]);
    // Reading the queue: what the event source mapping needs, nothing to send.
    expect(actionsWithPrefix(statements, 'sqs:')).not.toContain('sqs:SendMessage');
  });

  it('configures the notifier with the sender and the dashboard URL (no unread SES_IDENTITY)', () => {
    const env = props(resources[notifierId()]!).Environment.Variables as Record<string, unknown>;
    expect(env.ALERT_EMAIL_FROM).toBe('alerts@example.com');
    expect(env.DASHBOARD_URL).toBe('https://app.example.com');
    expect(env.SES_IDENTITY).toBeUndefined();
    expect(env.EMAIL_DELIVERY).toBeUndefined();
    expect(env.ALERTS_QUEUE_URL).toBeUndefined();
  });

  it('lets exactly the routes that publish alerts send to the queue, with its URL in their env', () => {
    const { queueId } = alertsQueue();
    // POST /ingest raises none itself: the evaluator does, from the evaluation it queues.
    const ingest = routes.find((r) => r.path === '/ingest' && r.method === 'POST')!;
    expect(ingest.publishesAlerts).toBeUndefined();
    expect(ingest.queuesEvaluations).toBe(true);
    expect(routes.filter((r) => r.publishesAlerts).length).toBeGreaterThan(0);
    for (const route of routes) {
      const id = functionIdOf(route);
      const env = props(resources[id]!).Environment.Variables as Record<string, unknown>;
      const send = statementsOf(id).filter((s) => asList(s.Action).includes('sqs:SendMessage') && refId(s.Resource) === queueId);
      if (route.publishesAlerts) {
        expect(refId(env.ALERTS_QUEUE_URL), route.handler).toBe(queueId);
        expect(send, route.handler).toHaveLength(1);
        expect(refId(send[0]!.Resource), route.handler).toBe(queueId);
      } else {
        expect(env.ALERTS_QUEUE_URL, route.handler).toBeUndefined();
        expect(send, route.handler).toEqual([]);
      }
    }
  });

  it('lets exactly the routes that send account e-mail use SES (from the one sender only), with the sender in their env', () => {
    const senders = routes.filter((r) => r.sendsEmail).map((r) => `${r.method} ${r.path}`);
    expect(senders).toEqual(
      expect.arrayContaining(['POST /auth/register', 'POST /auth/resend-verification', 'POST /auth/forgot-password', 'POST /invitations']),
    );
    for (const route of routes) {
      const id = functionIdOf(route);
      const env = props(resources[id]!).Environment.Variables as Record<string, unknown>;
      const ses = statementsOf(id).filter((s) => asList(s.Action).some((a) => a.startsWith('ses:')));
      if (route.sendsEmail) {
        expect(env.ALERT_EMAIL_FROM, route.handler).toBe('alerts@example.com');
        expect(ses, route.handler).toHaveLength(1);
        expect(new Set(asList(ses[0]!.Action))).toEqual(new Set(['ses:SendEmail', 'ses:SendRawEmail']));
        // identity/* (the SES sandbox authorizes recipients' identities too), held to the sender by the condition.
        const arn = JSON.stringify(asList(ses[0]!.Resource));
        expect(arn).toContain('{"Ref":"AWS::AccountId"},":identity/*"');
        expect(ses[0]!.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'alerts@example.com' } });
        expect(env.DASHBOARD_URL, route.handler).toBe('https://app.example.com');
      } else {
        expect(env.ALERT_EMAIL_FROM, route.handler).toBeUndefined();
        expect(ses, route.handler).toEqual([]);
      }
    }
  });

  it('takes the SES identity, sender and dashboard URL from context', () => {
    const dir = mkdtempSync(join(ROOT, '.test-data', 'cdk.out-'));
    try {
      const { stack } = buildApp({
        app: {
          context: { 'aws:cdk:bundling-stacks': [], ...DEPLOY_CONTEXT, sesIdentity: 'mail.burnrate.dev', dashboardUrl: 'https://app.burnrate.dev' },
          outdir: dir,
        },
      });
      const json = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
      const mapping = Object.entries(json).find(([id, r]) => r.Type === 'AWS::Lambda::EventSourceMapping' && !id.startsWith('Exports'))![1];
      const fn = json[refId(props(mapping).FunctionName)!]!;
      expect(props(fn).Environment.Variables).toMatchObject({
        ALERT_EMAIL_FROM: 'alerts@mail.burnrate.dev',
        DASHBOARD_URL: 'https://app.burnrate.dev',
      });
      expect(JSON.stringify(json)).toContain('"ses:FromAddress":"alerts@mail.burnrate.dev"');
      // The routes that e-mail links point them into the dashboard (docs/features/identity-and-teams.md appUrl).
      const register = Object.values(json).find((r) => r.Type === 'AWS::Lambda::Function' && props(r).Description === 'POST /auth/register')!;
      expect(props(register).Environment.Variables).toMatchObject({ ALERT_EMAIL_FROM: 'alerts@mail.burnrate.dev', DASHBOARD_URL: 'https://app.burnrate.dev' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('Stripe billing', () => {
  const webhookRoute = () => routes.find((r) => r.auth === 'stripe')!;
  const stripeRoutes = () => routes.filter((r) => r.stripe);

  it('serves the webhook on a Function URL with auth NONE (output StripeWebhookUrl) and on the API without authorizer', () => {
    expect(webhookRoute()).toMatchObject({ method: 'POST', path: '/billing/webhook' });
    const functionId = functionIdOf(webhookRoute());
    const [urlId, url] = only('AWS::Lambda::Url');
    expect(props(url).AuthType).toBe('NONE');
    expect(refId(props(url).TargetFunctionArn)).toBe(functionId);
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => props(p).Action === 'lambda:InvokeFunctionUrl');
    expect(permissions).toHaveLength(1);
    expect(props(permissions[0]![1])).toMatchObject({ Principal: '*', FunctionUrlAuthType: 'NONE' });
    expect(refId(props(permissions[0]![1]).FunctionName)).toBe(functionId);
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(refId(outputs.StripeWebhookUrl!.Value)).toBe(urlId);
    const apiRouteProps = props(apiRoute(webhookRoute()));
    expect(apiRouteProps.AuthorizationType ?? 'NONE').toBe('NONE');
    expect(apiRouteProps.AuthorizerId).toBeUndefined();
  });

  it('lets only the billing functions read the Stripe secret, with GetSecretValue on that secret alone', () => {
    expect(stripeRoutes().map((r) => r.handler).sort()).toEqual(['billing/checkout', 'billing/portal', 'billing/webhook']);
    const billingRoles = new Set(stripeRoutes().map((r) => refId(props(resources[functionIdOf(r)]!).Role)));
    const readers = new Set<string | undefined>();
    // Every role, with its inline and attached policies: nothing else has any Secrets Manager permission.
    for (const [roleId] of ofType('AWS::IAM::Role')) {
      const statements = roleStatements(resources, roleId).filter((st) => asList(st.Action).some((a) => a.startsWith('secretsmanager:')));
      if (statements.length === 0) continue;
      readers.add(roleId);
      for (const st of statements) {
        expect(asList(st.Action)).toEqual(['secretsmanager:GetSecretValue']);
        expect(JSON.stringify(st.Resource)).toContain(':secret:burnrate/stripe-??????');
      }
    }
    expect(readers).toEqual(billingRoles);
  });

  it('hands the billing functions the secret ARN (never a key) and the price ids and URLs from context', () => {
    const dir = mkdtempSync(join(ROOT, '.test-data', 'cdk.out-'));
    try {
      const { stack } = buildApp({
        app: {
          context: {
            'aws:cdk:bundling-stacks': [],
            ...DEPLOY_CONTEXT,
            stripeSecretName: 'prod/stripe',
            stripePriceGrowth: 'price_G',
            stripePriceScale: 'price_S',
            dashboardUrl: 'https://app.burnrate.dev/',
          },
          outdir: dir,
        },
      });
      const json = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
      const fns = Object.values(json).filter((r) => r.Type === 'AWS::Lambda::Function');
      const billing = fns.filter((fn) => String(props(fn).Description).startsWith('POST /billing/'));
      expect(billing).toHaveLength(3);
      for (const fn of billing) {
        const env = props(fn).Environment.Variables as Record<string, unknown>;
        expect(env).toMatchObject({
          STRIPE_PRICE_GROWTH: 'price_G',
          STRIPE_PRICE_SCALE: 'price_S',
          BILLING_SUCCESS_URL: 'https://app.burnrate.dev/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}',
          BILLING_CANCEL_URL: 'https://app.burnrate.dev/billing?checkout=canceled',
          BILLING_PORTAL_RETURN_URL: 'https://app.burnrate.dev/billing',
        });
        expect(JSON.stringify(env.STRIPE_SECRET_ARN)).toContain(':secret:prod/stripe');
        expect(env.STRIPE_SECRET_KEY).toBeUndefined();
        expect(env.STRIPE_WEBHOOK_SECRET).toBeUndefined();
      }
      for (const fn of fns.filter((f) => !billing.includes(f))) {
        expect(Object.keys(props(fn).Environment.Variables).filter((k) => k.startsWith('STRIPE_'))).toEqual([]);
      }
      expect(JSON.stringify(json)).toContain(':secret:prod/stripe-??????');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('pagination cursor key', () => {
  it('every jwt function gets CURSOR_SECRET as a dynamic reference to a generated secret, never a literal', () => {
    expect(ofType('AWS::SecretsManager::Secret').some(([, r]) => (r.Properties as { GenerateSecretString?: unknown }).GenerateSecretString)).toBe(true);
    for (const route of routes) {
      const [, fn] = ofType('AWS::Lambda::Function').find(([, r]) => (r.Properties as { Description?: string }).Description === `${route.method} ${route.path}`)!;
      const env = (fn.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables;
      if (route.auth === 'jwt') expect(JSON.stringify(env.CURSOR_SECRET), route.path).toContain('{{resolve:secretsmanager:');
      else expect(env.CURSOR_SECRET, route.path).toBeUndefined();
    }
  });
});

describe('operations', () => {
  it('alarms as soon as an alert delivery reaches the dead-letter queue', () => {
    const [dlqId] = ofType('AWS::SQS::Queue').find(([, r]) => !props(r).RedrivePolicy)!;
    const [, alarm] = only('AWS::CloudWatch::Alarm');
    expect(props(alarm)).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(JSON.stringify(props(alarm).Dimensions)).toContain(dlqId);
  });
});

describe('alert sweeper', () => {
  it('runs every 5 minutes, reads only gsi2-able Query and may only send to the alerts queue', () => {
    const [, rule] = only('AWS::Events::Rule');
    expect(props(rule).ScheduleExpression).toBe('rate(5 minutes)');
    const targetId = refId(props(rule).Targets[0].Arn)!;
    const fn = resources[targetId]!;
    expect(props(fn).Description).toMatch(/Re-queues alerts/);
    const roleId = refId(props(fn).Role)!;
    const statements = roleStatements(resources, roleId).filter((s) => !asList(s.Action).some((a) => a.startsWith('logs:')));
    expect(statements.flatMap((s) => asList(s.Action)).sort()).toEqual(['dynamodb:Query', 'sqs:SendMessage']);
    const [queueId] = ofType('AWS::SQS::Queue').find(([, r]) => props(r).RedrivePolicy)!;
    expect(JSON.stringify(statements)).toContain(queueId);
  });
});

describe('provider connections: egress', () => {
  it('the worker and the functions that check admin keys get no provider URL, nor the local-stack signal that would honour one', () => {
    // shared/config.ts honours OPENAI_ADMIN_URL / ANTHROPIC_ADMIN_URL / OPENROUTER_URL only with DYNAMODB_ENDPOINT set:
    // deployed, every function calls https://api.openai.com, https://api.anthropic.com and https://openrouter.ai (and
    // shared/connections/http.ts that origin only).
    const all = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    const callers = all.filter(([, fn]) => 'CONNECTIONS_KMS_KEY_ID' in ((props(fn).Environment?.Variables ?? {}) as Record<string, unknown>));
    // POST and PATCH /connections (they check the key with the provider and seal it) and the sync workers (one per provider).
    const sealing = routes.filter((r) => r.sealsAdminKeys).map(functionIdOf);
    expect(sealing).toHaveLength(2);
    const workers = callers.filter(([, fn]) => /Syncs one provider connection/.test(props(fn).Description)).map(([id]) => id);
    expect(workers).toHaveLength(3);
    // And each provider's limits function, which pulls the levers after the sync (infra/connector-limits.ts).
    const limits = callers.filter(([, fn]) => /^Pulls and lets go the levers of one/.test(props(fn).Description)).map(([id]) => id);
    expect(limits).toHaveLength(3);
    expect(callers.map(([id]) => id).sort()).toEqual([...sealing, ...workers, ...limits].sort());
    for (const [id, fn] of all) {
      const names = Object.keys((props(fn).Environment?.Variables ?? {}) as Record<string, unknown>);
      expect(names.filter((n) => /_ADMIN_URL$|^OPENROUTER_URL$|^DYNAMODB_ENDPOINT$|^COGNITO_ENDPOINT$|^AWS_ENDPOINT_URL/.test(n)), id).toEqual([]);
    }
  });
});

describe('provider connections: the sync and its alerts', () => {
  const fnBy = (description: RegExp): [string, Resource] => {
    const found = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function' && description.test(String(props(r).Description)));
    expect(found, String(description)).toHaveLength(1);
    return found[0]!;
  };
  const mappingOf = (functionId: string) => {
    const found = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && refId(props(r).FunctionName) === functionId);
    expect(found).toHaveLength(1);
    return props(found[0]!);
  };
  const sendsTo = (functionId: string, queueId: string) =>
    roleStatements(resources, refId(props(resources[functionId]!).Role)!).some((s) => asList(s.Action).includes('sqs:SendMessage') && asList(s.Resource).some((r) => refId(r) === queueId));

  it('one worker per provider, each on its own queue (one shared DLQ, alarmed), one record per invocation', () => {
    const workers = ['OpenAI', 'Anthropic', 'OpenRouter'].map((name) => fnBy(new RegExp(`^Syncs one provider connection per message, ${name} only`))[0]);
    const queues = workers.map((workerId) => {
      expect(mappingOf(workerId)).toMatchObject({ BatchSize: 1 });
      expect(mappingOf(workerId).FunctionResponseTypes).toBeUndefined();
      return refId(mappingOf(workerId).EventSourceArn)!;
    });
    expect(new Set(queues).size).toBe(3);
    const dlqs = new Set(queues.map((q) => refId(props(resources[q]!).RedrivePolicy.deadLetterTargetArn)!));
    expect(dlqs.size).toBe(1);
    const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm' && JSON.stringify(props(r).Dimensions ?? []).includes([...dlqs][0]!));
    expect(alarms).toHaveLength(1);
    // Every producer of sync messages may send to each provider's queue and knows them all (CONNECTOR_QUEUE_URLS).
    const producers = Object.entries(resources).filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && queues.some((q) => sendsTo(id, q)));
    for (const [id, fn] of producers) {
      expect(queues.every((q) => sendsTo(id, q)), id).toBe(true);
      expect(JSON.stringify(props(fn).Environment.Variables.CONNECTOR_QUEUE_URLS), id).toContain('openrouter');
    }
    expect(producers.length).toBeGreaterThanOrEqual(3 + 1 + routes.filter((r) => r.queuesSyncs).length);
  });

  it('each worker syncs a connection again in 15 minutes; its limits pass brings that to 5 when its account has a spend-anomaly rule that stops keys', () => {
    for (const name of ['OpenAI', 'Anthropic', 'OpenRouter']) {
      const [id, worker] = fnBy(new RegExp(`^Syncs one provider connection per message, ${name} only`));
      expect(props(worker).Environment.Variables, id).toMatchObject({ CONNECTOR_SYNC_INTERVAL_MS: String(15 * 60_000) });
      expect(props(worker).Environment.Variables.ANOMALY_SYNC_INTERVAL_MS, id).toBeUndefined();
      const [limitsId, limits] = fnBy(new RegExp(`^Pulls and lets go the levers of one ${name} connection per message`));
      expect(props(limits).Environment.Variables, limitsId).toMatchObject({ ANOMALY_SYNC_INTERVAL_MS: String(5 * 60_000) });
    }
  });

  it('the limits phase: per provider a FIFO queue (one FIFO DLQ after 3 receives, alarmed) and a function that opens the admin key; each worker sends to its own provider\'s queue only', () => {
    const names = ['OpenAI', 'Anthropic', 'OpenRouter'];
    const workerIds = names.map((name) => fnBy(new RegExp(`^Syncs one provider connection per message, ${name} only`))[0]);
    const limitsIds = names.map((name) => fnBy(new RegExp(`^Pulls and lets go the levers of one ${name} connection per message`))[0]);
    const queueIds = limitsIds.map((id) => {
      const mapping = mappingOf(id);
      expect(mapping, id).toMatchObject({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] });
      return refId(mapping.EventSourceArn)!;
    });
    expect(new Set(queueIds).size).toBe(3);
    const dlqIds = new Set<string>();
    for (const queueId of queueIds) {
      const queue = props(resources[queueId]!);
      expect(queue, queueId).toMatchObject({ FifoQueue: true, SqsManagedSseEnabled: true });
      // Six times the function's timeout (AWS's advice for an event source), so a pass in flight is not handed out twice.
      expect(queue.VisibilityTimeout).toBe(6 * props(resources[limitsIds[queueIds.indexOf(queueId)]!]!).Timeout);
      expect(queue.RedrivePolicy.maxReceiveCount).toBe(3);
      dlqIds.add(refId(queue.RedrivePolicy.deadLetterTargetArn)!);
    }
    expect(dlqIds.size).toBe(1);
    const [dlqId] = [...dlqIds];
    expect(props(resources[dlqId!]!)).toMatchObject({ FifoQueue: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm' && JSON.stringify(props(r).Dimensions ?? []).includes(dlqId!))).toHaveLength(1);
    // Plain HTTP refused on every one of them.
    for (const queueId of [...queueIds, dlqId!]) {
      const policies = Object.values(resources).filter((r) => r.Type === 'AWS::SQS::QueuePolicy' && asList(props(r).Queues).some((q) => refId(q) === queueId));
      expect(JSON.stringify(policies), queueId).toContain('"aws:SecureTransport":"false"');
    }
    // Each worker knows and may send to its own provider's limits queue only; nothing else sends there.
    queueIds.forEach((queueId, i) => {
      const senders = Object.entries(resources).filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && sendsTo(id, queueId)).map(([id]) => id);
      expect(senders).toEqual([workerIds[i]]);
      expect(refId(props(resources[workerIds[i]!]!).Environment.Variables.LIMITS_QUEUE_URL)).toBe(queueId);
    });
    // The limits function opens the admin key with the same condition as the worker, raises alerts, and queues the
    // sync of another connection whose key an anomaly rule stops; it reads and writes the table like the pass did.
    const decryptOf = (id: string) => roleStatements(resources, refId(props(resources[id]!).Role)!).filter((st) => asList(st.Action).includes('kms:Decrypt'));
    limitsIds.forEach((id, i) => {
      expect(decryptOf(id), id).toEqual(decryptOf(workerIds[i]!));
      expect(decryptOf(id)[0]!.Condition, id).toBeDefined();
      const env = props(resources[id]!).Environment.Variables as Record<string, unknown>;
      expect(Object.keys(env).sort()).toEqual(expect.arrayContaining(['ALERTS_QUEUE_URL', 'CONNECTIONS_KMS_KEY_ID', 'CONNECTOR_QUEUE_URLS']));
      expect(env.LIMITS_QUEUE_URL).toBeUndefined();
      const actions = roleStatements(resources, refId(props(resources[id]!).Role)!).flatMap((st) => asList(st.Action));
      expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    });
  });

  it('the main stack keeps room under CloudFormation\'s 500 resources (the limits phase is a nested stack of its own)', () => {
    const count = Object.keys(template.toJSON().Resources as object).length;
    expect(count).toBeLessThanOrEqual(500);
    template.resourceCountIs('AWS::CloudFormation::Stack', 1);
  });

  it('the evaluator has its own queue (DLQ after 5 receives, alarmed) in batches of 10, with no admin key', () => {
    const workerIds = ['OpenAI', 'Anthropic', 'OpenRouter'].map((name) => fnBy(new RegExp(`^Syncs one provider connection per message, ${name} only`))[0]);
    const ingestId = functionIdOf(routes.find((r) => r.path === '/ingest' && r.method === 'POST')!);
    const [evaluatorId, evaluator] = fnBy(/^What new spend calls for, after a sync or an ingest/);
    const mapping = mappingOf(evaluatorId);
    expect(mapping).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    const queueId = refId(mapping.EventSourceArn)!;
    expect(queueId).toMatch(/^ConnectorEvaluationQueue/);
    const queue = props(resources[queueId]!);
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(5);
    expect(queue.KmsMasterKeyId ?? queue.SqsManagedSseEnabled).toBeTruthy();
    const dlqId = refId(queue.RedrivePolicy.deadLetterTargetArn)!;
    const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm' && JSON.stringify(props(r).Dimensions ?? []).includes(dlqId));
    expect(alarms).toHaveLength(1);
    // Only the workers and POST /ingest queue evaluations (their env holds the URL); the evaluator publishes alerts,
    // queues the syncs that pull a connection's levers, and never sees a key.
    const senders = Object.entries(resources).filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && sendsTo(id, queueId)).map(([id]) => id);
    expect(senders.sort()).toEqual([...workerIds, ingestId].sort());
    for (const senderId of [...workerIds, ingestId]) expect(refId(props(resources[senderId]!).Environment.Variables.EVALUATION_QUEUE_URL)).toBe(queueId);
    const env = props(evaluator).Environment.Variables as Record<string, unknown>;
    expect(env.ALERTS_QUEUE_URL).toBeDefined();
    expect(env.CONNECTIONS_KMS_KEY_ID).toBeUndefined();
    const actions = roleStatements(resources, refId(props(evaluator).Role)!).flatMap((s) => asList(s.Action));
    expect(actions.filter((a) => a.startsWith('kms:'))).toEqual([]);
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(JSON.stringify(env.CONNECTOR_QUEUE_URLS)).toContain('openrouter');
  });
});
