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

/** Ends the user's sessions: tokens issued before now are refused, refresh tokens of the old epoch too. */
export function endSessions(accountId: string, userId: string, change: EndSessions, now: Date): Promise<User | undefined> {
  const at = now.toISOString();
  const set: Record<string, unknown> = { sessionsValidAfter: at, sessionEpoch: change.epoch, updatedAt: at };
  if (change.keepTokenId) set.sessionsKeptTokenId = change.keepTokenId;
  if (change.verifyEmail) set.emailVerified = true;
  return update(accountId, userId, set, {
    remove: change.keepTokenId ? [] : ['sessionsKeptTokenId'],
    ...(change.verifyEmail ? { condition: 'email = :email', values: { ':email': change.verifyEmail } } : {}),
  });
}

/** Whose the address is (its EMAIL# item), or undefined: one GetItem. */
export async function emailOwner(email: string): Promise<{ accountId: string; userId: string } | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.email(email), ProjectionExpression: 'accountId, userId' }));
  const item = res.Item;
  return typeof item?.accountId === 'string' && typeof item.userId === 'string' ? { accountId: item.accountId, userId: item.userId } : undefined;
}
