/** Repository for accounts, their users, and e-mail uniqueness. Items share the account's partition. */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, db, failedConditions, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { readNumber } from '#shared/db/numbers.ts';

export type Plan = 'FREE' | 'GROWTH' | 'SCALE';
export type BillingStatus = 'ACTIVE' | 'TRIALING' | 'PAST_DUE' | 'CANCELED' | 'INCOMPLETE';

export interface Account {
  accountId: string;
  companyName: string;
  plan: Plan;
  billingStatus: BillingStatus;
  createdAt: string;
  updatedAt: string;
  /** Keys discovered so far (raised by ingestion, exactly once per key). */
  keyCount?: number;
  /** Seats taken: users plus pending invitations (counted in the transactions that change them). Absent: 1. */
  seats?: number;
  /** Users with the admin role (counted like seats; the last admin can't go). Absent: 1. */
  adminCount?: number;
  /** The Stripe subscription's current period (paid plans). */
  periodStart?: string;
  periodEnd?: string;
  /** The account's Stripe customer (created by the first checkout; a `STRIPECUSTOMER#` item points back). */
  stripeCustomerId?: string;
  /** The Stripe subscription whose state the plan follows. */
  stripeSubscriptionId?: string;
  /**
   * When the billing state was last changed: the `created` time of the Stripe event that changed it (ISO, ms).
   * A webhook event older than this never overwrites the state (shared/billing/webhook.ts).
   */
  billingUpdatedAt?: string;
  /** While `PAST_DUE`: when the paid plan's limits end (7 days after the failed payment; shared/billing/limits.ts). */
  graceEndsAt?: string;
  /** The current subscription's `<created ISO>#<id>`: of two live subscriptions the newer is kept. */
  subscriptionOrder?: string;
  /**
   * When each pending invitation expires (ISO), one attribute per invitation (`pendingInvitationAttr`), written and
   * removed in the transactions that move `seats`: so an expired invitation stops counting as a seat at its expiry,
   * without a Query (`seatsInUse`).
   */
  pendingInvitationExpiries?: string[];
  /**
   * Providers with a connection (active or paused; attributes `connected:<provider>` = the connection's id, set and
   * removed with it: shared/db/connections.ts). Ingestion refuses their events (one source per provider).
   */
  connectedProviders?: string[];
}

const PENDING_INVITATION_PREFIX = 'invitationExpires#';

/** The account item's attribute holding a pending invitation's expiry (see `Account.pendingInvitationExpiries`). */
export const pendingInvitationAttr = (invitationId: string) => `${PENDING_INVITATION_PREFIX}${invitationId}`;

/** Seats taken at `now`: users plus pending invitations that have not expired (docs/features/billing.md: `usage.users`). */
export function seatsInUse(account: Pick<Account, 'seats' | 'pendingInvitationExpiries'>, now: Date): number {
  const at = now.toISOString();
  const expired = (account.pendingInvitationExpiries ?? []).filter((expiresAt) => expiresAt <= at).length;
  return Math.max(1, (account.seats ?? 1) - expired);
}

/** What a user may do in its account (docs/features/identity-and-teams.md; shared/access/roles.ts says which routes). */
export type Role = 'admin' | 'member' | 'viewer';
export const ROLES: readonly Role[] = ['admin', 'member', 'viewer'];

export interface User {
  userId: string;
  accountId: string;
  email: string;
  firstName: string;
  lastName: string;
  role: Role;
  /** The address was proven by a link sent to it (verification, reset, invitation). */
  emailVerified: boolean;
  /** The user wants alert e-mail (only verified addresses get any). */
  alertEmails: boolean;
  /** Tokens issued before this instant (ISO) are refused: set when a password changes or is reset. */
  sessionsValidAfter?: string;
  /**
   * Changes (random) whenever the user's sessions end; every refresh token we hand out carries the value of its
   * time (shared/access/sessions.ts), and one that carries another is refused. Absent: `0` (never changed).
   */
  sessionEpoch?: string;
  /** The one token (its `jti`) issued before `sessionsValidAfter` that stays valid: the one a password change came with. */
  sessionsKeptTokenId?: string;
  /**
   * ID tokens (`jti`) of the second of `sessionsValidAfter` that our login or refresh proved were issued after it
   * (shared/access/sessions.ts). Cleared whenever the sessions end again.
   */
  sessionTokenIds?: string[];
  /** Reset links created before this instant (ISO) are void: set when a reset uses a link. */
  resetLinksValidAfter?: string;
  createdAt: string;
  updatedAt: string;
}

/** The e-mail is registered already (its uniqueness item exists). */
export class EmailTaken extends Error {
  constructor() {
    super('email taken');
    this.name = 'EmailTaken';
  }
}

const notExists = 'attribute_not_exists(pk)';

/** A Put of a TransactWriteItems (the register's verification token rides along with the account). */
export interface TransactPut {
  TableName: string;
  Item: Record<string, unknown>;
  ConditionExpression?: string;
}

/** Account, owner and e-mail item (and `alsoPut`) in ONE transaction: all are written or none is. */
export async function createAccountWithOwner(account: Account, user: User, alsoPut: TransactPut[] = []): Promise<void> {
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.account(account.accountId), type: 'Account', ...account, seats: 1, adminCount: 1 },
              ConditionExpression: notExists,
            },
          },
          { Put: { TableName: tableName(), Item: { ...keys.user(user.accountId, user.userId), type: 'User', ...user }, ConditionExpression: notExists } },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.email(user.email), type: 'Email', email: user.email, accountId: user.accountId, userId: user.userId, createdAt: user.createdAt },
              ConditionExpression: notExists,
            },
          },
          ...alsoPut.map((put) => ({ Put: put })),
        ],
      }),
    );
  } catch (error) {
    if (failedConditions(error).includes(2)) throw new EmailTaken();
    throw error;
  }
}

export async function emailRegistered(email: string): Promise<boolean> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.email(email), ProjectionExpression: 'pk' }));
  return res.Item !== undefined;
}

export function toAccount(item: Record<string, unknown>): Account {
  return {
    accountId: item.accountId as string,
    companyName: item.companyName as string,
    plan: item.plan as Plan,
    billingStatus: item.billingStatus as BillingStatus,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
    keyCount: readNumber(item.keyCount, 'keyCount'),
    // Absent on accounts made before teams: their one user, the registrant, is the one seat and the one admin.
    seats: item.seats === undefined ? 1 : readNumber(item.seats, 'seats'),
    adminCount: item.adminCount === undefined ? 1 : readNumber(item.adminCount, 'adminCount'),
    ...(typeof item.periodStart === 'string' ? { periodStart: item.periodStart } : {}),
    ...(typeof item.periodEnd === 'string' ? { periodEnd: item.periodEnd } : {}),
    ...(typeof item.stripeCustomerId === 'string' ? { stripeCustomerId: item.stripeCustomerId } : {}),
    ...(typeof item.stripeSubscriptionId === 'string' ? { stripeSubscriptionId: item.stripeSubscriptionId } : {}),
    ...(typeof item.billingUpdatedAt === 'string' ? { billingUpdatedAt: item.billingUpdatedAt } : {}),
    ...(typeof item.graceEndsAt === 'string' ? { graceEndsAt: item.graceEndsAt } : {}),
    ...(typeof item.subscriptionOrder === 'string' ? { subscriptionOrder: item.subscriptionOrder } : {}),
    ...pendingExpiries(item),
    connectedProviders: Object.keys(item)
      .filter((name) => name.startsWith('connected:') && typeof item[name] === 'string')
      .map((name) => name.slice('connected:'.length)),
  };
}

function pendingExpiries(item: Record<string, unknown>): Pick<Account, 'pendingInvitationExpiries'> {
  const expiries = Object.entries(item).flatMap(([name, value]) => (name.startsWith(PENDING_INVITATION_PREFIX) && typeof value === 'string' ? [value] : []));
  return expiries.length > 0 ? { pendingInvitationExpiries: expiries } : {};
}

/**
 * A stored user. Users written before roles existed were their account's only user, its registrant: `admin`, an
 * unverified address, alert e-mail on.
 */
export function toUser(item: Record<string, unknown>): User {
  return {
    userId: item.userId as string,
    accountId: item.accountId as string,
    email: item.email as string,
    firstName: item.firstName as string,
    lastName: item.lastName as string,
    role: ROLES.includes(item.role as Role) ? (item.role as Role) : 'admin',
    emailVerified: item.emailVerified === true,
    alertEmails: item.alertEmails !== false,
    ...(typeof item.sessionsValidAfter === 'string' ? { sessionsValidAfter: item.sessionsValidAfter } : {}),
    ...(typeof item.sessionEpoch === 'string' ? { sessionEpoch: item.sessionEpoch } : {}),
    ...(typeof item.sessionsKeptTokenId === 'string' ? { sessionsKeptTokenId: item.sessionsKeptTokenId } : {}),
    ...(item.sessionTokenIds instanceof Set ? { sessionTokenIds: [...(item.sessionTokenIds as Set<string>)] } : {}),
    ...(typeof item.resetLinksValidAfter === 'string' ? { resetLinksValidAfter: item.resetLinksValidAfter } : {}),
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

/** One user of the account, or undefined (removed, or never there). */
export async function getUser(accountId: string, userId: string, consistent = false): Promise<User | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.user(accountId, userId), ConsistentRead: consistent }));
  return res.Item && toUser(res.Item);
}

/** The account and one of its users in a single BatchGetItem. */
export async function getAccountAndUser(accountId: string, userId: string): Promise<{ account?: Account; user?: User }> {
  const accountKey = keys.account(accountId);
  const userKey = keys.user(accountId, userId);
  const items = await batchGet([accountKey, userKey]);
  const accountItem = items.find((item) => item.sk === accountKey.sk);
  const userItem = items.find((item) => item.sk === userKey.sk);
  return { account: accountItem && toAccount(accountItem), user: userItem && toUser(userItem) };
}

export async function getAccount(accountId: string, consistent = false): Promise<Account | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId), ConsistentRead: consistent }));
  return res.Item && toAccount(res.Item);
}

/**
 * Links a Stripe customer to the account, once: the account's `stripeCustomerId` (only if it has none) and the
 * `STRIPECUSTOMER#` lookup item, in one transaction. Returns the customer the account ends up with: `customerId`,
 * or the one a concurrent request linked first.
 */
export async function linkStripeCustomer(accountId: string, customerId: string, now = new Date()): Promise<string> {
  const at = now.toISOString();
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.account(accountId),
              UpdateExpression: 'SET stripeCustomerId = :cus, updatedAt = :now',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(stripeCustomerId)',
              ExpressionAttributeValues: { ':cus': customerId, ':now': at },
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.stripeCustomer(customerId), type: 'StripeCustomer', customerId, accountId, createdAt: at },
              ConditionExpression: notExists,
            },
          },
        ],
      }),
    );
    return customerId;
  } catch (error) {
    if (!failedConditions(error).includes(0)) throw error;
    // Another request linked one first (or the account is gone): read what it wrote, strongly consistent.
    const res = await db().send(
      new GetCommand({ TableName: tableName(), Key: keys.account(accountId), ProjectionExpression: 'stripeCustomerId', ConsistentRead: true }),
    );
    const linked = res.Item?.stripeCustomerId;
    if (typeof linked !== 'string') throw error;
    return linked;
  }
}

/** The account a Stripe customer belongs to (its `STRIPECUSTOMER#` item), if any. */
export async function accountOfStripeCustomer(customerId: string): Promise<string | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.stripeCustomer(customerId), ProjectionExpression: 'accountId' }));
  return res.Item?.accountId as string | undefined;
}
