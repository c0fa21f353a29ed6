/**
 * THE key module: every pk / sk / gsi string of the single table is built here and nowhere else.
 *
 * Layout (docs/architecture.md "Data model" explains each):
 *   ACCOUNT#<a>             ACCOUNT                      the account (plan, billing status, key count)
 *   ACCOUNT#<a>             USER#<userId>                a user of the account
 *   ACCOUNT#<a>             INGESTKEY#<ink_id>           an ingest key (no secret; its hash and lastUsedAt)
 *   ACCOUNT#<a>             CFG#BUDGET#<bud_id>          a budget   } one Query on begins_with(CFG#) loads all an
 *   ACCOUNT#<a>             CFG#RULE#<rul_id>            a rule     } account's budgets and rules for evaluation
 *   ACCOUNT#<a>             COUNTER#<kind>               how many items of a capped kind the account has (caps.ts)
 *   ALERTS#<a>              ALERT#<alt_id>               an alert (ULID ids: newest first by sort key)
 *   ALERTS#<a>              COUNTS                       how many of the account's alerts are triggered / acknowledged
 *                                                        gsi1: ALERTS#<a>#<status> / ALERT#<alt_id> lists by status
 *                                                        gsi2 (sparse): PENDINGALERTS / <triggeredAt>#<a>#<alt_id> while
 *                                                        a channel is undelivered — what the sweeper re-queues
 *   FIRED#<a>#<source>#<level>#<period>  FIRED           "this rule/budget fired at this level in this period": its
 *                                                        conditional Put decides that exactly one alert is created
 *   EMAIL#<email>           EMAIL                        uniqueness of an e-mail address across all accounts
 *   INGESTSECRET#<sha256>   INGESTSECRET                 O(1) lookup of an ingest key by its secret's hash
 *   EVENT#<a>#<requestId>   EVENT                        exactly-once item of one ingested event (TTL 35+ days)
 *   KEY#<a>#<keyHash>       KEY                          a discovered provider key: label, hint, totals, today/month counters
 *                                                        gsi1: ACCOUNT#<a>#KEYS / KEY#<keyHash> lists an account's keys
 *   KEY#<a>#<keyHash>       DAY#<date>#<provider>#<model> one key's spend on one UTC day with one model
 *   TOKEN#<sha256>          TOKEN                        a single-use link token (verify e-mail, reset password, invitation),
 *                                                        stored by its hash only, TTL
 *   LIMIT#<kind>#<subject>  LIMIT                        a request counter of one abuse limit's window (rate-limits.ts): the
 *                                                        subject is an IP, a user id or a hash of (e-mail, IP); TTL
 *   ACCOUNT#<a>             INVITATION#<inv_id>          an invitation (pending, accepted, revoked, expired)
 *   ACCOUNT#<a>             INVITEE#<email>              the pending invitation to an address (one at a time)
 *   NOTIFYCAP#<kind>#<sha256>#<hour>  NOTIFYCAP       alert notifications to one e-mail recipient / webhook URL in one
 *                                                        UTC hour (conditional counter, TTL): shared/notify/caps.ts
 *   STRIPEEVENT#<evt_id>    STRIPEEVENT                  a Stripe webhook event applied (written with its state change)
 *   STRIPECUSTOMER#<cus_id> STRIPECUSTOMER               which account a Stripe customer belongs to
 *   USAGE#<a>               DAY#<date> | MONTH#<yyyy-mm>  the account's spend per UTC day / calendar month
 *   USAGE#<a>               PERIOD#<periodStart>         plan usage (tracked requests) in a billing period
 *   SPEND#<a>#MODELS        DAY#<date>#<provider>#<model> the account's spend on one UTC day with one model (GET /spend
 *                                                        groupBy=model|provider: one Query for any range)
 *   SPEND#<a>#KEYS          MONTH#<yyyy-mm>#<keyHash>    one key's spend in a calendar month } GET /spend groupBy=key:
 *   SPEND#<a>#KEYS          DAY#<date>#<keyHash>         one key's spend on one UTC day      } months whole, edges by day
 *   (KEY#<a>#<keyHash> DAY#… items also carry gsi1: SPEND#<a>#ROWS / DAY#<date>#<keyHash>#<provider>#<model>: the
 *    export's rows of a range in one Query, days ascending)
 *   ACCOUNT#<a>             PRICE#<provider>#<model>     an account's own price of a model (lower-case names)
 *   ACCOUNT#<a>             CONNECTION#<con_id>          a provider connection (its sealed admin key, status, sync cursor)
 *                                                        gsi2 (sparse, while active or in error): CONNECTIONS#<shard 0..15> /
 *                                                        <nextSyncAt>#<a>#<con_id> — what the dispatcher queues when due
 *   CONNLEASE#<a>#<con_id>  LEASE                        "a sync of this connection runs": conditional Put with expiry
 *   IMPORT#<a>#<provider>   CELL#<date>#<keyId>#<model>#<tier>  the counts a sync imported last for one cell (the
 *                                                        snapshot a sync's difference is conditioned on); keyId `unattributed`
 *                                                        for usage without a key
 *   IMPORT#<a>#<provider>   RECON#<date>                 a day's computed cost of the imported keys and the provider's bill
 *                                                        (its estimate, whether it is settled, its lines)
 *   IMPORT#<a>#<provider>   SETTLE#<date>#<keyId>#<row>  the correction a settlement applied last to one key's row (model or
 *                                                        billed line) of a day: the aggregates hold estimate + correction
 *   (the snapshot partition is per account and PROVIDER, not per connection: a provider disconnected and connected
 *    again re-reads the same cells and counts nothing twice)
 *   ACCOUNT#<a>             EXPORT#<exp_id>              an asynchronous spend export: its range, status, rows, bytes
 *   ACCOUNT#<a>             EXPORTSLOT#<0|1>             one of the account's 2 running-export slots: which export holds
 *                                                        it and until when (a lease: a crashed worker frees it later)
 *   ACCOUNT#<a>             ENFORCE#T#<target>           one provider target's lever (a key's switch, a project's cap, a
 *                                                        reporter block): its holders (budgets, anomaly rules) and its own
 *                                                        state before the first hold; written conditionally on its
 *                                                        version, so acts on one target are serialised
 *                                                        (shared/enforcement/)
 *   ACCOUNT#<a>             ENFORCE#R#<holder>           a holder released by a person for the rest of a month
 *   ACCOUNT#<a>             ENFORCE#<bud_id>#<target>    the earlier layout (one stop budget's state on one target): carried
 *                                                        over on read into ENFORCE#T#, then a marker that expires in 30 days
 *                                                        (shared/db/enforcement-legacy.ts)
 *   ACCOUNT#<a>             ENFORCE#J#<con_id>           a deleted connection's levers still to put back: its provider and
 *                                                        sealed admin key, until the sync worker has released them
 *   ACTIONS#<a>             ACT#<act_id>                 one act of enforcement, newest first; gsi1: ACTIONS#<a>#<bud_id> /
 *                                                        ACT#<act_id> lists one budget's acts
 *   ACCOUNT#<a>             MONTH#<yyyy-mm>              a closed month (closedAt, closedBy, settledThrough): its days' aggregates
 *                                                        are never written again; every spend write to a past open month is
 *                                                        conditioned on this item not existing (shared/db/months.ts)
 *   KEY#<a>#<keyHash>       DAY#<date>#<provider>#<model>#CORRECTION#<day>  a correction booked on <date> (the day it was found)
 *                                                        of a closed month's <day>: a row of its own, beside the day's estimate
 *   SPEND#<a>#CUST#<yyyy-mm> C#<customerId>             one customer's spend in a month (events' `customerId`), first and
 *                                                        last seen; `#COUNT`: how many distinct customers the month has
 *   SPEND#<a>#FEAT#<yyyy-mm> F#<feature>                 one feature's spend in a month (events' `feature`)
 *                                                        (both: gsi3: SPEND#<a>#CUST|FEAT#<yyyy-mm> / its cost in µ$, a NUMBER
 *                                                        the writer ADDs to: the month's top by cost in one page; `#TOTAL`:
 *                                                        the month's sums of events that name one)
 *   ACCOUNT#<a>             PROJECT#<con_id>#<projectId> a project's tags (an OpenAI project, an Anthropic workspace) and
 *                                                        their revision; its keys' `effectiveTags` are written from them.
 *                                                        gsi1: ACCOUNT#<a>#KEYS / PROJECT#<con_id>#<projectId>: beside the
 *                                                        keys, so GET /projects reads keys and tags in one Query
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
  /** `correctionOf`: a correction of that closed day booked on `date` (a row of its own). */
  keyDayModel: (accountId: string, keyHash: string, date: string, provider: string, model: string, correctionOf?: string): Key => ({
    pk: keyPk(accountId, keyHash),
    sk: `DAY#${date}#${provider}#${model}${correctionOf ? `#CORRECTION#${correctionOf}` : ''}`,
  }),
  /** A closed month of an account (YYYY-MM). */
  closedMonth: (accountId: string, month: string): Key => ({ pk: accountPk(accountId), sk: `MONTH#${month}` }),

  budget: (accountId: string, budgetId: string): Key => ({ pk: accountPk(accountId), sk: `CFG#BUDGET#${budgetId}` }),
  rule: (accountId: string, ruleId: string): Key => ({ pk: accountPk(accountId), sk: `CFG#RULE#${ruleId}` }),
  /** The counter of a capped kind of item (`ingestKeys`, `budgets`, `rules`, ...): shared/db/caps.ts. */
  capCounter: (accountId: string, kind: string): Key => ({ pk: accountPk(accountId), sk: `COUNTER#${kind}` }),
  alert: (accountId: string, alertId: string): Key => ({ pk: `ALERTS#${accountId}`, sk: `ALERT#${alertId}` }),
  /** The account's alert counters (`triggered`, `acknowledged`), moved in the same transaction as every alert created or acknowledged. */
  alertCounts: (accountId: string): Key => ({ pk: `ALERTS#${accountId}`, sk: 'COUNTS' }),
  /** GSI attributes that list an account's alerts by status. */
  alertIndex: (accountId: string, alertId: string, status: string) => ({ gsi1pk: `ALERTS#${accountId}#${status}`, gsi1sk: `ALERT#${alertId}` }),
  /** Sparse gsi2 attributes of an alert whose deliveries are not all settled (removed once they are). */
  pendingAlertIndex: (accountId: string, alertId: string, triggeredAt: string) => ({
    gsi2pk: 'PENDINGALERTS',
    gsi2sk: `${triggeredAt}#${accountId}#${alertId}`,
  }),
  /** `source` is a rule or budget id (or `plan`); `level` e.g. `threshold`, `exceeded`, `fired`; `period` the day/week/month/key. */
  fired: (accountId: string, source: string, level: string, period: string): Key => ({
    pk: `FIRED#${accountId}#${source}#${level}#${period}`,
    sk: 'FIRED',
  }),

  linkToken: (tokenHash: string): Key => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /** The current window's counter of one abuse limit (`register`, `login`, ...) for one subject. */
  rateLimit: (kind: string, subject: string): Key => ({ pk: `LIMIT#${kind}#${subject}`, sk: 'LIMIT' }),
  invitation: (accountId: string, invitationId: string): Key => ({ pk: accountPk(accountId), sk: `INVITATION#${invitationId}` }),
  /** "This account has a pending invitation to this address": at most one at a time. */
  invitee: (accountId: string, email: string): Key => ({ pk: accountPk(accountId), sk: `INVITEE#${email}` }),

  /**
   * The counter of alert notifications to one target in one UTC hour: `kind` `email` (a recipient) or `url` (a
   * webhook or Slack URL); `targetHash` the SHA-256 of the address or URL; `hour` `2026-11-21T22`.
   */
  notifyCap: (kind: string, targetHash: string, hour: string): Key => ({ pk: `NOTIFYCAP#${kind}#${targetHash}#${hour}`, sk: 'NOTIFYCAP' }),

  stripeEvent: (eventId: string): Key => ({ pk: `STRIPEEVENT#${eventId}`, sk: 'STRIPEEVENT' }),
  stripeCustomer: (customerId: string): Key => ({ pk: `STRIPECUSTOMER#${customerId}`, sk: 'STRIPECUSTOMER' }),

  usageDay: (accountId: string, date: string): Key => ({ pk: usagePk(accountId), sk: `DAY#${date}` }),
  usageMonth: (accountId: string, month: string): Key => ({ pk: usagePk(accountId), sk: `MONTH#${month}` }),
  usagePeriod: (accountId: string, periodStart: string): Key => ({ pk: usagePk(accountId), sk: `PERIOD#${periodStart}` }),

  spendDayModel: (accountId: string, date: string, provider: string, model: string): Key => ({
    pk: `SPEND#${accountId}#MODELS`,
    sk: `DAY#${date}#${provider}#${model}`,
  }),
  spendMonthKey: (accountId: string, month: string, keyHash: string): Key => ({ pk: `SPEND#${accountId}#KEYS`, sk: `MONTH#${month}#${keyHash}` }),
  spendDayKey: (accountId: string, date: string, keyHash: string): Key => ({ pk: `SPEND#${accountId}#KEYS`, sk: `DAY#${date}#${keyHash}` }),
  /** One customer's spend in a calendar month; `customerCount`: the month's distinct customers (the plan's limit). */
  spendMonthCustomer: (accountId: string, month: string, customerId: string): Key => ({ pk: `SPEND#${accountId}#CUST#${month}`, sk: `C#${customerId}` }),
  customerCount: (accountId: string, month: string): Key => ({ pk: `SPEND#${accountId}#CUST#${month}`, sk: '#COUNT' }),
  spendMonthFeature: (accountId: string, month: string, feature: string): Key => ({ pk: `SPEND#${accountId}#FEAT#${month}`, sk: `F#${feature}` }),
  /** The sums of every event of the month that names a customer / a feature (what `others` is taken from). */
  customerTotal: (accountId: string, month: string): Key => ({ pk: `SPEND#${accountId}#CUST#${month}`, sk: '#TOTAL' }),
  featureTotal: (accountId: string, month: string): Key => ({ pk: `SPEND#${accountId}#FEAT#${month}`, sk: '#TOTAL' }),
  /** gsi3 attributes of a month × customer / feature item: its partition, sorted by its month's cost (µ$, a number). */
  nameCostIndex: (pk: string) => ({ gsi3pk: pk }),
  /** gsi1 attributes of a key × day × model item: the account's export rows, days ascending. */
  spendRowIndex: (accountId: string, date: string, keyHash: string, provider: string, model: string, correctionOf?: string) => ({
    gsi1pk: `SPEND#${accountId}#ROWS`,
    gsi1sk: `DAY#${date}#${keyHash}#${provider}#${model}${correctionOf ? `#CORRECTION#${correctionOf}` : ''}`,
  }),
  connection: (accountId: string, connectionId: string): Key => ({ pk: accountPk(accountId), sk: `CONNECTION#${connectionId}` }),
  /** Sparse gsi2 attributes of a connection the dispatcher should sync at `nextSyncAt` (removed while paused). */
  connectionDueIndex: (shard: number, nextSyncAt: string, accountId: string, connectionId: string) => ({
    gsi2pk: `CONNECTIONS#${shard}`,
    gsi2sk: `${nextSyncAt}#${accountId}#${connectionId}`,
  }),
  connectionLease: (accountId: string, connectionId: string): Key => ({ pk: `CONNLEASE#${accountId}#${connectionId}`, sk: 'LEASE' }),
  /** An imported usage cell; `window`: Anthropic's long-context window (standard-window cells have none). */
  importCell: (accountId: string, provider: string, date: string, keyId: string, model: string, tier: string, window?: string): Key => ({
    pk: `IMPORT#${accountId}#${provider}`,
    sk: `CELL#${date}#${keyId}#${model}#${tier}${window ? `#${window}` : ''}`,
  }),
  importDay: (accountId: string, provider: string, date: string): Key => ({ pk: `IMPORT#${accountId}#${provider}`, sk: `RECON#${date}` }),
  /** A settled day's correction of one key's row (model, or a billed line no model names). */
  settleCell: (accountId: string, provider: string, date: string, keyId: string, row: string): Key => ({
    pk: `IMPORT#${accountId}#${provider}`,
    sk: `SETTLE#${date}#${keyId}#${row}`,
  }),
  /** An account's own price; provider and model lower-cased by the caller. */
  accountPrice: (accountId: string, provider: string, model: string): Key => ({ pk: accountPk(accountId), sk: `PRICE#${provider}#${model}` }),
  spendExport: (accountId: string, exportId: string): Key => ({ pk: accountPk(accountId), sk: `EXPORT#${exportId}` }),
  exportSlot: (accountId: string, slot: number): Key => ({ pk: accountPk(accountId), sk: `EXPORTSLOT#${slot}` }),
  /** One provider target's lever state (`key:<hash>`, `project:<con_id>:<projectId>`, `reporter:<hash>`). */
  leverState: (accountId: string, targetId: string): Key => ({ pk: accountPk(accountId), sk: `ENFORCE#T#${targetId}` }),
  /** A holder (`budget:<id>`, `anomaly:<id>`) released by a person for the rest of a month. */
  leverRelease: (accountId: string, holderKey: string): Key => ({ pk: accountPk(accountId), sk: `ENFORCE#R#${holderKey}` }),
  /** The earlier layout's state of one stop budget on one target (read only to carry it over: enforcement-legacy.ts). */
  legacyEnforcementState: (accountId: string, budgetId: string, targetId: string): Key => ({ pk: accountPk(accountId), sk: `ENFORCE#${budgetId}#${targetId}` }),
  /** A deleted connection whose levers the sync worker still has to put back. */
  leverReleaseJob: (accountId: string, connectionId: string): Key => ({ pk: accountPk(accountId), sk: `ENFORCE#J#${connectionId}` }),
  enforcementAction: (accountId: string, actionId: string): Key => ({ pk: `ACTIONS#${accountId}`, sk: `ACT#${actionId}` }),
  /** A project's tags: the connection and its OpenAI project or Anthropic workspace. */
  projectTags: (accountId: string, connectionId: string, projectId: string): Key => ({ pk: accountPk(accountId), sk: `PROJECT#${connectionId}#${projectId}` }),
  /** gsi1 attributes of a project's tags: in the partition of the account's keys, after them. */
  projectTagsIndex: (accountId: string, connectionId: string, projectId: string) => ({ gsi1pk: `${accountPk(accountId)}#KEYS`, gsi1sk: `PROJECT#${connectionId}#${projectId}` }),
  /** gsi1 attributes of an act: one budget's acts, newest first. */
  enforcementActionIndex: (accountId: string, budgetId: string, actionId: string) => ({ gsi1pk: `ACTIONS#${accountId}#${budgetId}`, gsi1sk: `ACT#${actionId}` }),
} as const;

/** Partition keys and sort-key bounds for Queries. */
export const queries = {
  /** An account's users, ingest keys, ... : pk + begins_with(sk, prefix). */
  accountItems: (accountId: string, kind: 'USER' | 'INGESTKEY' | 'INVITATION' | 'CFG' | 'CFG#BUDGET' | 'CFG#RULE' | 'PRICE' | 'CONNECTION' | 'ENFORCE' | 'PROJECT') => ({
    pk: accountPk(accountId),
    skPrefix: `${kind}#`,
  }),
  /**
   * The account item and its connections in ONE Query (the sort keys between them: `ACCOUNT`, the `CFG#` budgets and
   * rules, `CONNECTION#…`): what coverage reads.
   */
  accountAndConnections: (accountId: string) => ({ pk: accountPk(accountId), skFrom: 'ACCOUNT', skTo: 'CONNECTION#~' }),
  /** An account's alerts, newest first: all (base table) or one status (gsi1). */
  alerts: (accountId: string) => ({ pk: `ALERTS#${accountId}`, skPrefix: 'ALERT#' }),
  alertsByStatus: (accountId: string, status: string) => ({ gsi1pk: keys.alertIndex(accountId, '', status).gsi1pk }),
  /** All keys of an account, on gsi1 (`skPrefix`: the keys only; the partition also holds the projects' tags). */
  providerKeys: (accountId: string) => ({ gsi1pk: keys.providerKeyIndex(accountId, '').gsi1pk, skPrefix: 'KEY#', projectsPrefix: 'PROJECT#' }),
  /** One key's day × model items from `from` to `to` (inclusive, YYYY-MM-DD). */
  keyDays: (accountId: string, keyHash: string, from: string, to: string) => ({
    pk: keyPk(accountId, keyHash),
    skFrom: `DAY#${from}`,
    skTo: `DAY#${to}#~`,
  }),
  /** Alerts with undelivered channels that were triggered before `before` (an ISO instant), oldest first, on gsi2. */
  pendingAlertsBefore: (before: string) => ({ gsi2pk: keys.pendingAlertIndex('', '', '').gsi2pk, skBelow: before }),
  /** An account's closed months `from`…`to` (YYYY-MM, inclusive). */
  closedMonths: (accountId: string, from: string, to: string) => ({ pk: accountPk(accountId), skFrom: `MONTH#${from}`, skTo: `MONTH#${to}` }),
  /** The account's day items from `from` to `to` (inclusive). */
  usageDays: (accountId: string, from: string, to: string) => ({ pk: usagePk(accountId), skFrom: `DAY#${from}`, skTo: `DAY#${to}` }),
  /** The account's day × model items from `from` to `to` (inclusive). */
  spendDayModels: (accountId: string, from: string, to: string) => ({ pk: `SPEND#${accountId}#MODELS`, skFrom: `DAY#${from}`, skTo: `DAY#${to}#~` }),
  /** The account's month × key items of the months `from`…`to` (YYYY-MM, inclusive). */
  spendMonthKeys: (accountId: string, from: string, to: string) => ({ pk: `SPEND#${accountId}#KEYS`, skFrom: `MONTH#${from}`, skTo: `MONTH#${to}#~` }),
  /** A month's customers (ONE Query of the month's partition) and its features. */
  monthCustomers: (accountId: string, month: string) => ({ pk: `SPEND#${accountId}#CUST#${month}`, skPrefix: 'C#' }),
  monthFeatures: (accountId: string, month: string) => ({ pk: `SPEND#${accountId}#FEAT#${month}`, skPrefix: 'F#' }),
  /** The account's day × key items from `from` to `to` (inclusive). */
  spendDayKeys: (accountId: string, from: string, to: string) => ({ pk: `SPEND#${accountId}#KEYS`, skFrom: `DAY#${from}`, skTo: `DAY#${to}#~` }),
  /** Connections due by `before` (ISO) in one shard, soonest first, on gsi2. */
  dueConnections: (shard: number, before: string) => ({ gsi2pk: `CONNECTIONS#${shard}`, skBelow: `${before}#~` }),
  /** A provider's imported cells of the days `from`…`to` (inclusive). */
  importCells: (accountId: string, provider: string, from: string, to: string) => ({ pk: `IMPORT#${accountId}#${provider}`, skFrom: `CELL#${from}`, skTo: `CELL#${to}#~` }),
  /** A provider's settlement corrections of the days `from`…`to` (inclusive). */
  settleCells: (accountId: string, provider: string, from: string, to: string) => ({ pk: `IMPORT#${accountId}#${provider}`, skFrom: `SETTLE#${from}`, skTo: `SETTLE#${to}#~` }),
  /** A provider's reconciliation days `from`…`to` (inclusive). */
  importDays: (accountId: string, provider: string, from: string, to: string) => ({ pk: `IMPORT#${accountId}#${provider}`, skFrom: `RECON#${from}`, skTo: `RECON#${to}` }),
  /** An account's acts (base table) or one budget's (gsi1), newest first. */
  enforcementActions: (accountId: string) => ({ pk: `ACTIONS#${accountId}`, skPrefix: 'ACT#' }),
  budgetEnforcementActions: (accountId: string, budgetId: string) => ({ gsi1pk: keys.enforcementActionIndex(accountId, budgetId, '').gsi1pk }),
  /** The export rows (key × day × model) from `from` to `to`, on gsi1. */
  spendRows: (accountId: string, from: string, to: string) => ({ gsi1pk: `SPEND#${accountId}#ROWS`, skFrom: `DAY#${from}`, skTo: `DAY#${to}#~` }),
} as const;
