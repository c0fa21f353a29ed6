/**
 * Repository of single-use link tokens (`TOKEN#<sha256>`): written with the change that sends the link, consumed
 * by ONE conditional update (unused, unexpired, of the right kind), so a link works exactly once. Expired items are
 * removed by the table's TTL; the condition checks the expiry itself (DynamoDB deletes expired items late).
 */
import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';

export type LinkTokenKind = 'verify-email' | 'reset-password' | 'invitation';

/** How long each kind of link works (docs/features/identity-and-teams.md). */
export const TOKEN_TTL_MS: Record<LinkTokenKind, number> = {
  'verify-email': 24 * 3600 * 1000,
  'reset-password': 3600 * 1000,
  invitation: 7 * 24 * 3600 * 1000,
};

/** Only this SHA-256 of a token is stored; the token itself exists only in the e-mail's link. */
export function linkTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface LinkTokenData {
  kind: LinkTokenKind;
  accountId: string;
  /** verify-email, reset-password: whose. */
  userId?: string;
  /** invitation: which. */
  invitationId?: string;
  email: string;
}

export interface StoredLinkToken extends LinkTokenData {
  /** Epoch seconds (the TTL attribute). */
  expiresAt: number;
  createdAt: string;
  usedAt?: string;
}

/** A token's stored data (strongly consistent), or undefined when there is no such token. */
export async function getLinkToken(token: string): Promise<StoredLinkToken | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.linkToken(linkTokenHash(token)), ConsistentRead: true }));
  return res.Item as StoredLinkToken | undefined;
}

/** The Put of a new token (for a TransactWriteItems with the change that sends its link). */
export function linkTokenPut(token: string, data: LinkTokenData, now: Date) {
  return {
    TableName: tableName(),
    Item: {
      ...keys.linkToken(linkTokenHash(token)),
      type: 'LinkToken',
      ...data,
      createdAt: now.toISOString(),
      expiresAt: Math.floor((now.getTime() + TOKEN_TTL_MS[data.kind]) / 1000),
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

/** Stores a new token on its own (a link sent without another change: resend, forgot password). */
export async function putLinkToken(token: string, data: LinkTokenData, now: Date): Promise<void> {
  await db().send(new PutCommand(linkTokenPut(token, data, now)));
}

/** The Update that uses a token up: fails its condition when the token is unknown, used, expired or of another kind. */
export function linkTokenConsume(token: string, kind: LinkTokenKind, now: Date) {
  return {
    TableName: tableName(),
    Key: keys.linkToken(linkTokenHash(token)),
    UpdateExpression: 'SET usedAt = :now',
    ConditionExpression: 'attribute_exists(pk) AND kind = :kind AND attribute_not_exists(usedAt) AND expiresAt > :epoch',
    ExpressionAttributeValues: { ':now': now.toISOString(), ':kind': kind, ':epoch': Math.floor(now.getTime() / 1000) },
  };
}

/** Uses a token up on its own; its data, or undefined when it is unknown, used, expired or of another kind. */
export async function consumeLinkToken(token: string, kind: LinkTokenKind, now = new Date()): Promise<StoredLinkToken | undefined> {
  try {
    const res = await db().send(new UpdateCommand({ ...linkTokenConsume(token, kind, now), ReturnValues: 'ALL_NEW' }));
    return res.Attributes as StoredLinkToken | undefined;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/** How long an accept holds its invitation link while it creates the user (a crash frees it after this). */
export const CLAIM_MS = 60_000;

/**
 * Claims an unused, unexpired token for one request (`claimId`) until `now + CLAIM_MS`: of concurrent requests with
 * one link exactly one gets it (an accept that creates an identity before it uses the token up). False when the
 * token is used, expired, of another kind or claimed by another request.
 */
export async function claimLinkToken(token: string, kind: LinkTokenKind, claimId: string, now: Date): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.linkToken(linkTokenHash(token)),
        UpdateExpression: 'SET claimId = :claim, claimedUntil = :until',
        ConditionExpression:
          'attribute_exists(pk) AND kind = :kind AND attribute_not_exists(usedAt) AND expiresAt > :epoch AND (attribute_not_exists(claimedUntil) OR claimedUntil < :now)',
        ExpressionAttributeValues: { ':claim': claimId, ':until': now.getTime() + CLAIM_MS, ':kind': kind, ':epoch': Math.floor(now.getTime() / 1000), ':now': now.getTime() },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Gives a claim back (the request that held it failed before using the token up). */
export async function releaseLinkToken(token: string, claimId: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.linkToken(linkTokenHash(token)),
        UpdateExpression: 'REMOVE claimId, claimedUntil',
        ConditionExpression: 'claimId = :claim',
        ExpressionAttributeValues: { ':claim': claimId },
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
  }
}
