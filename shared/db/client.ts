import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  TransactWriteCommand,
  type BatchGetCommandOutput,
  type QueryCommandInput,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { parseStoredNumber } from '#shared/db/numbers.ts';

let client: DynamoDBDocumentClient | undefined;

/** The document client, created once per container (locally pointed at DynamoDB Local). */
export function db(): DynamoDBDocumentClient {
  if (!client) {
    const cfg = config();
    client = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: cfg.region, ...(cfg.dynamodbEndpoint ? { endpoint: cfg.dynamodbEndpoint } : {}) }),
      // Numbers are read without loss: integers past 2^53 as bigint (shared/db/numbers.ts).
      { marshallOptions: { removeUndefinedValues: true }, unmarshallOptions: { wrapNumbers: parseStoredNumber } },
    );
  }
  return client;
}

export const tableName = (): string => config().tableName;

/** Index (in a TransactWriteItems) of each cancelled action whose condition failed. */
export function failedConditions(error: unknown): number[] {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return [];
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
}

/** A transaction that lost a race with another on the same items (retry it), not a failed condition. */
export function isTransactionConflict(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TransactionConflictException') return true;
  if (error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === 'TransactionConflict');
}

/**
 * TransactWriteItems, retried with jittered backoff while it only loses races (TransactionConflict) — e.g. many
 * concurrent invitations updating one account's seat counter. A failed condition is thrown at once.
 */
export async function transactWrite(items: NonNullable<TransactWriteCommandInput['TransactItems']>, attempts = 8): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      if (attempt >= attempts || !isTransactionConflict(error) || failedConditions(error).length > 0) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** attempt));
    }
  }
}

export type Item = Record<string, unknown>;

type TransactAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** How a transaction led by a counter update ended: written; the caller's own conditions failed (indexes into `actions`); the counter's failed. */
export type CounterOutcome = { status: 'written' } | { status: 'failed'; failed: number[] } | { status: 'counter' };

const COUNTER_ATTEMPTS = 20;

/**
 * TransactWriteItems of `[counter, ...actions]` (a counter item moved in the same transaction as what it counts:
 * caps.ts, alerts.ts), retried with full-jitter backoff while it only loses races to concurrent transactions on the
 * counter. A failed condition is not retried: it is answered, the caller's first.
 */
export async function transactWithCounter(counter: TransactAction, actions: TransactAction[]): Promise<CounterOutcome> {
  for (let attempt = 0; attempt < COUNTER_ATTEMPTS; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: [counter, ...actions] }));
      return { status: 'written' };
    } catch (error) {
      const name = error instanceof Error ? error.name : '';
      if (name !== 'TransactionConflictException' && name !== 'TransactionCanceledException') throw error;
      const codes = ((error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');
      const failed = codes.slice(1).flatMap((code, i) => (code === 'ConditionalCheckFailed' ? [i] : []));
      if (failed.length > 0) return { status: 'failed', failed };
      if (codes[0] === 'ConditionalCheckFailed') return { status: 'counter' };
      if (name === 'TransactionCanceledException' && !codes.some((code) => code === 'TransactionConflict' || code === 'ThrottlingError')) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(500, 10 * 2 ** attempt)));
    }
  }
  throw new Error(`A counter stayed contended after ${COUNTER_ATTEMPTS} attempts.`);
}

const BATCH_GET_MAX = 100;

/** BatchGetItem of any number of keys: ≤ 100 per call, calls in parallel, unprocessed keys retried with backoff. */
export async function batchGet(keyList: { pk: string; sk: string }[], projection?: string, consistent = false): Promise<Item[]> {
  const calls: Promise<Item[]>[] = [];
  for (let i = 0; i < keyList.length; i += BATCH_GET_MAX) {
    calls.push(batchGetOnce(keyList.slice(i, i + BATCH_GET_MAX), projection, consistent));
  }
  return (await Promise.all(calls)).flat();
}

async function batchGetOnce(keyList: { pk: string; sk: string }[], projection: string | undefined, consistent: boolean): Promise<Item[]> {
  const items: Item[] = [];
  let pending: { pk: string; sk: string }[] = keyList;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === 6) throw new Error('BatchGetItem left keys unprocessed after 6 attempts');
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    const res: BatchGetCommandOutput = await db().send(
      new BatchGetCommand({
        RequestItems: {
          [tableName()]: { Keys: pending, ...(projection ? { ProjectionExpression: projection } : {}), ...(consistent ? { ConsistentRead: true } : {}) },
        },
      }),
    );
    items.push(...(res.Responses?.[tableName()] ?? []));
    pending = (res.UnprocessedKeys?.[tableName()]?.Keys as { pk: string; sk: string }[] | undefined) ?? [];
  }
  return items;
}

/** Every page of a Query (bounded lists only: an account's keys, one key's days). */
export async function queryAll(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await db().send(new QueryCommand({ TableName: tableName(), ...input, ExclusiveStartKey: start }));
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items;
}

