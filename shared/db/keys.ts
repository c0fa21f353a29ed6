/**
 * THE key module: every pk / sk / gsi string of the single table is built here and nowhere else.
 *
 * Layout (see README "Data model"):
 *   ACCOUNT#<accountId> / ACCOUNT          the account (plan, billing status)
 *   ACCOUNT#<accountId> / USER#<userId>    a user of the account
 *   EMAIL#<email>       / EMAIL            uniqueness of an e-mail address across all accounts
 */
export interface Key {
  pk: string;
  sk: string;
}

const accountPk = (accountId: string) => `ACCOUNT#${accountId}`;

export const keys = {
  account: (accountId: string): Key => ({ pk: accountPk(accountId), sk: 'ACCOUNT' }),
  user: (accountId: string, userId: string): Key => ({ pk: accountPk(accountId), sk: `USER#${userId}` }),
  email: (email: string): Key => ({ pk: `EMAIL#${email}`, sk: 'EMAIL' }),
} as const;

/** Prefixes for Queries with begins_with on the sort key. */
export const skPrefix = {
  user: 'USER#',
} as const;
