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
  /**
   * `appUrl` of docs/features/identity-and-teams.md: the dashboard's address, which every e-mailed link points into
   * (env `DASHBOARD_URL`; locally `http://localhost:<PORT>`). Empty when not configured.
   */
  appUrl: string;
  /** HMAC key of pagination cursors (a Secrets Manager value in AWS; generated and kept under .data/ locally). */
  cursorSecret: string;
  /**
   * Local and tests only (env `ALLOW_INSECURE_WEBHOOKS=true`): alert-rule webhook URLs may then use `http:` and
   * point at loopback/private/link-local hosts, so a test can run a plain-http receiver on 127.0.0.1. Never set
   * in AWS: there a webhook must be `https:` on a public host (no SSRF into the VPC or the metadata service).
   */
  allowInsecureWebhooks: boolean;
  /** The deployment runs without billing (`-c billing=off` → env `BILLING=off` on the billing functions). */
  billingOff: boolean;
  /**
   * The request limits of docs/security.md (register and forgot-password per source IP, failed logins per
   * e-mail and IP). On unless env `RATE_LIMITS=off` (local test suites and demo seeding only).
   */
  rateLimits: boolean;
  /**
   * The secret our CloudFront distribution sends in `x-burnrate-edge` (env `EDGE_SECRET`, a Secrets Manager value
   * in AWS on the functions with per-IP limits): only with it is `CloudFront-Viewer-Address` believed
   * (shared/http/client-ip.ts). Empty locally and elsewhere: the client is then always API Gateway's `sourceIp`.
   */
  edgeSecret: string;
  /** Stripe and billing settings, read on first access (only the billing functions need them). */
  readonly billing: BillingConfig;
  /**
   * Where connections call the providers' admin APIs: base URLs without `/v1`, `https://api.openai.com`,
   * `https://api.anthropic.com` and `https://openrouter.ai` (without `/api/v1`). `OPENAI_ADMIN_URL` /
   * `ANTHROPIC_ADMIN_URL` / `OPENROUTER_URL` move them ONLY on a local stack
   * (`DYNAMODB_ENDPOINT` set, which no deployed function has: test/infra/stack.test.ts); local/stack.ts points them
   * at the stand-ins unless the environment of `npm start` set them. In AWS they are ignored, whoever sets them: the
   * worker sends admin keys to the providers' own hosts only (and shared/connections/http.ts to that origin only).
   */
  providerUrls: { openai: string; anthropic: string; openrouter: string };
}

/**
 * Billing configuration (env). In AWS the Stripe secrets come from Secrets Manager: `STRIPE_SECRET_ARN` names a
 * JSON secret `{secretKey, webhookSecret}` read once per container by shared/billing/stripe.ts; locally (and in
 * tests) `STRIPE_SECRET_KEY` / `STRIPE_WEBHOOK_SECRET` carry the values themselves.
 */
export interface BillingConfig {
  /** `STRIPE_SECRET_KEY` (local/tests). */
  secretKey?: string;
  /** `STRIPE_WEBHOOK_SECRET` (local/tests). */
  webhookSecret?: string;
  /** `STRIPE_SECRET_ARN` (AWS): the Secrets Manager secret holding both. */
  secretArn?: string;
  /** `STRIPE_API_BASE`, local only: `http://127.0.0.1:<port>` of the Stripe stand-in. */
  apiBase?: string;
  /** Stripe price ids of the paid plans (`STRIPE_PRICE_GROWTH`, `STRIPE_PRICE_SCALE`). */
  prices: { GROWTH?: string; SCALE?: string };
  /** Where Stripe Checkout sends the browser back (`BILLING_SUCCESS_URL`, `BILLING_CANCEL_URL`). */
  successUrl: string;
  cancelUrl: string;
  /** Where the customer portal's "return" link goes (`BILLING_PORTAL_RETURN_URL`). */
  portalReturnUrl: string;
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
  let billing: BillingConfig | undefined;
  return {
    tableName: env.TABLE_NAME ?? 'burnrate',
    region: env.AWS_REGION ?? 'us-east-1',
    userPoolId: env.USER_POOL_ID ?? '',
    userPoolClientId: env.USER_POOL_CLIENT_ID ?? '',
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    cognitoEndpoint: env.COGNITO_ENDPOINT || undefined,
    cursorSecret: env.CURSOR_SECRET ?? '',
    appUrl: (env.DASHBOARD_URL ?? '').replace(/\/+$/, ''),
    corsOrigins: (env.CORS_ORIGINS ?? '*').split(',').map((s) => s.trim()).filter(Boolean),
    allowInsecureWebhooks: env.ALLOW_INSECURE_WEBHOOKS === 'true',
    billingOff: env.BILLING === 'off',
    rateLimits: env.RATE_LIMITS !== 'off',
    edgeSecret: env.EDGE_SECRET ?? '',
    providerUrls: providerUrls(env),
    get billing() {
      billing ??= readBillingConfig(env);
      return billing;
    },
  };
}

/** The providers' own hosts; the `*_ADMIN_URL` overrides only where `DYNAMODB_ENDPOINT` says this is a local stack. */
function providerUrls(env: NodeJS.ProcessEnv): Config['providerUrls'] {
  const local = Boolean(env.DYNAMODB_ENDPOINT);
  const url = (override: string | undefined, real: string) => ((local && override) || real).replace(/\/+$/, '');
  return {
    openai: url(env.OPENAI_ADMIN_URL, 'https://api.openai.com'),
    anthropic: url(env.ANTHROPIC_ADMIN_URL, 'https://api.anthropic.com'),
    // A base URL with or without `/api/v1` (the client adds it).
    openrouter: url(env.OPENROUTER_URL, 'https://openrouter.ai').replace(/\/api\/v1$/, ''),
  };
}

function readBillingConfig(env: NodeJS.ProcessEnv): BillingConfig {
  const opt = (name: string) => env[name] || undefined;
  return {
    secretKey: opt('STRIPE_SECRET_KEY'),
    webhookSecret: opt('STRIPE_WEBHOOK_SECRET'),
    secretArn: opt('STRIPE_SECRET_ARN'),
    apiBase: opt('STRIPE_API_BASE'),
    prices: { GROWTH: opt('STRIPE_PRICE_GROWTH'), SCALE: opt('STRIPE_PRICE_SCALE') },
    successUrl: env.BILLING_SUCCESS_URL ?? '',
    cancelUrl: env.BILLING_CANCEL_URL ?? '',
    portalReturnUrl: env.BILLING_PORTAL_RETURN_URL ?? '',
  };
}
