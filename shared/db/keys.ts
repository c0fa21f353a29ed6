/**
 * THE key module: every pk / sk / gsi string of the single table is built here and nowhere else.
 *
 * Layout (README "Data model" explains each):
 *   ACCOUNT#<a>             ACCOUNT                      the account (plan, billing status, key count)
 *   ACCOUNT#<a>             USER#<userId>                a user of the account
 *   ACCOUNT#<a>             INGESTKEY#<ink_id>           an ingest key (no secret; its hash and lastUsedAt)
 *   EMAIL#<email>           EMAIL                        uniqueness of an e-mail address across all accounts
 *   INGESTSECRET#<sha256>   INGESTSECRET                 O(1) lookup of an ingest key by its secret's hash
 *   EVENT#<a>#<requestId>   EVENT                        exactly-once item of one ingested event (TTL 35+ days)
 *   KEY#<a>#<keyHash>       KEY                          a discovered provider key: label, hint, totals, today/month counters
 *                                                        gsi1: ACCOUNT#<a>#KEYS / KEY#<keyHash> lists an account's keys
 *   KEY#<a>#<keyHash>       DAY#<date>#<provider>#<model> one key's spend on one UTC day with one model
 *   USAGE#<a>               DAY#<date> | MONTH#<yyyy-mm>  the account's spend per UTC day / calendar month
 *   USAGE#<a>               PERIOD#<periodStart>         plan usage (tracked requests) in a billing period
 */
export interface Key {
  pk: string;
  sk: string;
}

const accountPk = (accountId: string) => `ACCOUNT#${accountId}`;
const keyPk = (accountId: string, keyHash: string) => `KEY#${accountId}#${keyHash}`;
const usagePk = (accountId: string) => `USAGE#${accountId}`;

export const keys = {
  account: (accountId: string): Key => ({ pk: accountPk(accountId), sk: 'ACCOUNT' }),
  user: (accountId: string, userId: string): Key => ({ pk: accountPk(accountId), sk: `USER#${userId}` }),
  email: (email: string): Key => ({ pk: `EMAIL#${email}`, sk: 'EMAIL' }),

  ingestKey: (accountId: string, ingestKeyId: string): Key => ({ pk: accountPk(accountId), sk: `INGESTKEY#${ingestKeyId}` }),
  ingestSecret: (secretHash: string): Key => ({ pk: `INGESTSECRET#${secretHash}`, sk: 'INGESTSECRET' }),

  event: (accountId: string, requestId: string): Key => ({ pk: `EVENT#${accountId}#${requestId}`, sk: 'EVENT' }),

  providerKey: (accountId: string, keyHash: string): Key => ({ pk: keyPk(accountId, keyHash), sk: 'KEY' }),
  /** GSI attributes that list an account's keys. */
  providerKeyIndex: (accountId: string, keyHash: string) => ({ gsi1pk: `${accountPk(accountId)}#KEYS`, gsi1sk: `KEY#${keyHash}` }),
  keyDayModel: (accountId: string, keyHash: string, date: string, provider: string, model: string): Key => ({
    pk: keyPk(accountId, keyHash),
    sk: `DAY#${date}#${provider}#${model}`,
  }),

  usageDay: (accountId: string, date: string): Key => ({ pk: usagePk(accountId), sk: `DAY#${date}` }),
  usageMonth: (accountId: string, month: string): Key => ({ pk: usagePk(accountId), sk: `MONTH#${month}` }),
  usagePeriod: (accountId: string, periodStart: string): Key => ({ pk: usagePk(accountId), sk: `PERIOD#${periodStart}` }),
} as const;

/** Partition keys and sort-key bounds for Queries. */
export const queries = {
  /** An account's users, ingest keys, ... : pk + begins_with(sk, prefix). */
  accountItems: (accountId: string, kind: 'USER' | 'INGESTKEY') => ({ pk: accountPk(accountId), skPrefix: `${kind}#` }),
  /** All keys of an account, on gsi1. */
  providerKeys: (accountId: string) => ({ gsi1pk: keys.providerKeyIndex(accountId, '').gsi1pk }),
  /** One key's day × model items from `from` to `to` (inclusive, YYYY-MM-DD). */
  keyDays: (accountId: string, keyHash: string, from: string, to: string) => ({
    pk: keyPk(accountId, keyHash),
    skFrom: `DAY#${from}`,
    skTo: `DAY#${to}#~`,
  }),
  /** The account's day items from `from` to `to` (inclusive). */
  usageDays: (accountId: string, from: string, to: string) => ({ pk: usagePk(accountId), skFrom: `DAY#${from}`, skTo: `DAY#${to}` }),
} as const;
