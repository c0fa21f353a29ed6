import { httpHandler } from '#shared/http/handler.ts';
import { webhookSecretView } from '#shared/notify/webhook-secret.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /webhook-secret → 200 {secret, header, algorithm, format}: the account's webhook signing secret (made on first use). */
export const handler = httpHandler({ auth: jwtAuth }, async ({ auth }) => ({
  status: 200,
  body: await webhookSecretView(auth.accountId),
  // A secret: never kept by a browser or a proxy.
  headers: { 'cache-control': 'no-store' },
}));
