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
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { TABLE } from '#shared/db/table.ts';
import { API_PREFIX, routeId, routes as defaultRoutes } from '#shared/routes.ts';
import type { Route } from '#shared/routes.ts';
import { BurnrateFunction } from './burnrate-function.ts';

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
}

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
