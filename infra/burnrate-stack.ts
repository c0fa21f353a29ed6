import { CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import {
  AccountRecovery,
  ClientAttributes,
  StringAttribute,
  UserPool,
  UserPoolClient,
} from 'aws-cdk-lib/aws-cognito';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
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
}

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
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle,
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

    const stripe = this.stripeSettings();
    const functions = new Map<string, BurnrateFunction>();
    for (const route of props.routes ?? defaultRoutes) {
      const id = routeId(route);
      const fn = new BurnrateFunction(this, id, {
        route,
        table: this.table,
        userPool: this.userPool,
        userPoolClient: this.userPoolClient,
        corsOrigins,
      });
      functions.set(id, fn);
      if (route.publishesAlerts) {
        fn.function.addEnvironment('ALERTS_QUEUE_URL', this.alertsQueue.queueUrl);
        // SendMessageBatch is authorized as sqs:SendMessage; the queue's SSE is SQS-managed (no KMS grant).
        fn.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.alertsQueue.queueArn] }));
      }
      // Billing: the Stripe secret (read access to it alone) and config for the functions that call Stripe; the
      // webhook also on its own Function URL (no API Gateway in between; the handler verifies Stripe's signature).
      if (route.stripe) grantStripe(fn, stripe);
      if (route.auth === 'stripe') {
        const url = fn.function.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
        new CfnOutput(this, 'StripeWebhookUrl', { value: url.url, description: 'Stripe webhook endpoint (Function URL)' });
      }
      this.api.addRoutes({
        path: `${API_PREFIX}${route.path}`,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${id}Integration`, fn.function),
        ...(route.auth === 'jwt' ? { authorizer } : {}),
      });
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
