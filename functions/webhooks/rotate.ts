import { httpHandler } from '#shared/http/handler.ts';
import { rotateWebhookSecret } from '#shared/notify/webhook-secret.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /webhook-secret/rotate → 200 the new secret; the previous one keeps signing for 24 h (previousSecretExpiresAt). */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ({
  status: 200,
  body: await rotateWebhookSecret(auth.accountId),
  headers: { 'cache-control': 'no-store' },
}));
