/**
 * Writes one planned chunk of ingested events in ONE TransactWriteItems: every event's exactly-once item
 * (conditional Put) together with the aggregate ADDs it causes. Either all of it counts or none of it does.
 */
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { rollingNames, staleRollingNames } from '#shared/db/rolling.ts';
import type { Chunk, Sums } from '#shared/ingest/chunks.ts';
import { MONEY_CEILING_MICROS } from '#shared/ingest/ceiling.ts';

type Action = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Exactly-once items outlive the oldest timestamp ingestion accepts (35 days). */
export const EVENT_TTL_SECONDS = 36 * 24 * 60 * 60;

export interface ChunkWrite {
  accountId: string;
  chunk: Chunk;
  now: Date;
  today: string;
  month: string;
  /** Start of the plan period the chunk's requests count against. */
  periodStart: string;
  /** The plan's limits: checked atomically by the same transaction that adds to the counters. */
  limits: { trackedRequests: number; keys: number };
}

/** What the transaction's cancellation tells: events already counted, keys someone else created, or a retryable clash. */
export type ChunkOutcome =
  | { status: 'written' }
  | { status: 'conditions'; duplicateRequestIds: string[]; existingKeys: string[] }
  /** The period's tracked requests or the key count would pass the plan's limit: nothing was written. */
  | { status: 'limit' }
  /** A key's total or the account's month would pass MONEY_CEILING_MICROS (a racing batch took the room): nothing was written. */
  | { status: 'ceiling' }
  | { status: 'retry' };

const SUM_FIELDS = ['costMicros', 'requests', 'inputTokens', 'cachedInputTokens', 'outputTokens', 'unpricedRequests'] as const;

/** `ADD costMicros :costMicros, requests :requests, ...` */
function addSums(sums: Sums): { expr: string; values: Record<string, bigint> } {
  return {
    expr: SUM_FIELDS.map((f) => `${f} :${f}`).join(', '),
    values: Object.fromEntries(SUM_FIELDS.map((f) => [`:${f}`, sums[f]])),
  };
}

type Meaning = { requestId: string } | { newKey: string } | { limit: 'requests' | 'keys' } | { ceiling: 'key' | 'month' } | null;

/** `:max` of a ceiling condition: the aggregate may hold at most this before the ADD (never negative: the fit ensured it). */
const roomBefore = (adding: bigint): bigint => MONEY_CEILING_MICROS - adding;

export function buildChunkActions(w: ChunkWrite): { actions: Action[]; meaning: Meaning[] } {
  const TableName = tableName();
  const { accountId, chunk, now } = w;
  const at = now.toISOString();
  const expiresAt = Math.floor(now.getTime() / 1000) + EVENT_TTL_SECONDS;
  const actions: Action[] = [];
  const meaning: Meaning[] = [];

  for (const e of chunk.events) {
    actions.push({
      Put: {
        TableName,
        Item: {
          ...keys.event(accountId, e.requestId),
          type: 'Event',
          keyHash: e.keyHash,
          provider: e.provider,
          model: e.model,
          costMicros: e.costMicros,
          timestamp: e.timestamp,
          receivedAt: at,
          expiresAt,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
    meaning.push({ requestId: e.requestId });
  }

  for (const kdm of chunk.keyDayModels.values()) {
    const add = addSums(kdm.sums);
    const row = keys.spendRowIndex(accountId, kdm.date, kdm.keyHash, kdm.provider, kdm.model);
    actions.push({
      Update: {
        TableName,
        Key: keys.keyDayModel(accountId, kdm.keyHash, kdm.date, kdm.provider, kdm.model),
        // gsi1: the account's export rows (GET /spend/export), days ascending, in one Query.
        UpdateExpression: `SET #date = :date, provider = :provider, model = :model, keyHash = :keyHash, gsi1pk = :gsi1pk, gsi1sk = :gsi1sk ADD ${add.expr}`,
        ExpressionAttributeNames: { '#date': 'date' },
        ExpressionAttributeValues: {
          ':date': kdm.date,
          ':provider': kdm.provider,
          ':model': kdm.model,
          ':keyHash': kdm.keyHash,
          ':gsi1pk': row.gsi1pk,
          ':gsi1sk': row.gsi1sk,
          ...add.values,
        },
      },
    });
    meaning.push(null);
  }

  const rolling = rollingNames(w.today, w.month);
  const stale = staleRollingNames(w.today, w.month);
  for (const key of chunk.keys.values()) {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {
      ':now': at,
      ':provider': key.provider,
      ':accountId': accountId,
      ':keyHash': key.keyHash,
      ':cost': key.total.costMicros,
      ':requests': key.total.requests,
      ':unpriced': key.total.unpricedRequests,
    };
    const sets = [
      'accountId = :accountId',
      'keyHash = :keyHash',
      'provider = if_not_exists(provider, :provider)',
      'firstSeenAt = if_not_exists(firstSeenAt, :now)',
      'lastSeenAt = :now',
    ];
    if (key.hint !== undefined) {
      sets.push('hint = if_not_exists(hint, :hint)');
      values[':hint'] = key.hint;
    }
    if (key.isNew) {
      const index = keys.providerKeyIndex(accountId, key.keyHash);
      sets.push('gsi1pk = :gsi1pk, gsi1sk = :gsi1sk');
      values[':gsi1pk'] = index.gsi1pk;
      values[':gsi1sk'] = index.gsi1sk;
    }
    const adds = ['totalCostMicros :cost', 'totalRequests :requests', 'unpricedRequests :unpriced'];
    const rollingAdds: [string, bigint][] = [];
    if (key.today.requests > 0n) rollingAdds.push([rolling.dayCost, key.today.costMicros], [rolling.dayRequests, key.today.requests]);
    if (key.month.requests > 0n) rollingAdds.push([rolling.monthCost, key.month.costMicros], [rolling.monthRequests, key.month.requests]);
    for (const [date, sums] of key.recent) rollingAdds.push([rollingNames(date, w.month).dayCost, sums.costMicros]);
    rollingAdds.forEach(([name, value], i) => {
      names[`#r${i}`] = name;
      values[`:r${i}`] = value;
      adds.push(`#r${i} :r${i}`);
    });
    stale.forEach((name, i) => (names[`#s${i}`] = name));
    if (!key.isNew) values[':maxTotal'] = roomBefore(key.total.costMicros);
    actions.push({
      Update: {
        TableName,
        Key: keys.providerKey(accountId, key.keyHash),
        UpdateExpression: `SET ${sets.join(', ')} ADD ${adds.join(', ')} REMOVE ${stale.map((_, i) => `#s${i}`).join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        // A new key is created by exactly one writer; a racing batch learns it exists and retries as "known".
        // A known key's total (which bounds its days and months) stays at or below the money ceiling.
        ConditionExpression: key.isNew ? 'attribute_not_exists(pk)' : 'attribute_not_exists(totalCostMicros) OR totalCostMicros <= :maxTotal',
      },
    });
    meaning.push(key.isNew ? { newKey: key.keyHash } : { ceiling: 'key' });
  }

  const usage = (Key: { pk: string; sk: string }, label: string, value: string, sums: Sums, ceiling = false): Action => {
    const add = addSums(sums);
    return {
      Update: {
        TableName,
        Key,
        UpdateExpression: `SET #label = :label ADD ${add.expr}`,
        ExpressionAttributeNames: { '#label': label },
        ExpressionAttributeValues: { ':label': value, ...add.values, ...(ceiling ? { ':maxCost': roomBefore(sums.costMicros) } : {}) },
        // The account's month (which bounds its days) stays at or below the money ceiling.
        ...(ceiling ? { ConditionExpression: 'attribute_not_exists(costMicros) OR costMicros <= :maxCost' } : {}),
      },
    };
  };
  for (const [date, sums] of chunk.days) {
    actions.push(usage(keys.usageDay(accountId, date), 'date', date, sums));
    meaning.push(null);
  }
  for (const [month, sums] of chunk.months) {
    actions.push(usage(keys.usageMonth(accountId, month), 'month', month, sums, true));
    meaning.push({ ceiling: 'month' });
  }
  // GET /spend's aggregates (bounded by the key totals and account months above, so no ceiling condition here).
  const aggregate = (Key: { pk: string; sk: string }, fields: Record<string, string>, sums: Sums): Action => {
    const add = addSums(sums);
    const names = Object.keys(fields);
    return {
      Update: {
        TableName,
        Key,
        UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :f${i}`).join(', ')} ADD ${add.expr}`,
        ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#f${i}`, n])),
        ExpressionAttributeValues: { ...Object.fromEntries(names.map((n, i) => [`:f${i}`, fields[n]])), ...add.values },
      },
    };
  };
  for (const a of chunk.dayModels.values()) {
    actions.push(aggregate(keys.spendDayModel(accountId, a.date, a.provider!, a.model!), { date: a.date, provider: a.provider!, model: a.model! }, a.sums));
    meaning.push(null);
  }
  for (const a of chunk.monthKeys.values()) {
    actions.push(aggregate(keys.spendMonthKey(accountId, a.date, a.keyHash!), { month: a.date, keyHash: a.keyHash! }, a.sums));
    meaning.push(null);
  }
  for (const a of chunk.dayKeys.values()) {
    actions.push(aggregate(keys.spendDayKey(accountId, a.date, a.keyHash!), { date: a.date, keyHash: a.keyHash! }, a.sums));
    meaning.push(null);
  }

  actions.push({
    Update: {
      TableName,
      Key: keys.usagePeriod(accountId, w.periodStart),
      UpdateExpression: 'SET periodStart = :start ADD trackedRequests :n',
      ConditionExpression: 'attribute_not_exists(trackedRequests) OR trackedRequests <= :max',
      ExpressionAttributeValues: { ':start': w.periodStart, ':n': chunk.events.length, ':max': w.limits.trackedRequests - chunk.events.length },
    },
  });
  meaning.push({ limit: 'requests' });

  if (chunk.newKeys > 0) {
    actions.push({
      Update: {
        TableName,
        Key: keys.account(accountId),
        UpdateExpression: 'ADD keyCount :n',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(keyCount) OR keyCount <= :max)',
        ExpressionAttributeValues: { ':n': chunk.newKeys, ':max': w.limits.keys - chunk.newKeys },
      },
    });
    meaning.push({ limit: 'keys' });
  }
  return { actions, meaning };
}

const RETRYABLE = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

export async function writeChunk(w: ChunkWrite): Promise<ChunkOutcome> {
  const { actions, meaning } = buildChunkActions(w);
  try {
    await db().send(new TransactWriteCommand({ TransactItems: actions }));
    return { status: 'written' };
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (name === 'TransactionConflictException' || name === 'ThrottlingException' || name === 'ProvisionedThroughputExceededException') {
      return { status: 'retry' };
    }
    if (name !== 'TransactionCanceledException') throw error;
    const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    const duplicateRequestIds: string[] = [];
    const existingKeys: string[] = [];
    let retry = false;
    let limit = false;
    let ceiling = false;
    reasons.forEach((reason, i) => {
      const m = meaning[i];
      if (reason.Code === 'ConditionalCheckFailed' && m && 'requestId' in m) duplicateRequestIds.push(m.requestId);
      else if (reason.Code === 'ConditionalCheckFailed' && m && 'newKey' in m) existingKeys.push(m.newKey);
      else if (reason.Code === 'ConditionalCheckFailed' && m && 'limit' in m) limit = true;
      else if (reason.Code === 'ConditionalCheckFailed' && m && 'ceiling' in m) ceiling = true;
      else if (reason.Code && RETRYABLE.has(reason.Code)) retry = true;
      else if (reason.Code && reason.Code !== 'None') throw error; // an unexpected failure: let it surface as a 500
    });
    // Duplicates and raced keys first: without them the chunk may well fit the limit.
    if (duplicateRequestIds.length > 0 || existingKeys.length > 0) return { status: 'conditions', duplicateRequestIds, existingKeys };
    if (limit) return { status: 'limit' };
    if (ceiling) return { status: 'ceiling' };
    if (retry) return { status: 'retry' };
    throw error;
  }
}
