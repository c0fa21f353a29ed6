import { CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
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
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { TABLE } from '#shared/db/table.ts';
import { API_PREFIX, routeId, routes as defaultRoutes } from '#shared/routes.ts';
import type { Route } from '#shared/routes.ts';
import { BurnrateFunction, grantStripe, type StripeSettings } from './burnrate-function.ts';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';

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
  /** Alert e-mail and links. @default from context `sesIdentity`, `alertEmailFrom`, `dashboardUrl` */
  alerts?: Partial<AlertSettings>;
  /**
   * Reserved concurrency of the functions open to machines. @default context `ingestReservedConcurrency` /
   * `webhookReservedConcurrency`, else {@link DEFAULT_RESERVED_CONCURRENCY}; 0 = unreserved.
   */
  reservedConcurrency?: Partial<ReservedConcurrencyProps>;
}

/**
 * Reserved concurrency caps the two functions that machines call in bulk, so a flood of events (POST /ingest) or
 * of webhook calls (the Function URL has no API Gateway throttle in front of it) cannot take the account's whole
 * concurrency from the dashboard's routes, and always leaves them this much.
 *
 * 0 = unreserved. New AWS accounts start with a concurrency quota as low as 10, and Lambda refuses any reservation
 * that leaves fewer than 10 unreserved: deploy there with `-c ingestReservedConcurrency=0 -c
 * webhookReservedConcurrency=0` until the quota (Service Quotas → Lambda → Concurrent executions) is raised.
 */
export interface ReservedConcurrencyProps {
  /** POST /ingest (auth `ingestKey`). */
  ingest: number;
  /** POST /billing/webhook (auth `stripe`), on the API and its Function URL. */
  webhook: number;
}

export const DEFAULT_RESERVED_CONCURRENCY: ReservedConcurrencyProps = { ingest: 50, webhook: 10 };

export interface AlertSettings {
  /** The SES identity (domain or address) alert e-mail is sent from; the notifier may use no other. */
  sesIdentity: string;
  /** The From address. @default `alerts@<sesIdentity>` */
  alertEmailFrom: string;
  /** The dashboard's URL, linked from alert e-mail. @default none */
  dashboardUrl?: string;
}

export const DEFAULT_SES_IDENTITY = 'example.com';
/** The notifier's timeout: a webhook's 5 s, SES calls for each user, DynamoDB, for 10 records in parallel. */
export const NOTIFIER_TIMEOUT = Duration.seconds(30);
/** Receives of one alert message before it moves to the dead-letter queue (MAX_ATTEMPTS 5 per channel + 1). */
export const ALERTS_MAX_RECEIVE_COUNT = 6;

/** Name of the Secrets Manager secret with the Stripe keys (context `stripeSecretName`). */
export const DEFAULT_STRIPE_SECRET_NAME = 'burnrate/stripe';

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

const CORS_METHODS = [
  CorsHttpMethod.GET,
  CorsHttpMethod.POST,
  CorsHttpMethod.PATCH,
  CorsHttpMethod.DELETE,
  CorsHttpMethod.OPTIONS,
];

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
  readonly alertsDeadLetterQueue: Queue;
  /** Delivers alerts (e-mail through SES, signed webhooks). */
  readonly notifier: BurnrateFunction;

  constructor(scope: Construct, id: string, props: BurnrateStackProps = {}) {
    super(scope, id, props);
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
    });
    for (const index of TABLE.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
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
        'The password policy is the API contract (API.md): at least 8 characters with upper case, lower case and ' +
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
        allowHeaders: ['authorization', 'content-type', 'x-api-key'],
        allowMethods: CORS_METHODS,
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

    const alerts = this.alertSettings(props.alerts ?? {});
    this.alertsDeadLetterQueue = new Queue(this, 'AlertsDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    // Alerts that were never delivered must not go unnoticed: an alarm as soon as one reaches the dead-letter queue.
    new Alarm(this, 'AlertsDeadLetterAlarm', {
      alarmDescription: 'Burnrate: alert deliveries failed 6 times and wait in the dead-letter queue',
      metric: this.alertsDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
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
      environment: {
        ALERT_EMAIL_FROM: alerts.alertEmailFrom,
        SES_IDENTITY: alerts.sesIdentity,
        ...(alerts.dashboardUrl ? { DASHBOARD_URL: alerts.dashboardUrl } : {}),
      },
      // The alert and the account's webhook secret (GetItem), claims and outcomes of deliveries and the secret's
      // lazy creation (UpdateItem), the account's users for e-mail (Query).
      grants: { table: ['GetItem', 'UpdateItem', 'Query'] },
    });
    this.notifier.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail', 'ses:SendRawEmail'],
        resources: [this.formatArn({ service: 'ses', resource: 'identity', resourceName: alerts.sesIdentity })],
      }),
    );
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

    const stripe = this.stripeSettings();
    // The HMAC key of pagination cursors (shared/http/cursor.ts): generated once, handed to the user-facing
    // functions as a CloudFormation dynamic reference (resolved at deploy; the template holds no value).
    const cursorSecret = new Secret(this, 'CursorSecret', {
      description: 'Burnrate: HMAC key that signs pagination cursors',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    Validations.of(cursorSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating the cursor key only invalidates the list cursors clients hold at that moment (they get a 400 and start the list again); rotate it by hand if needed, no rotation Lambda is worth running for it.',
    });
    const functions = new Map<string, BurnrateFunction>();
    for (const route of props.routes ?? defaultRoutes) {
      const id = routeId(route);
      const reserved =
        route.auth === 'ingestKey' ? reservedConcurrency.ingest : route.auth === 'stripe' ? reservedConcurrency.webhook : 0;
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
      if (route.publishesAlerts) {
        fn.function.addEnvironment('ALERTS_QUEUE_URL', this.alertsQueue.queueUrl);
        // SendMessageBatch is authorized as sqs:SendMessage; the queue's SSE is SQS-managed (no KMS grant).
        fn.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.alertsQueue.queueArn] }));
      }
      // Billing: the Stripe secret (read access to it alone) and config for the functions that call Stripe; the
      // webhook also on its own Function URL (no API Gateway in between; the handler verifies Stripe's signature).
      if (route.stripe) grantStripe(fn, stripe);
      // Account e-mail (verification, reset, invitation links): the From, the links' appUrl, SES on the one identity.
      if (route.sendsEmail) {
        fn.function.addEnvironment('ALERT_EMAIL_FROM', alerts.alertEmailFrom);
        if (alerts.dashboardUrl) fn.function.addEnvironment('DASHBOARD_URL', alerts.dashboardUrl);
        fn.function.addToRolePolicy(
          new PolicyStatement({
            actions: ['ses:SendEmail', 'ses:SendRawEmail'],
            resources: [this.formatArn({ service: 'ses', resource: 'identity', resourceName: alerts.sesIdentity })],
          }),
        );
      }
      if (route.auth === 'stripe') {
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

    new CfnOutput(this, 'ApiUrl', { value: `${this.stage.url}${API_PREFIX.slice(1)}` });
    new CfnOutput(this, 'UserPoolId', { value: this.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: this.userPoolClient.userPoolClientId });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }

  /** Props first, then context, then the defaults. */
  private alertSettings(given: Partial<AlertSettings>): AlertSettings {
    const text = (key: keyof AlertSettings): string | undefined => {
      const value: unknown = given[key] ?? this.node.tryGetContext(key);
      return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
    };
    const sesIdentity = text('sesIdentity') ?? DEFAULT_SES_IDENTITY;
    if (/[*?\s]/.test(sesIdentity)) throw new Error(`sesIdentity must be one SES identity (a domain or address), got "${sesIdentity}"`);
    const dashboardUrl = text('dashboardUrl');
    return {
      sesIdentity,
      alertEmailFrom: text('alertEmailFrom') ?? `alerts@${sesIdentity}`,
      ...(dashboardUrl ? { dashboardUrl } : {}),
    };
  }

  /**
   * Stripe, from context: `stripeSecretName` (default `burnrate/stripe`: a Secrets Manager secret created outside
   * the stack, JSON `{secretKey, webhookSecret}`), `stripePriceGrowth` / `stripePriceScale` (price ids), and the
   * redirect URLs `billingSuccessUrl` / `billingCancelUrl` / `billingPortalReturnUrl` (default: under `dashboardUrl`).
   */
  private stripeSettings(): StripeSettings {
    const text = (key: string): string | undefined => {
      const value: unknown = this.node.tryGetContext(key);
      return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
    };
    const dashboard = text('dashboardUrl')?.replace(/\/+$/, '');
    const secret = Secret.fromSecretNameV2(this, 'StripeSecret', text('stripeSecretName') ?? DEFAULT_STRIPE_SECRET_NAME);
    const successUrl = text('billingSuccessUrl') ?? (dashboard && `${dashboard}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`);
    const cancelUrl = text('billingCancelUrl') ?? (dashboard && `${dashboard}/billing?checkout=canceled`);
    const portalReturnUrl = text('billingPortalReturnUrl') ?? (dashboard && `${dashboard}/billing`);
    return {
      secret,
      prices: { GROWTH: text('stripePriceGrowth'), SCALE: text('stripePriceScale') },
      ...(successUrl ? { successUrl } : {}),
      ...(cancelUrl ? { cancelUrl } : {}),
      ...(portalReturnUrl ? { portalReturnUrl } : {}),
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
