/**
 * Runtime configuration, read from the environment once per container.
 * In AWS the CDK stack sets these; locally `local/start.ts` does.
 * `*_ENDPOINT` variables exist only locally: their presence switches clients to the embedded stack.
 */
export interface Config {
  tableName: string;
  region: string;
  userPoolId: string;
  userPoolClientId: string;
  /** Local only: DynamoDB Local's URL. */
  dynamodbEndpoint?: string;
  /** Local only: cognito-local's URL (its presence selects the local JWT verifier). */
  cognitoEndpoint?: string;
  /** Allowed CORS origins for the dashboard SPA (comma-separated in env; `*` allows any). */
  corsOrigins: string[];
  /** HMAC key of pagination cursors (a Secrets Manager value in AWS; generated and kept under .data/ locally). */
  cursorSecret: string;
}

let cached: Config | undefined;

export function config(): Config {
  cached ??= readConfig(process.env);
  return cached;
}

/** For tests and the local stack, which set the environment after import. */
export function resetConfig(): void {
  cached = undefined;
}

export function readConfig(env: NodeJS.ProcessEnv): Config {
  return {
    tableName: env.TABLE_NAME ?? 'burnrate',
    region: env.AWS_REGION ?? 'us-east-1',
    userPoolId: env.USER_POOL_ID ?? '',
    userPoolClientId: env.USER_POOL_CLIENT_ID ?? '',
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    cognitoEndpoint: env.COGNITO_ENDPOINT || undefined,
    cursorSecret: env.CURSOR_SECRET ?? '',
    corsOrigins: (env.CORS_ORIGINS ?? '*').split(',').map((s) => s.trim()).filter(Boolean),
  };
}
