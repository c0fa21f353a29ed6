/**
 * Repository of an account's users beyond their creation (shared/db/accounts.ts): the list, role changes and
 * removal. The account item counts `seats` (users + pending invitations) and `adminCount`; every change that moves
 * them updates the account in the SAME transaction, with a condition, so the last admin can never go — also when
 * two admins demote each other at the same moment (one transaction wins, the other finds one admin left).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, failedConditions, isTransactionConflict, tableName, transactWrite } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { toUser, type Role, type User } from '#shared/db/accounts.ts';

export interface UserPage {
  items: User[];
  lastKey?: Record<string, unknown>;
}

/** One page of the account's users, oldest first (user ids are ULIDs). */
export async function listUsers(accountId: string, limit: number, startKey?: Record<string, unknown>): Promise<UserPage> {
  const q = queries.accountItems(accountId, 'USER');
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return { items: (res.Items ?? []).map(toUser), ...(res.LastEvaluatedKey ? { lastKey: res.LastEvaluatedKey } : {}) };
}

/** The account would be left without an admin. */
export class LastAdmin extends Error {
  constructor() {
    super('last admin');
    this.name = 'LastAdmin';
  }
}

/** The user changed (or went) while we looked: read it again. */
export class UserChanged extends Error {
  constructor() {
    super('user changed');
    this.name = 'UserChanged';
  }
}

const ONE = 1;

/** The account update that takes one admin away: only while another admin remains (absent count: 1 admin). */
function adminLeaves(accountId: string) {
  return {
    TableName: tableName(),
    Key: keys.account(accountId),
    UpdateExpression: 'SET adminCount = adminCount - :one',
    ConditionExpression: 'adminCount > :one',
    ExpressionAttributeValues: { ':one': ONE },
  };
}

/** The account update that adds one admin. */
export function adminJoins(accountId: string) {
  return {
    TableName: tableName(),
    Key: keys.account(accountId),
    UpdateExpression: 'SET adminCount = if_not_exists(adminCount, :one) + :one',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':one': ONE },
  };
}

/** Sets `user`'s role to `role` (the user as read; its role must not have changed since). */
export async function changeRole(user: User, role: Role, now: Date): Promise<User> {
  if (user.role === role) return user;
  const at = now.toISOString();
  const userUpdate = {
    TableName: tableName(),
    Key: keys.user(user.accountId, user.userId),
    UpdateExpression: 'SET #role = :role, updatedAt = :now',
    ConditionExpression: 'attribute_exists(pk) AND (#role = :old OR (attribute_not_exists(#role) AND :old = :admin))',
    ExpressionAttributeNames: { '#role': 'role' },
    ExpressionAttributeValues: { ':role': role, ':old': user.role, ':now': at, ':admin': 'admin' },
  };
  const account = user.role === 'admin' ? adminLeaves(user.accountId) : role === 'admin' ? adminJoins(user.accountId) : undefined;
  try {
    await transactWrite(account ? [{ Update: account }, { Update: userUpdate }] : [{ Update: userUpdate }]);
  } catch (error) {
    // The user's own condition first: when the user changed meanwhile, the account's count may fail only because of
    // that change (another request demoted it already) — read again rather than answer last-admin.
    const failed = failedConditions(error);
    if (failed.includes(account ? 1 : 0)) throw new UserChanged();
    if (account && failed.includes(0)) throw new LastAdmin();
    if (failed.length > 0 || isTransactionConflict(error)) throw new UserChanged();
    throw error;
  }
  return { ...user, role, updatedAt: at };
}

/**
 * Removes the user: its item and its e-mail item (so the address can register again), one seat, and one admin if
 * it was one — in one transaction.
 */
export async function removeUser(user: User): Promise<void> {
  const seatAndAdmin = {
    TableName: tableName(),
    Key: keys.account(user.accountId),
    UpdateExpression:
      user.role === 'admin' ? 'SET seats = if_not_exists(seats, :one) - :one, adminCount = adminCount - :one' : 'SET seats = if_not_exists(seats, :one) - :one',
    ConditionExpression: user.role === 'admin' ? 'adminCount > :one' : 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':one': ONE },
  };
  try {
    await transactWrite([
      { Update: seatAndAdmin },
      {
        Delete: {
          TableName: tableName(),
          Key: keys.user(user.accountId, user.userId),
          ConditionExpression: 'attribute_exists(pk) AND (#role = :role OR (attribute_not_exists(#role) AND :role = :admin))',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':role': user.role, ':admin': 'admin' },
        },
      },
      {
        Delete: {
          TableName: tableName(),
          Key: keys.email(user.email),
          ConditionExpression: 'attribute_not_exists(pk) OR userId = :uid',
          ExpressionAttributeValues: { ':uid': user.userId },
        },
      },
    ]);
  } catch (error) {
    // The user's own condition first (see changeRole).
    const failed = failedConditions(error);
    if (failed.includes(1) || failed.includes(2)) throw new UserChanged();
    if (user.role === 'admin' && failed.includes(0)) throw new LastAdmin();
    if (failed.length > 0 || isTransactionConflict(error)) throw new UserChanged();
    throw error;
  }
}
