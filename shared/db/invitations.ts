/**
 * Repository of invitations (`ACCOUNT#<a> / INVITATION#<inv_id>`). Each change is ONE transaction with the
 * account's seat counter, the address's pending-invitation item (`INVITEE#<email>`: one pending invitation per
 * address and account) and the link token, so seats stay exact under concurrent invites and a link never outlives
 * its invitation.
 *
 * Expiry: an invitation is pending until `expiresAt`; after it, it reads as `expired`. Its seat is given back by
 * the next invitation of the account (which marks up to 25 expired ones expired in its own transaction).
 */
import { GetCommand, QueryCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGet, db, failedConditions, queryAll, tableName, transactWrite } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { pendingInvitationAttr, toAccount, type Account, type Role, type User } from '#shared/db/accounts.ts';
import { linkTokenConsume, linkTokenPut } from '#shared/db/link-tokens.ts';
import { linkTokenHash } from '#shared/db/link-tokens.ts';

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface Invitation {
  id: string;
  accountId: string;
  email: string;
  role: Role;
  status: InvitationStatus;
  /** The admin who invited (user id). */
  invitedBy: string;
  expiresAt: string;
  createdAt: string;
  /** SHA-256 of the link's token (to end the link with the invitation). */
  tokenHash: string;
}

/** How many expired invitations one new invitation settles (a transaction holds at most 100 actions). */
const EXPIRED_PER_INVITE = 25;
const ONE = 1;

export function toInvitation(item: Record<string, unknown>, now = new Date()): Invitation {
  const stored = item.status as InvitationStatus;
  const expiresAt = item.expiresAt as string;
  return {
    id: item.id as string,
    accountId: item.accountId as string,
    email: item.email as string,
    role: item.role as Role,
    status: stored === 'pending' && expiresAt <= now.toISOString() ? 'expired' : stored,
    invitedBy: item.invitedBy as string,
    expiresAt,
    createdAt: item.createdAt as string,
    tokenHash: item.tokenHash as string,
  };
}

/** The account's invitations whose stored status is pending (expired ones included), newest first. */
export async function storedPending(accountId: string, now = new Date(), consistent = false): Promise<Invitation[]> {
  const q = queries.accountItems(accountId, 'INVITATION');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    FilterExpression: '#status = :pending',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix, ':pending': 'pending' },
    ScanIndexForward: false,
    ConsistentRead: consistent,
  });
  return items.map((item) => toInvitation(item, now));
}

export interface InvitationPage {
  items: Invitation[];
  lastKey?: Record<string, unknown>;
}

/** One page of the account's pending (unexpired) invitations, newest first. */
export async function listPendingInvitations(accountId: string, limit: number, now: Date, startKey?: Record<string, unknown>): Promise<InvitationPage> {
  const q = queries.accountItems(accountId, 'INVITATION');
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: '#status = :pending AND expiresAt > :now',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix, ':pending': 'pending', ':now': now.toISOString() },
      ScanIndexForward: false,
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return { items: (res.Items ?? []).map((item) => toInvitation(item, now)), ...(res.LastEvaluatedKey ? { lastKey: res.LastEvaluatedKey } : {}) };
}

export async function getInvitation(accountId: string, invitationId: string, now = new Date()): Promise<Invitation | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.invitation(accountId, invitationId), ConsistentRead: true }));
  return res.Item && toInvitation(res.Item, now);
}

/** An invitation and its account in one BatchGetItem (strongly consistent): what the invitation page shows. */
export async function getInvitationAndAccount(accountId: string, invitationId: string, now = new Date()): Promise<{ invitation?: Invitation; account?: Account }> {
  const invitationKey = keys.invitation(accountId, invitationId);
  const items = await batchGet([invitationKey, keys.account(accountId)], undefined, true);
  const invitationItem = items.find((item) => item.sk === invitationKey.sk);
  const accountItem = items.find((item) => item.sk === keys.account(accountId).sk);
  return { ...(invitationItem ? { invitation: toInvitation(invitationItem, now) } : {}), ...(accountItem ? { account: toAccount(accountItem) } : {}) };
}

export class SeatsFull extends Error {}
export class AlreadyInvited extends Error {}
export class EmailHasUser extends Error {}
/** The inviter is no admin (any more): a demoted admin's invitation never lands after its demotion's revocations. */
export class InviterNotAdmin extends Error {}

/**
 * Creates the invitation, its link token and the address's pending item, takes a seat (only while
 * `seats < seatLimit`), and settles expired invitations of the account (their seats come back) — one transaction.
 */
export async function createInvitation(invitation: Invitation, token: string, seatLimit: number, now: Date): Promise<void> {
  const expired = (await storedPending(invitation.accountId, now)).filter((i) => i.status === 'expired').slice(0, EXPIRED_PER_INVITE);
  const settle = expired.flatMap((old) => [
    {
      Update: {
        TableName: tableName(),
        Key: keys.invitation(old.accountId, old.id),
        UpdateExpression: 'SET #status = :expired',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':expired': 'expired', ':pending': 'pending' },
      },
    },
    {
      Delete: {
        TableName: tableName(),
        Key: keys.invitee(old.accountId, old.email),
        ConditionExpression: 'attribute_not_exists(pk) OR invitationId = :id',
        ExpressionAttributeValues: { ':id': old.id },
      },
    },
  ]);
  const { accountId, email } = invitation;
  const settled = expired.map((old, i) => [`#old${i}`, pendingInvitationAttr(old.id)] as const);
  const items = [
    {
      // [0] the seat: users + pending invitations stay within the limit in force (absent count: the one registrant);
      // the invitation's expiry on the account (seatsInUse), the settled ones' removed.
      Update: {
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: `SET seats = if_not_exists(seats, :one) + :delta, #mine = :expires${settled.length ? ` REMOVE ${settled.map(([name]) => name).join(', ')}` : ''}`,
        ConditionExpression: 'attribute_exists(pk) AND ((attribute_not_exists(seats) AND :one < :limit) OR seats < :room)',
        ExpressionAttributeNames: { '#mine': pendingInvitationAttr(invitation.id), ...Object.fromEntries(settled) },
        ExpressionAttributeValues: { ':one': ONE, ':delta': ONE - expired.length, ':limit': seatLimit, ':room': seatLimit + expired.length, ':expires': invitation.expiresAt },
      },
    },
    // [1] one pending invitation per address and account.
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.invitee(accountId, email), type: 'Invitee', invitationId: invitation.id, email },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    // [2] an address that has a user (in any account) is not invited.
    { ConditionCheck: { TableName: tableName(), Key: keys.email(email), ConditionExpression: 'attribute_not_exists(pk)' } },
    { Put: { TableName: tableName(), Item: { ...keys.invitation(accountId, invitation.id), type: 'Invitation', ...invitation }, ConditionExpression: 'attribute_not_exists(pk)' } },
    { Put: linkTokenPut(token, { kind: 'invitation', accountId, invitationId: invitation.id, email }, now) },
    // [5] the inviter is an admin still (users made before roles: admin).
    {
      ConditionCheck: {
        TableName: tableName(),
        Key: keys.user(accountId, invitation.invitedBy),
        ConditionExpression: '#role = :admin OR (attribute_exists(pk) AND attribute_not_exists(#role))',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: { ':admin': 'admin' },
      },
    },
    ...settle,
  ];
  try {
    await transactWrite(items);
  } catch (error) {
    const failed = failedConditions(error);
    if (failed.includes(5)) throw new InviterNotAdmin();
    if (failed.includes(0)) throw new SeatsFull();
    if (failed.includes(1)) throw new AlreadyInvited();
    if (failed.includes(2)) throw new EmailHasUser();
    throw error;
  }
}

/**
 * Revokes every pending invitation `userId` sent (a demoted or removed admin's): one strongly consistent Query of the
 * account's pending invitations, then one transaction per invitation of that admin. How many were revoked.
 */
export async function revokeInvitationsBy(accountId: string, userId: string): Promise<number> {
  const mine = (await storedPending(accountId, new Date(), true)).filter((invitation) => invitation.invitedBy === userId);
  const revoked = await Promise.all(mine.map((invitation) => revokeInvitation(invitation)));
  return revoked.filter(Boolean).length;
}

/** Revokes a pending invitation: its link stops working and its seat comes back. False when it is not pending. */
export async function revokeInvitation(invitation: Invitation): Promise<boolean> {
  try {
    await transactWrite([
      {
        Update: {
          TableName: tableName(),
          Key: keys.invitation(invitation.accountId, invitation.id),
          UpdateExpression: 'SET #status = :revoked',
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':revoked': 'revoked', ':pending': 'pending' },
        },
      },
      { Delete: { TableName: tableName(), Key: keys.invitee(invitation.accountId, invitation.email) } },
      { Delete: { TableName: tableName(), Key: keys.linkToken(invitation.tokenHash) } },
      {
        Update: {
          TableName: tableName(),
          Key: keys.account(invitation.accountId),
          UpdateExpression: 'SET seats = if_not_exists(seats, :two) - :one REMOVE #mine',
          ExpressionAttributeNames: { '#mine': pendingInvitationAttr(invitation.id) },
          ExpressionAttributeValues: { ':one': ONE, ':two': 2 },
        },
      },
    ]);
    return true;
  } catch (error) {
    if (failedConditions(error).includes(0)) return false;
    throw error;
  }
}

export class InvitationUnusable extends Error {}

/**
 * Accepts: uses the token up, marks the invitation accepted, writes the user (its seat was the invitation's) and
 * its e-mail item, counts an admin — one transaction. The token or invitation no longer usable: InvitationUnusable;
 * the address registered meanwhile: EmailHasUser.
 */
export async function acceptInvitation(invitation: Invitation, token: string, user: User, now: Date): Promise<void> {
  const at = now.toISOString();
  const items: TransactItems = [
    { Update: linkTokenConsume(token, 'invitation', now) },
    {
      Update: {
        TableName: tableName(),
        Key: keys.invitation(invitation.accountId, invitation.id),
        UpdateExpression: 'SET #status = :accepted, acceptedAt = :now, userId = :uid',
        ConditionExpression: '#status = :pending AND expiresAt > :now AND tokenHash = :hash',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':accepted': 'accepted', ':pending': 'pending', ':now': at, ':uid': user.userId, ':hash': linkTokenHash(token) },
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.email(user.email),
          type: 'Email',
          email: user.email,
          accountId: user.accountId,
          userId: user.userId,
          createdAt: at,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName: tableName(), Item: { ...keys.user(user.accountId, user.userId), type: 'User', ...user }, ConditionExpression: 'attribute_not_exists(pk)' } },
    { Delete: { TableName: tableName(), Key: keys.invitee(invitation.accountId, invitation.email) } },
    // The seat stays taken (by the user now); the invitation's expiry goes, and an admin is counted.
    {
      Update: {
        TableName: tableName(),
        Key: keys.account(user.accountId),
        UpdateExpression: user.role === 'admin' ? 'SET adminCount = if_not_exists(adminCount, :one) + :one REMOVE #mine' : 'REMOVE #mine',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#mine': pendingInvitationAttr(invitation.id) },
        ...(user.role === 'admin' ? { ExpressionAttributeValues: { ':one': ONE } } : {}),
      },
    },
  ];
  try {
    await transactWrite(items);
  } catch (error) {
    const failed = failedConditions(error);
    if (failed.includes(0) || failed.includes(1)) throw new InvitationUnusable();
    if (failed.includes(2)) throw new EmailHasUser();
    throw error;
  }
}
