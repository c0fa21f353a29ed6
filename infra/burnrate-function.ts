import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { AddToPrincipalPolicyResult, RoleProps } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IUserPool, IUserPoolClient } from 'aws-cdk-lib/aws-cognito';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { TABLE } from '#shared/db/table.ts';
import type { CognitoAction, Route, TableAction } from '#shared/routes.ts';

/** The repository root (this file lives in `<root>/infra/`). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `functions/<handler>.ts`, absolute. */
export function handlerEntry(route: Pick<Route, 'handler'>): string {
  return join(PROJECT_ROOT, 'functions', `${route.handler}.ts`);
}

/** Lets ESM bundles `require()` the CommonJS dependencies they pull in. */
const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** The Lambda runtime of every function; the bundles target the same Node version. */
export const LAMBDA_RUNTIME = Runtime.NODEJS_22_X;

/**
 * The esbuild settings of every function (besides `sourceMap`, a per-function choice that defaults to off). ONE
 * object, read by NodejsFunction below and by `bench/cold.ts` through {@link esbuildOptions}, so the benchmark
 * measures exactly the bundles that are deployed.
 */
export const LAMBDA_BUNDLING = {
  format: OutputFormat.ESM,
  minify: true,
  target: 'node22',
  // `module` first: the ESM builds of the AWS SDK tree-shake (the document client ~535 KB → ~334 KB).
  mainFields: ['module', 'main'],
  // Bundle the AWS SDK too: the runtime's copy is slower to initialise.
  externalModules: [] as string[],
  banner: ESM_REQUIRE_BANNER,
} satisfies BundlingOptions;

/**
 * {@link LAMBDA_BUNDLING} as esbuild build options, flag for flag what NodejsFunction's local bundling passes to
 * the esbuild CLI (aws-cdk-lib/aws-lambda-nodejs `Bundling.buildEsbuildArgs`): `--bundle <entry> --target
 * --platform=node --format --outfile=<dir>/index.mjs --minify [--sourcemap] --external:… --banner:js
 * --main-fields`. Used by the cold-start benchmark.
 */
export function esbuildOptions(entry: string, outfile: string, sourceMap = false): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    target: LAMBDA_BUNDLING.target,
    platform: 'node',
    format: LAMBDA_BUNDLING.format === OutputFormat.ESM ? 'esm' : 'cjs',
    outfile,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: sourceMap,
    external: [...LAMBDA_BUNDLING.externalModules],
    banner: { js: LAMBDA_BUNDLING.banner },
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    absWorkingDir: PROJECT_ROOT,
  };
}

/**
 * An execution role whose every grant lands in ONE inline policy of the role (`Policies` of the AWS::IAM::Role)
 * instead of a separate AWS::IAM::Policy resource: the same statements, one CloudFormation resource fewer per
 * function, so the stack stays under CloudFormation's 500 resources (docs/deployment.md "Resources per stack").
 */
class InlinePolicyRole extends Role {
  private readonly document: PolicyDocument;

  constructor(scope: Construct, id: string, props: RoleProps) {
    const document = new PolicyDocument();
    super(scope, id, { ...props, inlinePolicies: { ...props.inlinePolicies, access: document } });
    this.document = document;
  }

  override addToPrincipalPolicy(statement: PolicyStatement): AddToPrincipalPolicyResult {
    this.document.addStatements(statement);
    return { statementAdded: true, policyDependable: this };
  }
}

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
  /**
   * Reserved concurrency: at most this many instances run at once, and they are always available to this function.
   * `undefined` or 0 = unreserved (shares the account's pool). @default unreserved
   */
  reservedConcurrentExecutions?: number;
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
  /** Its execution role: its own log group, plus exactly the grants declared. */
  readonly role: Role;
  /** The handler module it bundles (absolute path), and whether with a source map: read by bench/cold.ts. */
  readonly entry: string;
  readonly sourceMap: boolean;
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
    this.entry = handlerEntry({ handler: spec.entry });
    this.sourceMap = sourceMap;

    // An explicit log group instead of the deprecated `logRetention`, which adds a custom-resource Lambda.
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Its own role instead of the managed AWSLambdaBasicExecutionRole (logs:CreateLogGroup/CreateLogStream/
    // PutLogEvents on every log group in the account): write access to this function's log group alone.
    this.role = new InlinePolicyRole(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${spec.description}`,
    });
    this.logGroup.grantWrite(this.role);

    const reserved = props.reservedConcurrentExecutions;
    if (reserved !== undefined && (!Number.isSafeInteger(reserved) || reserved < 0)) {
      throw new Error(`${id}: reservedConcurrentExecutions must be a whole number ≥ 0 (0 = unreserved), got ${reserved}`);
    }

    this.function = new NodejsFunction(this, 'Function', {
      description: spec.description,
      entry: this.entry,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      role: this.role,
      ...(reserved ? { reservedConcurrentExecutions: reserved } : {}),
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      logGroup: this.logGroup,
      environment: {
        TABLE_NAME: table.tableName,
        ...spec.environment,
        ...(sourceMap ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
      },
      bundling: { ...LAMBDA_BUNDLING, sourceMap },
    });
    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Pinned on purpose to nodejs22.x (maintained until 2027), the Node version the bundles target (esbuild ' +
        '`node22`) and the project is tested on; moving to a newer runtime is a deliberate change of LAMBDA_RUNTIME ' +
        'and the esbuild target together, not something a new AWS runtime release should force.',
    });

    if (spec.tableActions.length > 0) {
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: spec.tableActions.map((action) => `dynamodb:${action}`),
          resources: tableResources(table, spec.tableActions),
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

/** Of the table actions, the ones that can read an index (Scan is never granted). */
const INDEX_ACTIONS: ReadonlySet<TableAction> = new Set(['Query']);

/**
 * The table's ARN, and each of its indexes by name (no `index/*` wildcard) when the actions can use an index.
 */
export function tableResources(table: ITable, actions: readonly TableAction[]): string[] {
  const indexes = actions.some((a) => INDEX_ACTIONS.has(a)) ? TABLE.indexes.map((i) => `${table.tableArn}/index/${i.name}`) : [];
  return [table.tableArn, ...indexes];
}

/** What the billing functions (routes with `stripe: true`) need to talk to Stripe. */
export interface StripeSettings {
  /** The Secrets Manager secret `{secretKey, webhookSecret}` (JSON). */
  secret: ISecret;
  /** The customer-managed KMS key that encrypts the secret, if not the AWS-managed one: kms:Decrypt on it. */
  kmsKeyArn?: string;
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
  if (stripe.kmsKeyArn) {
    // Only through Secrets Manager in this region: the key decrypts nothing else for this role.
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [stripe.kmsKeyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(fn).region}.amazonaws.com` } },
      }),
    );
  }
}
