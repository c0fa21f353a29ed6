/**
 * The per-account webhook signing secret: attribute `webhookSecret` of the ACCOUNT item, `whsec_` + 32 random
 * bytes (base64url). Made lazily on first use; `if_not_exists` makes the first writer win, so two racing callers
 * (the dashboard and the notifier) always end up with the same secret.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { Conflict, NotFound } from '#shared/http/errors.ts';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** After a rotation the previous secret still signs deliveries this long, so receivers can switch without a gap. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

interface StoredSecrets {
  current?: string;
  previous?: string;
  previousExpiresAt?: string;
}

async function readSecrets(accountId: string): Promise<StoredSecrets> {
  const read = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.account(accountId),
      ProjectionExpression: 'pk, webhookSecret, previousWebhookSecret, previousWebhookSecretExpiresAt',
      ConsistentRead: true,
    }),
  );
  if (!read.Item) throw new NotFound('The account does not exist.');
  const item = read.Item;
  return {
    ...(typeof item.webhookSecret === 'string' ? { current: item.webhookSecret } : {}),
    ...(typeof item.previousWebhookSecret === 'string' ? { previous: item.previousWebhookSecret } : {}),
    ...(typeof item.previousWebhookSecretExpiresAt === 'string' ? { previousExpiresAt: item.previousWebhookSecretExpiresAt } : {}),
  };
}

const previousLive = (s: StoredSecrets, now: Date) => s.previous !== undefined && s.previousExpiresAt !== undefined && s.previousExpiresAt > now.toISOString();

/** The secrets a delivery is signed with now: the current one, and the previous one while its grace lasts. */
export async function signingSecrets(accountId: string, now = new Date()): Promise<string[]> {
  const stored = await readSecrets(accountId);
  const current = stored.current ?? (await createSecret(accountId));
  return previousLive(stored, now) ? [current, stored.previous!] : [current];
}

/** The account's secret, created if it has none yet. Throws NotFound for an account that does not exist. */
export async function webhookSecret(accountId: string): Promise<string> {
  return (await readSecrets(accountId)).current ?? createSecret(accountId);
}

async function createSecret(accountId: string): Promise<string> {
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

function view(secret: string, previousExpiresAt: string | null) {
  return {
    secret,
    header: 'burnrate-signature',
    algorithm: 'HMAC-SHA256',
    format: 't=<unix>,v1=<hex of HMAC(secret, "<t>.<body>")> (one v1 per live secret)',
    /** Until then deliveries also carry a v1 made with the previous secret (null: no rotation in progress). */
    previousSecretExpiresAt: previousExpiresAt,
  };
}

/** What `GET /webhook-secret` answers: the secret and how receivers check a delivery with it. */
export async function webhookSecretView(accountId: string, now = new Date()) {
  const stored = await readSecrets(accountId);
  const secret = stored.current ?? (await createSecret(accountId));
  return view(secret, previousLive(stored, now) ? stored.previousExpiresAt! : null);
}

/**
 * `POST /webhook-secret/rotate`: a new secret signs from now on; the old one keeps signing too for 24 hours, so a
 * receiver that has not switched yet still verifies every delivery. Rotating again ends the old one's grace at once.
 */
export async function rotateWebhookSecret(accountId: string, now = new Date()) {
  const current = await webhookSecret(accountId);
  const next = newWebhookSecret();
  const previousExpiresAt = new Date(now.getTime() + ROTATION_GRACE_MS).toISOString();
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: 'SET webhookSecret = :next, previousWebhookSecret = :current, previousWebhookSecretExpiresAt = :until',
        // Rotates from the secret we read: two racing rotations cannot leave the one in between unsigned-for.
        ConditionExpression: 'webhookSecret = :current',
        ExpressionAttributeValues: { ':next': next, ':current': current, ':until': previousExpiresAt },
      }),
    );
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
      throw new Conflict('The secret was rotated at the same moment by another request; read it again.', 'edit-conflict');
    }
    throw error;
  }
  return view(next, previousExpiresAt);
}
