/**
 * Changes a user makes to itself (its profile, its verified address, its sessions), each ONE conditional
 * UpdateItem of its USER# item that answers the user as it is afterwards. A user that is gone: undefined.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { toUser, type User } from '#shared/db/accounts.ts';

export interface ProfileChanges {
  firstName?: string;
  lastName?: string;
  alertEmails?: boolean;
}

async function update(
  accountId: string,
  userId: string,
  set: Record<string, unknown>,
  options: { remove?: string[]; condition?: string; values?: Record<string, unknown> } = {},
): Promise<User | undefined> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...options.values };
  const assignments = Object.entries(set).map(([field, value], i) => {
    names[`#f${i}`] = field;
    values[`:v${i}`] = value;
    return `#f${i} = :v${i}`;
  });
  const removals = (options.remove ?? []).map((field, i) => {
    names[`#r${i}`] = field;
    return `#r${i}`;
  });
  try {
    const res = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.user(accountId, userId),
        UpdateExpression: `SET ${assignments.join(', ')}${removals.length ? ` REMOVE ${removals.join(', ')}` : ''}`,
        ConditionExpression: ['attribute_exists(pk)', options.condition].filter(Boolean).join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return res.Attributes && toUser(res.Attributes);
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/** Names and the alert e-mail switch. */
export function updateProfile(accountId: string, userId: string, changes: ProfileChanges, now: Date): Promise<User | undefined> {
  const set: Record<string, unknown> = { updatedAt: now.toISOString() };
  for (const [field, value] of Object.entries(changes)) if (value !== undefined) set[field] = value;
  return update(accountId, userId, set);
}

/** The address is proven, if it is still `email` (a link sent to the user's address). */
export function markEmailVerified(accountId: string, userId: string, email: string, now: Date): Promise<User | undefined> {
  return update(accountId, userId, { emailVerified: true, updatedAt: now.toISOString() }, { condition: 'email = :email', values: { ':email': email } });
}

export interface EndSessions {
  /** The new session epoch (refresh tokens carrying another are refused). */
  epoch: string;
  /** The token (`jti`) that stays valid: the caller's, on a password change. None: every session ends. */
  keepTokenId?: string;
  /** A reset also proves the address (the link went to it). */
  verifyEmail?: string;
}

/**
 * Ends the user's sessions (shared/access/sessions.ts): ID tokens issued before `now` (milliseconds) are refused,
 * refresh tokens of the old epoch too; the admitted tokens of an earlier end are forgotten. Reset links created
 * before now are void with it (shared/auth/passwords.ts).
 */
export function endSessions(accountId: string, userId: string, change: EndSessions, now: Date): Promise<User | undefined> {
  const at = now.toISOString();
  const set: Record<string, unknown> = { sessionsValidAfter: at, sessionEpoch: change.epoch, updatedAt: at };
  if (change.keepTokenId) set.sessionsKeptTokenId = change.keepTokenId;
  if (change.verifyEmail) set.emailVerified = true;
  return update(accountId, userId, set, {
    remove: [...(change.keepTokenId ? [] : ['sessionsKeptTokenId']), 'sessionTokenIds'],
    ...(change.verifyEmail ? { condition: 'email = :email', values: { ':email': change.verifyEmail } } : {}),
  });
}

/**
 * Admits an ID token of the second the sessions ended in (its `jti`), only while the user's epoch is still `epoch`:
 * false when the sessions ended again meanwhile, or the user is gone.
 */
export async function admitToken(accountId: string, userId: string, epoch: string, tokenId: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.user(accountId, userId),
        UpdateExpression: 'ADD sessionTokenIds :jti',
        ConditionExpression: 'attribute_exists(pk) AND sessionEpoch = :epoch',
        ExpressionAttributeValues: { ':jti': new Set([tokenId]), ':epoch': epoch },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * Uses the user's reset links up to `now`: only when the link in hand (created at `linkCreatedAt`, to `email`) is
 * newer than every reset and session end so far — so of two links used at the same moment, one wins. Undefined when
 * the link is void (or the user gone, or its address another).
 */
export function claimResetLinks(accountId: string, userId: string, email: string, linkCreatedAt: string, now: Date): Promise<User | undefined> {
  return update(
    accountId,
    userId,
    { resetLinksValidAfter: now.toISOString() },
    {
      condition:
        'email = :email AND (attribute_not_exists(resetLinksValidAfter) OR resetLinksValidAfter < :created) AND (attribute_not_exists(sessionsValidAfter) OR sessionsValidAfter < :created)',
      values: { ':email': email, ':created': linkCreatedAt },
    },
  );
}

/** Whose the address is (its EMAIL# item), or undefined: one GetItem (strongly consistent when asked). */
export async function emailOwner(email: string, consistent = false): Promise<{ accountId: string; userId: string } | undefined> {
  const res = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.email(email), ProjectionExpression: 'accountId, userId', ConsistentRead: consistent }),
  );
  const item = res.Item;
  return typeof item?.accountId === 'string' && typeof item.userId === 'string' ? { accountId: item.accountId, userId: item.userId } : undefined;
}
