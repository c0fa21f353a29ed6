/** Repository for accounts, their users, and e-mail uniqueness. Items share the account's partition. */
import { BatchGetCommand, GetCommand, TransactWriteCommand, type BatchGetCommandInput, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { db, failedConditions, tableName } from '#shared/db/client.ts';
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

function toAccount(item: Record<string, unknown>): Account {
  return {
    accountId: item.accountId as string,
    companyName: item.companyName as string,
    plan: item.plan as Plan,
    billingStatus: item.billingStatus as BillingStatus,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
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

/** The account and one of its users in a single BatchGetItem (retrying unprocessed keys with backoff). */
export async function getAccountAndUser(accountId: string, userId: string): Promise<{ account?: Account; user?: User }> {
  const accountKey = keys.account(accountId);
  const userKey = keys.user(accountId, userId);
  let request: BatchGetCommandInput['RequestItems'] = { [tableName()]: { Keys: [{ ...accountKey }, { ...userKey }] } };
  const items: Record<string, unknown>[] = [];
  for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
    if (attempt === 5) throw new Error('BatchGetItem left keys unprocessed after 5 attempts');
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
    const res: BatchGetCommandOutput = await db().send(new BatchGetCommand({ RequestItems: request }));
    items.push(...(res.Responses?.[tableName()] ?? []));
    request = res.UnprocessedKeys;
  }
  const accountItem = items.find((item) => item.sk === accountKey.sk);
  const userItem = items.find((item) => item.sk === userKey.sk);
  return { account: accountItem && toAccount(accountItem), user: userItem && toUser(userItem) };
}
