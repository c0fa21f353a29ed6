/** Repository for accounts, their users, and e-mail uniqueness. Items share the account's partition. */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, db, failedConditions, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';

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
  /** The Stripe subscription's current period (paid plans). */
  periodStart?: string;
  periodEnd?: string;
}

export interface User {
  userId: string;
  accountId: string;
  email: string;
  firstName: string;
  lastName: string;
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

/** Account, owner and e-mail item in ONE transaction: all three are written or none is. */
export async function createAccountWithOwner(account: Account, user: User): Promise<void> {
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName(), Item: { ...keys.account(account.accountId), type: 'Account', ...account }, ConditionExpression: notExists } },
          { Put: { TableName: tableName(), Item: { ...keys.user(user.accountId, user.userId), type: 'User', ...user }, ConditionExpression: notExists } },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.email(user.email), type: 'Email', email: user.email, accountId: user.accountId, userId: user.userId, createdAt: user.createdAt },
              ConditionExpression: notExists,
            },
          },
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
    keyCount: (item.keyCount as number | undefined) ?? 0,
    ...(typeof item.periodStart === 'string' ? { periodStart: item.periodStart } : {}),
    ...(typeof item.periodEnd === 'string' ? { periodEnd: item.periodEnd } : {}),
  };
}

function toUser(item: Record<string, unknown>): User {
  return {
    userId: item.userId as string,
    accountId: item.accountId as string,
    email: item.email as string,
    firstName: item.firstName as string,
    lastName: item.lastName as string,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
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

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId) }));
  return res.Item && toAccount(res.Item);
}
