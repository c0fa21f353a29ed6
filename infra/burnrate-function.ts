import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IUserPool, IUserPoolClient } from 'aws-cdk-lib/aws-cognito';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { CognitoAction, Route, TableAction } from '#shared/routes.ts';

/** The repository root (this file lives in `<root>/infra/`). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `functions/<handler>.ts`, absolute. */
export function handlerEntry(route: Pick<Route, 'handler'>): string {
  return join(PROJECT_ROOT, 'functions', `${route.handler}.ts`);
}

/** Lets ESM bundles `require()` the CommonJS dependencies they pull in. */
const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** Settings every function shares, with the project's defaults. */
export interface FunctionDefaults {
  /** @default 512 */
  memorySize?: number;
  /** @default 10 seconds */
  timeout?: Duration;
  /** Source maps make stack traces readable but cost cold-start time. @default false */
  sourceMap?: boolean;
  /** @default one month */
  logRetention?: RetentionDays;
}

/** A route's function: env and grants come from the route table. */
export interface RouteFunctionProps extends FunctionDefaults {
  route: Route;
  table: ITable;
  userPool: IUserPool;
  userPoolClient: IUserPoolClient;
  /** Allowed CORS origins, handed to the handler as `CORS_ORIGINS` (comma-separated). */
  corsOrigins: readonly string[];
}

/** Any other function (a queue consumer): its handler module, its environment and exactly its grants. */
export interface HandlerFunctionProps extends FunctionDefaults {
  /** Handler module under functions/, without extension: `notify/worker`. */
  entry: string;
  description: string;
  table: ITable;
  /** Besides TABLE_NAME, which every function gets. */
  environment?: Record<string, string>;
  grants: { table: readonly TableAction[]; cognito?: readonly CognitoAction[]; userPool?: IUserPool };
}

export type BurnrateFunctionProps = RouteFunctionProps | HandlerFunctionProps;

const isRoute = (props: BurnrateFunctionProps): props is RouteFunctionProps => 'route' in props;

/**
 * A Lambda with the project's defaults: Node 22 on arm64, an ESM bundle with the AWS SDK inside, its own log
 * group, and IAM grants of exactly the table and Cognito actions declared — by its route (`route`), or by
 * `grants` for a function that no route serves (`entry`).
 */
export class BurnrateFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  /** The route it serves; undefined for a non-route function. */
  readonly route: Route | undefined;

  constructor(scope: Construct, id: string, props: BurnrateFunctionProps) {
    super(scope, id);
    const { table } = props;
    const sourceMap = props.sourceMap ?? false;
    const spec = isRoute(props)
      ? {
          entry: props.route.handler,
          description: `${props.route.method} ${props.route.path}`,
          environment: {
            USER_POOL_ID: props.userPool.userPoolId,
            USER_POOL_CLIENT_ID: props.userPoolClient.userPoolClientId,
            CORS_ORIGINS: props.corsOrigins.join(','),
          },
          tableActions: props.route.table,
          cognitoActions: props.route.cognito ?? [],
          userPool: props.userPool as IUserPool | undefined,
        }
      : {
          entry: props.entry,
          description: props.description,
          environment: props.environment ?? {},
          tableActions: props.grants.table,
          cognitoActions: props.grants.cognito ?? [],
          userPool: props.grants.userPool,
        };
    this.route = isRoute(props) ? props.route : undefined;

    // An explicit log group instead of the deprecated `logRetention`, which adds a custom-resource Lambda.
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.function = new NodejsFunction(this, 'Function', {
      description: spec.description,
      entry: handlerEntry({ handler: spec.entry }),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      logGroup: this.logGroup,
      environment: {
        TABLE_NAME: table.tableName,
        ...spec.environment,
        ...(sourceMap ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
      },
      bundling: {
        format: OutputFormat.ESM,
        minify: true,
        sourceMap,
        target: 'node22',
        mainFields: ['module', 'main'],
        // Bundle the AWS SDK too: the runtime's copy is slower to initialise.
        externalModules: [],
        banner: ESM_REQUIRE_BANNER,
      },
    });

    if (spec.tableActions.length > 0) {
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: spec.tableActions.map((action) => `dynamodb:${action}`),
          resources: [table.tableArn, `${table.tableArn}/index/*`],
        }),
      );
    }
    if (spec.cognitoActions.length > 0) {
      if (!spec.userPool) throw new Error(`${id}: Cognito actions need a user pool`);
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: spec.cognitoActions.map((action) => `cognito-idp:${action}`),
          resources: [spec.userPool.userPoolArn],
        }),
      );
    }
  }
}

/** What the billing functions (routes with `stripe: true`) need to talk to Stripe. */
export interface StripeSettings {
  /** The Secrets Manager secret `{secretKey, webhookSecret}` (JSON). */
  secret: ISecret;
  /** Stripe price ids of the paid plans. */
  prices: { GROWTH?: string; SCALE?: string };
  successUrl?: string;
  cancelUrl?: string;
  portalReturnUrl?: string;
}

/**
 * Gives a billing function its Stripe configuration: the secret's ARN (read at cold start by
 * shared/billing/stripe.ts), the price ids and redirect URLs as env, and `secretsmanager:GetSecretValue` on exactly
 * that secret — nothing else (no DescribeSecret, no other secret).
 */
export function grantStripe(fn: BurnrateFunction, stripe: StripeSettings): void {
  const env: Record<string, string | undefined> = {
    STRIPE_SECRET_ARN: stripe.secret.secretArn,
    STRIPE_PRICE_GROWTH: stripe.prices.GROWTH,
    STRIPE_PRICE_SCALE: stripe.prices.SCALE,
    BILLING_SUCCESS_URL: stripe.successUrl,
    BILLING_CANCEL_URL: stripe.cancelUrl,
    BILLING_PORTAL_RETURN_URL: stripe.portalReturnUrl,
  };
  for (const [name, value] of Object.entries(env)) if (value) fn.function.addEnvironment(name, value);
  // A secret imported by name has a partial ARN; the real one ends in `-` and 6 random characters.
  const arn = stripe.secret.secretFullArn ?? `${stripe.secret.secretArn}-??????`;
  fn.function.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [arn] }));
}
