/**
 * Per-account caps that hold exactly under concurrent creates (20 ingest keys, 100 budgets, 100 rules; the seats
 * of the teams work use the same mechanism).
 *
 * Each capped kind has a counter item in the account's partition (`keys.capCounter`, attribute `n`). A create
 * runs in ONE TransactWriteItems with `capCounterUpdate` (ADD n 1 if n < cap); a delete with `capCounterRelease`
 * (ADD n -1). So the count and the items can never disagree, and no two racing creates can both take the last
 * slot: DynamoDB serializes the transactions on the counter item.
 *
 * Accounts created before the counters have none. The first create or delete of a kind finds the counter missing
 * (its condition fails), counts the kind's items with one strongly consistent Query and puts the counter if it is
 * still missing; then it retries. That count is exact: every writer of the kind needs the counter to exist, so
 * nothing adds or removes such an item while it is missing.
 */
import { GetCommand, PutCommand, QueryCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName, transactWithCounter } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { readNumber } from '#shared/db/numbers.ts';

export type Action = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The capped kinds and the account items (sort-key prefixes) each counts. Seats: add `seats` with its prefixes. */
export const CAPPED = {
  ingestKeys: ['INGESTKEY'],
  budgets: ['CFG#BUDGET'],
  rules: ['CFG#RULE'],
  prices: ['PRICE'],
} as const satisfies Record<string, readonly Parameters<typeof queries.accountItems>[1][]>;

export type CapKind = keyof typeof CAPPED;

/** The transaction item that takes one slot of `kind`: fails its condition at the cap (or when the counter is missing). */
export function capCounterUpdate(accountId: string, kind: CapKind, cap: number): Action {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.capCounter(accountId, kind),
      UpdateExpression: 'ADD n :one',
      ConditionExpression: 'attribute_exists(n) AND n < :cap',
      ExpressionAttributeValues: { ':one': 1, ':cap': cap },
    },
  };
}

/** The transaction item that frees one slot of `kind` (fails its condition only when the counter is missing). */
export function capCounterRelease(accountId: string, kind: CapKind): Action {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.capCounter(accountId, kind),
      UpdateExpression: 'ADD n :minusOne',
      ConditionExpression: 'attribute_exists(n)',
      ExpressionAttributeValues: { ':minusOne': -1 },
    },
  };
}

export type CountedOutcome =
  | { status: 'written' }
  /** The cap is reached: nothing was written. */
  | { status: 'cap' }
  /** Conditions of the caller's own actions failed (indexes into `actions`): nothing was written. */
  | { status: 'failed'; failed: number[] };

const MAX_ATTEMPTS = 12;

/** Creates (`cap` given: the counter goes up) or deletes (`cap` null: it goes down) with `actions`, in one transaction. */
export async function writeCounted(accountId: string, kind: CapKind, cap: number | null, actions: Action[]): Promise<CountedOutcome> {
  const counter = cap === null ? capCounterRelease(accountId, kind) : capCounterUpdate(accountId, kind, cap);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const outcome = await transactWithCounter(counter, actions);
    if (outcome.status !== 'counter') return outcome;
    const n = await readCounter(accountId, kind);
    if (n === undefined) await initCounter(accountId, kind);
    else if (cap !== null && n >= cap) return { status: 'cap' };
    // initialized now, or a slot was freed meanwhile: again
  }
  throw new Error(`The ${kind} counter stayed contended after ${MAX_ATTEMPTS} attempts.`);
}

async function readCounter(accountId: string, kind: CapKind): Promise<number | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.capCounter(accountId, kind), ConsistentRead: true }));
  return res.Item ? readNumber(res.Item.n, `the ${kind} counter`) : undefined;
}

/** Counts the kind's items (one strongly consistent Query per prefix, every page) and puts the counter if still missing. */
async function initCounter(accountId: string, kind: CapKind): Promise<void> {
  let n = 0;
  for (const prefix of CAPPED[kind]) {
    const q = queries.accountItems(accountId, prefix);
    let start: Record<string, unknown> | undefined;
    do {
      const res = await db().send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
          Select: 'COUNT',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      n += res.Count ?? 0;
      start = res.LastEvaluatedKey;
    } while (start);
  }
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.capCounter(accountId, kind), type: 'CapCounter', kind, n },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
  }
}
