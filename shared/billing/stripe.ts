/**
 * The Stripe client: ONE per container, created on first use.
 *
 * Secrets: in AWS `STRIPE_SECRET_ARN` names the Secrets Manager secret `{secretKey, webhookSecret}` (JSON), read
 * once at cold start; locally and in tests `STRIPE_SECRET_KEY` / `STRIPE_WEBHOOK_SECRET` carry the values.
 * `STRIPE_API_BASE` (local only) points the real SDK at the stand-in in local/stripe-mock.ts.
 */
import Stripe from 'stripe';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config, type BillingConfig } from '#shared/config.ts';

export type { Stripe };

/** Per-request timeout; with 2 retries a Stripe call still fits the function's 10 s in all but the worst case. */
const STRIPE_TIMEOUT_MS = 5_000;

export interface StripeSecrets {
  secretKey: string;
  webhookSecret: string;
}

let secrets: Promise<StripeSecrets> | undefined;
let client: Promise<Stripe> | undefined;

/** The Stripe secret key and webhook signing secret (env, or Secrets Manager once per container). */
export function stripeSecrets(): Promise<StripeSecrets> {
  secrets ??= loadSecrets(config().billing).catch((error: unknown) => {
    secrets = undefined; // a failed read is retried by the next request, not cached for the container's life
    throw error;
  });
  return secrets;
}

/** The one Stripe client of this container. */
export function stripe(): Promise<Stripe> {
  client ??= stripeSecrets()
    .then(({ secretKey }) => createStripe(secretKey, config().billing.apiBase))
    .catch((error: unknown) => {
      client = undefined;
      throw error;
    });
  return client;
}

/** For tests and the local stack, which change the environment after import. */
export function resetStripe(): void {
  secrets = undefined;
  client = undefined;
}

export function createStripe(secretKey: string, apiBase?: string): Stripe {
  const local = apiBase ? new URL(apiBase) : undefined;
  return new Stripe(secretKey, {
    apiVersion: Stripe.API_VERSION,
    maxNetworkRetries: 2,
    timeout: STRIPE_TIMEOUT_MS,
    ...(local
      ? {
          host: local.hostname,
          port: local.port || (local.protocol === 'https:' ? 443 : 80),
          protocol: local.protocol === 'https:' ? ('https' as const) : ('http' as const),
          telemetry: false,
        }
      : {}),
  });
}

async function loadSecrets(billing: BillingConfig): Promise<StripeSecrets> {
  if (billing.secretArn) {
    const sm = new SecretsManagerClient({ region: config().region });
    const res = await sm.send(new GetSecretValueCommand({ SecretId: billing.secretArn }));
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.SecretString ?? '');
    } catch {
      throw new Error('the Stripe secret is not JSON {secretKey, webhookSecret}');
    }
    const { secretKey, webhookSecret } = (parsed ?? {}) as Record<string, unknown>;
    if (typeof secretKey !== 'string' || !secretKey || typeof webhookSecret !== 'string' || !webhookSecret) {
      throw new Error('the Stripe secret must hold the strings secretKey and webhookSecret');
    }
    return { secretKey, webhookSecret };
  }
  if (!billing.secretKey || !billing.webhookSecret) {
    throw new Error('Stripe is not configured: set STRIPE_SECRET_ARN, or STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  }
  return { secretKey: billing.secretKey, webhookSecret: billing.webhookSecret };
}
