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
import type { Route } from '#shared/routes.ts';

/** The repository root (this file lives in `<root>/infra/`). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `functions/<handler>.ts`, absolute. */
export function handlerEntry(route: Pick<Route, 'handler'>): string {
  return join(PROJECT_ROOT, 'functions', `${route.handler}.ts`);
}

/** Lets ESM bundles `require()` the CommonJS dependencies they pull in. */
const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

export interface BurnrateFunctionProps {
  route: Route;
  table: ITable;
  userPool: IUserPool;
  userPoolClient: IUserPoolClient;
  /** Allowed CORS origins, handed to the handler as `CORS_ORIGINS` (comma-separated). */
  corsOrigins: readonly string[];
  /** @default 512 */
  memorySize?: number;
  /** @default 10 seconds */
  timeout?: Duration;
  /** Source maps make stack traces readable but cost cold-start time. @default false */
  sourceMap?: boolean;
  /** @default one month */
  logRetention?: RetentionDays;
}

/**
 * One route's Lambda with the project's defaults: Node 22 on arm64, an ESM bundle with the AWS SDK inside,
 * its own log group, and IAM grants of exactly the table and Cognito actions the route declares.
 */
export class BurnrateFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  readonly route: Route;

  constructor(scope: Construct, id: string, props: BurnrateFunctionProps) {
    super(scope, id);
    const { route, table, userPool, userPoolClient } = props;
    const sourceMap = props.sourceMap ?? false;
    this.route = route;

    // An explicit log group instead of the deprecated `logRetention`, which adds a custom-resource Lambda.
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.function = new NodejsFunction(this, 'Function', {
      description: `${route.method} ${route.path}`,
      entry: handlerEntry(route),
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
        USER_POOL_ID: userPool.userPoolId,
        USER_POOL_CLIENT_ID: userPoolClient.userPoolClientId,
        CORS_ORIGINS: props.corsOrigins.join(','),
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

    if (route.table.length > 0) {
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: route.table.map((action) => `dynamodb:${action}`),
          resources: [table.tableArn, `${table.tableArn}/index/*`],
        }),
      );
    }
    const cognito = route.cognito ?? [];
    if (cognito.length > 0) {
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: cognito.map((action) => `cognito-idp:${action}`),
          resources: [userPool.userPoolArn],
        }),
      );
    }
  }
}
