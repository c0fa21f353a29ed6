/**
 * The per-account webhook signing secret: attribute `webhookSecret` of the ACCOUNT item, `whsec_` + 32 random
 * bytes (base64url). Made lazily on first use; `if_not_exists` makes the first writer win, so two racing callers
 * (the dashboard and the notifier) always end up with the same secret.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { NotFound } from '#shared/http/errors.ts';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The account's secret, created if it has none yet. Throws NotFound for an account that does not exist. */
export async function webhookSecret(accountId: string): Promise<string> {
  const read = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.account(accountId),
      ProjectionExpression: 'pk, webhookSecret',
      ConsistentRead: true,
    }),
  );
  if (!read.Item) throw new NotFound('The account does not exist.');
  if (typeof read.Item.webhookSecret === 'string') return read.Item.webhookSecret;
  try {
    const res = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: 'SET webhookSecret = if_not_exists(webhookSecret, :secret)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':secret': newWebhookSecret() },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return res.Attributes?.webhookSecret as string;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') throw new NotFound('The account does not exist.');
    throw error;
  }
}

/** What `GET /webhook-secret` answers: the secret and how receivers check a delivery with it. */
export async function webhookSecretView(accountId: string) {
  return {
    secret: await webhookSecret(accountId),
    header: 'burnrate-signature',
    algorithm: 'HMAC-SHA256',
    format: 't=<unix>,v1=<hex of HMAC(secret, "<t>.<body>")>',
  };
}
