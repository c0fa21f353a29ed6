import { CfnOutput, Duration, Lazy, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import {
  AccountRecovery,
  ClientAttributes,
  StringAttribute,
  UserPool,
  UserPoolClient,
} from 'aws-cdk-lib/aws-cognito';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { TABLE } from '#shared/db/table.ts';
import { API_PREFIX, routeId, routes as defaultRoutes } from '#shared/routes.ts';
import type { Route } from '#shared/routes.ts';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS } from '#shared/http/cors.ts';
import { PROVIDERS, type Provider } from '#shared/connections/model.ts';
import { providerName } from '#shared/providers/names.ts';
import { BurnrateFunction, grantStripe, type StripeSettings } from './burnrate-function.ts';
import { ConnectorLimits } from './connector-limits.ts';
import { Dashboard } from './dashboard.ts';
import { SpendExports } from './exports.ts';
import { readDeploySettings, type DeploySettings, type EmailDeploySettings } from './settings.ts';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Key } from 'aws-cdk-lib/aws-kms';

export interface ThrottleProps {
  /** Steady-state requests per second for the whole stage. */
  rateLimit: number;
  /** Burst bucket size. */
  burstLimit: number;
}

export interface BurnrateStackProps extends StackProps {
  /** @default the route table in shared/routes.ts */
  routes?: readonly Route[];
  /** Allowed CORS origins. @default context `corsOrigins` (array or comma-separated string), else `*` */
  corsOrigins?: readonly string[];
  /** Default stage throttling. @default context `throttleRateLimit` / `throttleBurstLimit`, else 100 / 200 */
  throttle?: ThrottleProps;
  /**
   * Deploy settings by context key (`billing`, `email`, `sesIdentity`, `alertEmailFrom`, `dashboardUrl`,
   * `stripePriceGrowth`, …; see infra/settings.ts), taking precedence over `-c` context. Checked at synth.
   */
  settings?: Record<string, unknown>;
  /**
   * Reserved concurrency of the functions open to machines. @default context `ingestReservedConcurrency` /
   * `webhookReservedConcurrency`, else {@link DEFAULT_RESERVED_CONCURRENCY} (none); 0 = unreserved.
   */
  reservedConcurrency?: Partial<ReservedConcurrencyProps>;
  /** The built dashboard. @default context `webDist`, else web/dist (see infra/dashboard.ts). */
  webDist?: string;
}

/**
 * Reserved concurrency can cap the two functions that machines call in bulk, so a flood of events (POST /ingest)
 * or of webhook calls (the Function URL has no API Gateway throttle in front of it) cannot take the account's whole
 * concurrency from the dashboard's routes, and always leaves them this much.
 *
 * Off (0 = unreserved) by default: Lambda refuses any reservation that leaves fewer than 100 executions
 * unreserved, and new accounts start with a quota of 10 to 1,000 (often 10), so 50 + 10 reserved would fail the
 * first deploy on any account whose quota is under 160. Once Service Quotas → Lambda → Concurrent executions is
 * raised (≥ 100 + the sum reserved), deploy with e.g. `-c ingestReservedConcurrency=50 -c
 * webhookReservedConcurrency=10`.
 */
export interface ReservedConcurrencyProps {
  /** POST /ingest alone (not the other `ingestKey` routes such as GET /ingest/blocks). */
  ingest: number;
  /** POST /billing/webhook (auth `stripe`), on the API and its Function URL. */
  webhook: number;
}

export const DEFAULT_RESERVED_CONCURRENCY: ReservedConcurrencyProps = { ingest: 0, webhook: 0 };

/** The notifier's timeout: a webhook's 5 s, SES calls for each user, DynamoDB, for 10 records in parallel. */
export const NOTIFIER_TIMEOUT = Duration.seconds(30);
/** Receives of one alert message before it moves to the dead-letter queue (MAX_ATTEMPTS 5 per channel + 1). */
export const ALERTS_MAX_RECEIVE_COUNT = 6;
/** The connection sync worker: a run stops starting new slices after 4 minutes (the cursor keeps the place). */
export const CONNECTOR_WORKER_TIMEOUT = Duration.minutes(5);
export const CONNECTOR_MAX_RECEIVE_COUNT = 3;
/** The sync evaluator: the alerts of up to 10 syncs (a few Queries, BatchGets and conditional writes each). */
export const SYNC_EVALUATOR_TIMEOUT = Duration.seconds(60);
/** Receives of one sync's evaluation before it moves to the dead-letter queue. */
export const SYNC_EVALUATION_MAX_RECEIVE_COUNT = 5;
/** What the account may do to the connections key itself (no use of it: that goes through IAM, see below). */
const KMS_ADMIN_ACTIONS = [
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'kms:PutKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:EnableKeyRotation',
  'kms:ListResourceTags',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:UpdateKeyDescription',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];
/** Admin keys' encryption context: KMS refuses a call that names another shape (shared/connections/secrets.ts). */
const ADMIN_KEY_CONTEXT = {
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['accountId', 'connectionId'] },
  StringLike: { 'kms:EncryptionContext:accountId': 'br_*', 'kms:EncryptionContext:connectionId': 'con_*' },
};

export { DEFAULT_STRIPE_SECRET_NAME } from './settings.ts';

/** cdk-nag's id of the finding "SendEmail on identity/*" (see grantSendEmail). */
export const SES_IDENTITY_WILDCARD_FINDING = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]';

export const DEFAULT_THROTTLE: ThrottleProps = { rateLimit: 100, burstLimit: 200 };

/** Why a route has no API Gateway authorizer (cdk-nag AwsSolutions-APIG4), by its auth kind. */
const UNAUTHORIZED_ROUTE_REASON: Record<Exclude<Route['auth'], 'jwt'>, string> = {
  none:
    'Public by the API contract: health, the OpenAPI document, and the routes that hand out tokens (register, ' +
    'login, refresh) cannot require one. Bounded by the stage throttle; Cognito checks the credentials.',
  ingestKey:
    'Machine route: the handler authenticates the x-api-key ingest key (looked up by its hash, revocable) — callers ' +
    'are servers sending usage events, not Cognito users. Bounded by the stage throttle and reserved concurrency.',
  stripe:
    "Stripe's webhook: the handler verifies the Stripe-Signature HMAC over the raw body (stale, tampered and unsigned " +
    'payloads are refused); Stripe cannot present a Cognito token. Bounded by reserved concurrency.',
};

/**
 * The HTTP API's access log line (JSON): who called what, the outcome and the latencies. No headers, query strings
 * or bodies, so no tokens or API keys end up in the log.
 */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    requestTime: '$context.requestTime',
    ip: '$context.identity.sourceIp',
    userAgent: '$context.identity.userAgent',
    method: '$context.httpMethod',
    routeKey: '$context.routeKey',
    path: '$context.path',
    protocol: '$context.protocol',
    status: '$context.status',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
    authorizerError: '$context.authorizer.error',
  }),
);

const CORS_METHODS = CORS_ALLOW_METHODS.map((m) => CorsHttpMethod[m]);

export class BurnrateStack extends Stack {
  readonly table: Table;
  readonly userPool: UserPool;
  readonly userPoolClient: UserPoolClient;
  readonly api: HttpApi;
  readonly stage: HttpStage;
  /** The stage's access log. */
  readonly accessLogs: LogGroup;
  /** One function per route, by `routeId(route)`. */
  readonly functions: ReadonlyMap<string, BurnrateFunction>;
  /** Created alerts, one message each, consumed by the notifier. */
  readonly alertsQueue: Queue;
  /**
   * The provider connections' sync queues, one per provider (the dispatcher and the API fill them by the message's
   * provider; that provider's worker drains its own).
   */
  readonly connectorQueues: Readonly<Record<Provider, Queue>>;
  readonly alertsDeadLetterQueue: Queue;
  /** Delivers alerts (e-mail through SES, signed webhooks). */
  readonly notifier: BurnrateFunction;
  /** The checked deploy settings (infra/settings.ts). */
  readonly settings: DeploySettings;
  /** The dashboard: S3 + CloudFront, with the API at /api/* on the same origin. */
  readonly dashboard: Dashboard;
  /** Asynchronous spend exports: their bucket, job queue and worker (infra/exports.ts). */
  readonly exports: SpendExports;

  constructor(scope: Construct, id: string, props: BurnrateStackProps = {}) {
    super(scope, id, props);
    // First: a stack that would deploy broken is refused before anything is built.
    // `dashboardUrl` defaults to the distribution's URL, known once the dashboard is built (below).
    const distributionUrl = Lazy.string({ produce: () => this.dashboard.url });
    this.settings = readDeploySettings((key) => props.settings?.[key] ?? this.node.tryGetContext(key), distributionUrl);
    const corsOrigins = props.corsOrigins ?? this.corsOriginsFromContext();
    const throttle = props.throttle ?? this.throttleFromContext();
    const reservedConcurrency = this.reservedConcurrency(props.reservedConcurrency ?? {});

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
      // All the accounts' data: a stack update or a console click must not be able to delete it.
      deletionProtection: true,
    });
    for (const index of TABLE.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: 'sortType' in index && index.sortType === 'N' ? AttributeType.NUMBER : AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }

    this.userPool = new UserPool(this, 'UserPool', {
      // Registration goes through POST /auth/register (AdminCreateUser), never the pool's own sign-up.
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      signInCaseSensitive: false,
      customAttributes: {
        // Immutable: set once by AdminCreateUser, never changed afterwards (not even by an admin call).
        accountId: new StringAttribute({ mutable: false }),
        userId: new StringAttribute({ mutable: false }),
      },
      passwordPolicy: {
        minLength: 8,
        requireUppercase: true,
        requireLowercase: true,
        requireDigits: true,
        requireSymbols: false,
      },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG1',
      reason:
        'The password policy is the API contract (docs/features/identity-and-teams.md): at least 8 characters with ' +
        'upper case, lower case and ' +
        'digits, no required symbol (NIST SP 800-63B advises against composition rules); POST /auth/register and the ' +
        'local stack enforce the same policy.',
    });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG2',
      reason:
        'MFA is not part of the product yet: POST /auth/login is USER_PASSWORD_AUTH through our API, which has no ' +
        'MFA challenge step in the contract, and machines use ingest keys, not user sign-in. Enabling MFA needs that ' +
        'challenge flow first (tracked as a product decision, not an infra default).',
    });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG8',
      reason:
        'Essentials tier on purpose: the Plus tier (threat protection) is billed per monthly active user, and its ' +
        'adaptive authentication needs an MFA challenge the login flow does not have (see COG2). Brute force is ' +
        'bounded by the stage throttle and Cognito\'s own sign-in lockout.',
    });

    this.userPoolClient = this.userPool.addClient('WebClient', {
      authFlows: { userPassword: true },
      generateSecret: false,
      // No hosted UI: without this CDK enables the implicit and code grants with an example.com callback.
      disableOAuth: true,
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
      readAttributes: new ClientAttributes()
        .withStandardAttributes({ email: true, emailVerified: true, givenName: true, familyName: true })
        .withCustomAttributes('accountId', 'userId'),
      // Never the custom attributes: a user could otherwise move into another account via UpdateUserAttributes.
      writeAttributes: new ClientAttributes().withStandardAttributes({ givenName: true, familyName: true }),
    });

    this.api = new HttpApi(this, 'HttpApi', {
      apiName: `${this.stackName}-api`,
      corsPreflight: {
        allowOrigins: [...corsOrigins],
        allowHeaders: [...CORS_ALLOW_HEADERS],
        allowMethods: CORS_METHODS,
        // API Gateway answers CORS itself and drops the handler's headers: the exposed ones must be listed here.
        exposeHeaders: [...CORS_EXPOSE_HEADERS],
        maxAge: Duration.hours(1),
      },
      // The default stage is created below, with throttling (HttpApiProps has no stage options).
      createDefaultStage: false,
    });
    this.accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: { destination: new LogGroupLogDestination(this.accessLogs), format: ACCESS_LOG_FORMAT },
    });

    const authorizer = new HttpUserPoolAuthorizer('CognitoAuthorizer', this.userPool, {
      userPoolClients: [this.userPoolClient],
      identitySource: ['$request.header.Authorization'],
    });

    const email = this.settings.email;
    this.alertsDeadLetterQueue = new Queue(this, 'AlertsDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    // Alerts that were never delivered must not go unnoticed: an alarm as soon as one reaches the dead-letter queue.
    this.deadLetterAlarm('AlertsDeadLetterAlarm', this.alertsDeadLetterQueue, 'Burnrate: alert deliveries failed 6 times and wait in the dead-letter queue');
    this.alertsQueue = new Queue(this, 'AlertsQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // AWS's advice for Lambda consumers: at least 6× the function timeout, so a retry never overlaps a run.
      visibilityTimeout: Duration.seconds(NOTIFIER_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.alertsDeadLetterQueue, maxReceiveCount: ALERTS_MAX_RECEIVE_COUNT },
    });

    this.notifier = new BurnrateFunction(this, 'Notifier', {
      entry: 'notify/worker',
      description: 'Delivers alerts from the alerts queue: e-mail (SES) and signed webhooks',
      table: this.table,
      timeout: NOTIFIER_TIMEOUT,
      environment: emailEnvironment(email, this.settings.dashboardUrl),
      // The alert and the account's webhook secret (GetItem), claims and outcomes of deliveries and the secret's
      // lazy creation (UpdateItem), the account's users for e-mail (Query).
      grants: { table: ['GetItem', 'UpdateItem', 'Query'] },
    });
    if (email !== 'off') this.grantSendEmail(this.notifier, email);
    this.notifier.function.addEventSource(
      new SqsEventSource(this.alertsQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );

    // "Never silence": every 5 minutes, alerts whose channels are still undelivered after a grace period (the
    // queue hand-off failed, say) are queued again. Delivery claims each channel, so nothing is sent twice.
    const sweeper = new BurnrateFunction(this, 'AlertSweeper', {
      entry: 'notify/sweep',
      description: 'Re-queues alerts whose channels are still undelivered (sparse index gsi2)',
      table: this.table,
      environment: { ALERTS_QUEUE_URL: this.alertsQueue.queueUrl },
      grants: { table: ['Query'] },
    });
    sweeper.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.alertsQueue.queueArn] }));
    new Rule(this, 'AlertSweepSchedule', {
      description: 'Burnrate: sweep undelivered alerts',
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(sweeper.function)],
    });

    // Provider connections: the admin keys' KMS key, the sync queue (with its DLQ and alarm), the dispatcher on a
    // 15-minute schedule and the worker that syncs (shared/connections/).
    const connectionsKey = new Key(this, 'ConnectionsKey', {
      description: 'Burnrate: wraps the data keys that seal provider admin keys (encryption context accountId, connectionId)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // Not CDK's default `kms:*` for the account: administration by name, and Encrypt/Decrypt delegated to IAM, where
      // only the functions below get them (a key policy's Resource is always the key itself, written `*`).
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({ sid: 'Administer', principals: [new AccountRootPrincipal()], actions: KMS_ADMIN_ACTIONS, resources: ['*'] }),
          new PolicyStatement({ sid: 'DelegateUseToIam', principals: [new AccountRootPrincipal()], actions: ['kms:Encrypt', 'kms:Decrypt'], resources: ['*'] }),
        ],
      }),
    });
    const connectorDeadLetterQueue = new Queue(this, 'ConnectorSyncDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.deadLetterAlarm('ConnectorSyncDeadLetterAlarm', connectorDeadLetterQueue, 'Burnrate: a connection sync failed 3 times and waits in the dead-letter queue');
    // The limits phase of the syncs (shared/sync/limits.ts): per provider a FIFO queue the worker writes after the
    // import and a function that opens the admin key itself to pull the levers, in a nested stack (infra/connector-limits.ts).
    const limits = new ConnectorLimits(this, 'ConnectorLimits', { table: this.table, connectionsKey, adminKeyContext: ADMIN_KEY_CONTEXT, alertsQueue: this.alertsQueue });
    // One queue and one worker per provider: each worker bundles its own provider's client alone
    // (functions/connections/worker-<provider>.ts), and the message names the provider (shared/connections/queue.ts).
    // The queues share one dead-letter queue and its alarm.
    const connectorWorkers: BurnrateFunction[] = [];
    const queues: Partial<Record<Provider, Queue>> = {};
    for (const provider of PROVIDERS) {
      const suffix = providerName(provider);
      const queue = new Queue(this, `ConnectorSyncQueue${suffix}`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(CONNECTOR_WORKER_TIMEOUT.toSeconds() * 6),
        deadLetterQueue: { queue: connectorDeadLetterQueue, maxReceiveCount: CONNECTOR_MAX_RECEIVE_COUNT },
      });
      queues[provider] = queue;
      const limitsQueue = limits.queues[provider];
      const worker = new BurnrateFunction(this, `ConnectorWorker${suffix}`, {
        entry: `connections/worker-${provider}`,
        description: `Syncs one provider connection per message, ${suffix} only: usage, keys and billed costs into the aggregates`,
        table: this.table,
        timeout: CONNECTOR_WORKER_TIMEOUT,
        environment: {
          CONNECTIONS_KMS_KEY_ID: connectionsKey.keyArn,
          ALERTS_QUEUE_URL: this.alertsQueue.queueUrl,
          CONNECTOR_SYNC_INTERVAL_MS: String(15 * 60_000),
          LIMITS_QUEUE_URL: limitsQueue.queueUrl,
        },
        // The connection, account and period counters (GetItem); keys, snapshot cells, days and prices (Query); fired
        // items for a connection's error alert (BatchGetItem); the lease and new alerts (PutItem), the lease's
        // release (DeleteItem); the snapshot, aggregates, keys and the connection's state (UpdateItem); the freeze of
        // closed months: a write to a past open month is conditioned on it staying open (ConditionCheckItem), a month
        // every connection settled closed (PutItem).
        grants: { table: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'DeleteItem', 'UpdateItem', 'ConditionCheckItem'] },
      });
      // Only the sync and the limits pass may unwrap an admin key, and only with its encryption context.
      worker.function.addToRolePolicy(new PolicyStatement({ actions: ['kms:Decrypt'], resources: [connectionsKey.keyArn], conditions: ADMIN_KEY_CONTEXT }));
      worker.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.alertsQueue.queueArn, limitsQueue.queueArn] }));
      // One sync per invocation: a sync that throws fails its record (no partial batch to report).
      worker.function.addEventSource(new SqsEventSource(queue, { batchSize: 1 }));
      connectorWorkers.push(worker);
    }
    this.connectorQueues = queues as Record<Provider, Queue>;
    // What a producer of sync messages gets: every provider's queue URL (JSON) and the right to send to each.
    const connectorQueueUrls = Stack.of(this).toJsonString(Object.fromEntries(PROVIDERS.map((p) => [p, this.connectorQueues[p].queueUrl])));
    const sendsSyncs = (fn: BurnrateFunction) => {
      fn.function.addEnvironment('CONNECTOR_QUEUE_URLS', connectorQueueUrls);
      fn.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: PROVIDERS.map((p) => this.connectorQueues[p].queueArn) }));
    };
    // A sync that found its lease taken queues itself again on its own queue; a limits pass whose anomaly rule stops a
    // key of another connection queues that connection's sync.
    for (const fn of [...connectorWorkers, ...limits.functions]) sendsSyncs(fn);
    // What new spend calls for, off the function that wrote it (a sync worker, POST /ingest;
    // shared/alerting/evaluation-queue.ts): its own queue (with a DLQ and alarm) and function, which never sees an
    // admin key.
    const evaluationDeadLetterQueue = new Queue(this, 'ConnectorEvaluationDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.deadLetterAlarm('ConnectorEvaluationDeadLetterAlarm', evaluationDeadLetterQueue, 'Burnrate: the evaluation of a sync or an ingest (alerts, anomaly rules, reporter blocks) failed 5 times and waits in the dead-letter queue');
    const evaluationQueue = new Queue(this, 'ConnectorEvaluationQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(SYNC_EVALUATOR_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: evaluationDeadLetterQueue, maxReceiveCount: SYNC_EVALUATION_MAX_RECEIVE_COUNT },
    });
    for (const worker of connectorWorkers) {
      worker.function.addEnvironment('EVALUATION_QUEUE_URL', evaluationQueue.queueUrl);
      worker.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [evaluationQueue.queueArn] }));
    }
    const syncEvaluator = new BurnrateFunction(this, 'ConnectorEvaluator', {
      entry: 'connections/evaluate',
      description: 'What new spend calls for, after a sync or an ingest: alerts, spend-anomaly rules, the reporter blocks of stop budgets',
      table: this.table,
      timeout: SYNC_EVALUATOR_TIMEOUT,
      environment: { ALERTS_QUEUE_URL: this.alertsQueue.queueUrl },
      // The account (GetItem); budgets, rules, lever states and triggered plan_limit alerts (Query); spend and fired
      // items (BatchGetItem); new alerts, fired items, lever states and acts (PutItem); acknowledgements and alert
      // counts (UpdateItem); lever states of the old layout carried over (DeleteItem).
      grants: { table: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
    });
    syncEvaluator.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.alertsQueue.queueArn] }));
    syncEvaluator.function.addEventSource(new SqsEventSource(evaluationQueue, { batchSize: 10, reportBatchItemFailures: true }));
    // A key an anomaly rule or a stop budget wants off at its provider: the connection's sync is queued to pull it.
    sendsSyncs(syncEvaluator);
    const queuesEvaluations = (fn: BurnrateFunction) => {
      fn.function.addEnvironment('EVALUATION_QUEUE_URL', evaluationQueue.queueUrl);
      fn.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [evaluationQueue.queueArn] }));
    };
    const connectorDispatcher = new BurnrateFunction(this, 'ConnectorDispatcher', {
      entry: 'connections/dispatch',
      description: 'Queues one sync per due provider connection (sparse index gsi2, 16 shards; no Scan)',
      table: this.table,
      grants: { table: ['Query'] },
    });
    sendsSyncs(connectorDispatcher);
    new Rule(this, 'ConnectorDispatchSchedule', {
      description: 'Burnrate: queue due provider connection syncs',
      // Every minute: a connection holding a stop budget at or past its alert threshold is due every minute
      // (shared/connections/sync.ts HOT_SYNC_INTERVAL_MS); the others stay due every 15 minutes.
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(connectorDispatcher.function)],
    });

    const stripe = this.stripeSettings();
    const billingOff = this.settings.billing === 'off';
    // The HMAC key of pagination cursors (shared/http/cursor.ts): generated once, handed to the user-facing
    // functions as a CloudFormation dynamic reference (resolved at deploy; the template holds no value).
    const cursorSecret = this.generatedSecret(
      'CursorSecret',
      'Burnrate: HMAC key that signs pagination cursors',
      'Rotating the cursor key only invalidates the list cursors clients hold at that moment (they get a 400 and start the list again); rotate it by hand if needed, no rotation Lambda is worth running for it.',
    );
    // The secret CloudFront sends to the API as `x-burnrate-edge` (infra/dashboard.ts): with it, and only with it, the
    // functions with per-IP limits count the viewer's address (shared/http/client-ip.ts). Both get it as a dynamic
    // reference, like the cursor key.
    const edgeSecret = this.generatedSecret(
      'EdgeSecret',
      'Burnrate: origin secret CloudFront adds to /api requests, proving CloudFront-Viewer-Address',
      'The edge secret lives in two places that a rotation Lambda would have to update together (the distribution\'s origin header and the functions\' EDGE_SECRET); a mismatch only makes the per-IP limits count CloudFront edges again. Rotate it by hand (put a new value, redeploy) if it leaks.',
    );
    const functions = new Map<string, BurnrateFunction>();
    for (const route of props.routes ?? defaultRoutes) {
      const id = routeId(route);
      // The event stream alone (POST /ingest), not every ingest-key route: the reporter's block list (GET
      // /ingest/blocks) is a small read that shares the account's pool with the dashboard's routes.
      const reserved =
        route.auth === 'ingestKey' && route.method === 'POST' && route.path === '/ingest'
          ? reservedConcurrency.ingest
          : route.auth === 'stripe'
            ? reservedConcurrency.webhook
            : 0;
      const fn = new BurnrateFunction(this, id, {
        route,
        table: this.table,
        userPool: this.userPool,
        userPoolClient: this.userPoolClient,
        corsOrigins,
        reservedConcurrentExecutions: reserved,
      });
      functions.set(id, fn);
      if (route.auth === 'jwt') fn.function.addEnvironment('CURSOR_SECRET', cursorSecret.secretValue.unsafeUnwrap());
      if (route.clientIp) fn.function.addEnvironment('EDGE_SECRET', edgeSecret.secretValue.unsafeUnwrap());
      if (route.publishesAlerts) {
        fn.function.addEnvironment('ALERTS_QUEUE_URL', this.alertsQueue.queueUrl);
        // SendMessageBatch is authorized as sqs:SendMessage; the queue's SSE is SQS-managed (no KMS grant).
        fn.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.alertsQueue.queueArn] }));
      }
      // Billing: the Stripe secret (read access to it alone) and config for the functions that call Stripe; the
      // webhook also on its own Function URL (no API Gateway in between; the handler verifies Stripe's signature).
      if (route.stripe && stripe) grantStripe(fn, stripe);
      // -c billing=off: no Stripe at all; the billing routes answer 503 problem+json (shared/http/handler.ts).
      if (route.stripe && billingOff) fn.function.addEnvironment('BILLING', 'off');
      if (route.sealsAdminKeys) {
        // Seal only: kms:Encrypt with the admin keys' encryption context; never Decrypt.
        fn.function.addEnvironment('CONNECTIONS_KMS_KEY_ID', connectionsKey.keyArn);
        fn.function.addToRolePolicy(new PolicyStatement({ actions: ['kms:Encrypt'], resources: [connectionsKey.keyArn], conditions: ADMIN_KEY_CONTEXT }));
      }
      if (route.queuesSyncs) sendsSyncs(fn);
      if (route.queuesEvaluations) queuesEvaluations(fn);
      if (route.sendsEmail) {
        for (const [name, value] of Object.entries(emailEnvironment(email, this.settings.dashboardUrl))) fn.function.addEnvironment(name, value);
        if (email !== 'off') this.grantSendEmail(fn, email);
      }
      if (route.auth === 'stripe' && !billingOff) {
        const url = fn.function.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
        new CfnOutput(this, 'StripeWebhookUrl', { value: url.url, description: 'Stripe webhook endpoint (Function URL)' });
      }
      const apiRoutes = this.api.addRoutes({
        path: `${API_PREFIX}${route.path}`,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${id}Integration`, fn.function),
        ...(route.auth === 'jwt' ? { authorizer } : {}),
      });
      if (route.auth !== 'jwt') {
        for (const apiRoute of apiRoutes) Validations.of(apiRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: UNAUTHORIZED_ROUTE_REASON[route.auth] });
      }
    }
    this.functions = functions;

    const webDist: unknown = props.webDist ?? this.node.tryGetContext('webDist');
    this.dashboard = new Dashboard(this, 'Dashboard', { api: this.api, edgeSecret, ...(webDist ? { webDist: String(webDist) } : {}) });
    new CfnOutput(this, 'DashboardUrl', { value: this.dashboard.url, description: 'The dashboard (CloudFront); the API is under /api on it' });

    // Asynchronous exports: their bucket logs beside the dashboard's; the routes get their queue and signing grants.
    this.exports = new SpendExports(this, 'Exports', { table: this.table, logBucket: this.dashboard.logBucket });
    for (const fn of functions.values()) if (fn.route) this.exports.grantRoute(fn, fn.route);

    new CfnOutput(this, 'ApiUrl', { value: `${this.stage.url}${API_PREFIX.slice(1)}` });
    new CfnOutput(this, 'UserPoolId', { value: this.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: this.userPoolClient.userPoolClientId });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }

  /**
   * SES SendEmail for one function. In the SES sandbox (every new account) SES authorizes the sender's identity AND
   * each recipient's (verified) identity, so a grant on `identity/<sesIdentity>` alone is denied there: the grant
   * names every identity of this account and region, and is held to our one sender by the `ses:FromAddress`
   * condition — it can send nothing from any other address.
   */
  /**
   * A 64-character secret the stack generates, handed on as a CloudFormation dynamic reference (the template holds no
   * value). Not rotated by a Lambda: `rotation` says why, for cdk-nag's AwsSolutions-SMG4.
   */
  private generatedSecret(id: string, description: string, rotation: string): Secret {
    const secret = new Secret(this, id, { description, generateSecretString: { passwordLength: 64, excludePunctuation: true } });
    Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: rotation });
    return secret;
  }

  /** An alarm as soon as one message waits in a dead-letter queue (failures must not go unnoticed). */
  private deadLetterAlarm(id: string, queue: Queue, description: string): Alarm {
    return new Alarm(this, id, {
      alarmDescription: description,
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  private grantSendEmail(fn: BurnrateFunction, email: EmailDeploySettings): void {
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail', 'ses:SendRawEmail'],
        resources: [this.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' })],
        conditions: { StringEquals: { 'ses:FromAddress': email.fromAddress } },
      }),
    );
    // This one finding only (cdk-nag's granular id): any other wildcard in the policy still fails the synth.
    Validations.of(fn.role).acknowledge({
      id: SES_IDENTITY_WILDCARD_FINDING,
      reason:
        'SES authorizes the recipient identities too while the account is in the SES sandbox, so SendEmail needs ' +
        `identity/* of this account and region; the statement is held to the one sender ${email.fromAddress} by a ` +
        'ses:FromAddress condition.',
    });
  }

  /** The Stripe secret, price ids and redirect URLs (checked by infra/settings.ts); undefined with billing off. */
  private stripeSettings(): StripeSettings | undefined {
    const billing = this.settings.billing;
    if (billing === 'off') return undefined;
    return {
      secret: Secret.fromSecretNameV2(this, 'StripeSecret', billing.secretName),
      ...(billing.secretKmsKeyArn ? { kmsKeyArn: billing.secretKmsKeyArn } : {}),
      prices: billing.prices,
      successUrl: billing.successUrl,
      cancelUrl: billing.cancelUrl,
      portalReturnUrl: billing.portalReturnUrl,
    };
  }

  private corsOriginsFromContext(): string[] {
    const value: unknown = this.node.tryGetContext('corsOrigins');
    const list = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value.split(',') : ['*'];
    const origins = list.map((s) => s.trim()).filter(Boolean);
    return origins.length > 0 ? origins : ['*'];
  }

  /** Props first, then context (`ingestReservedConcurrency`, `webhookReservedConcurrency`), then the defaults. */
  private reservedConcurrency(given: Partial<ReservedConcurrencyProps>): ReservedConcurrencyProps {
    const value = (key: keyof ReservedConcurrencyProps): number => {
      const contextKey = `${key}ReservedConcurrency`;
      const raw: unknown = given[key] ?? this.node.tryGetContext(contextKey);
      if (raw === undefined || raw === null || raw === '') return DEFAULT_RESERVED_CONCURRENCY[key];
      const n = Number(raw);
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${contextKey} must be a whole number ≥ 0 (0 = unreserved), got ${String(raw)}`);
      return n;
    };
    return { ingest: value('ingest'), webhook: value('webhook') };
  }

  private throttleFromContext(): ThrottleProps {
    const num = (key: string, fallback: number): number => {
      const value: unknown = this.node.tryGetContext(key);
      if (value === undefined || value === null || value === '') return fallback;
      const n = Number(value);
      if (!Number.isFinite(n) || n < 0) throw new Error(`context ${key} must be a non-negative number, got ${String(value)}`);
      return n;
    };
    return {
      rateLimit: num('throttleRateLimit', DEFAULT_THROTTLE.rateLimit),
      burstLimit: num('throttleBurstLimit', DEFAULT_THROTTLE.burstLimit),
    };
  }
}

/**
 * What a function that sends e-mail or Slack messages reads (shared/notify/email.ts, shared/config.ts): the dashboard
 * URL of links (docs/features/identity-and-teams.md appUrl), and the sender; with `-c email=off`, `EMAIL_DELIVERY=off`
 * (the e-mail channel then fails at once, never retried) — the Slack links still point into the dashboard.
 */
function emailEnvironment(email: DeploySettings['email'], dashboardUrl: string): Record<string, string> {
  if (email === 'off') return { EMAIL_DELIVERY: 'off', DASHBOARD_URL: dashboardUrl };
  return { ALERT_EMAIL_FROM: email.alertEmailFrom, DASHBOARD_URL: email.dashboardUrl };
}
