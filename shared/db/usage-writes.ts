/**
 * The chunk writer: one TransactWriteItems holds a chunk's guards together with the aggregate ADDs they cause, so
 * either all of it counts or none of it does. Ingestion guards each event with its exactly-once item (a conditional
 * Put); a provider sync (shared/connections/) guards each imported cell with its snapshot item. The actions come
 * from small builders, one per item family (events, key × day × model, export rows, key totals, account day/month,
 * spend by model, spend by key, plan counters), composed by each producer.
 */
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { hourCostName, rollingNames, staleHourNames, staleRollingNames } from '#shared/db/rolling.ts';
import { pastMonthsOf, type Aggregate, type Aggregates, type KeyDayModel, type KeyUpdate, type NamedAggregate, type Sums } from '#shared/usage/aggregates.ts';
import type { Tier } from '#shared/usage/tiers.ts';
import { MONEY_CEILING_MICROS } from '#shared/usage/money.ts';

export interface Chunk extends Aggregates {
  events: PricedEvent[];
}

export interface PricedEvent {
  index: number;
  requestId: string;
  keyHash: string;
  keyHint?: string;
  provider: string;
  model: string;
  inputTokens: number;
  cachedInputTokens: number;
  /** Parts of inputTokens written to the cache (5 minutes, 1 hour): priced, not summed into the aggregates. */
  cacheWriteInputTokens: number;
  cacheWrite1hInputTokens: number;
  outputTokens: number;
  /** The tier it ran in (`standard` unless the event says otherwise). */
  tier?: Tier;
  /** Web searches and fetches of the call (priced per 1,000 from the table). */
  webSearchRequests?: number;
  webFetchRequests?: number;
  costMicros: number;
  /**
   * false: not priced exactly without costUsd, counted in `unpricedRequests`: an unknown model (tracked at cost 0), or
   * a tier (or web searches) the price has no figure for (tracked at the standard price).
   */
  priced: boolean;
  /** The event carried `costUsd` (an account's own price never overrides it). */
  costGiven?: true;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
  /** The event's UTC day. */
  date: string;
  /** The application's customer (past the plan's monthly limit: `(other customers)`) and feature of the call. */
  customerId?: string;
  feature?: string;
}

type Action = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

import { LINE_PREFIX } from '#shared/usage/aggregates.ts';

/** Exactly-once items outlive the oldest timestamp ingestion accepts (35 days). */
export const EVENT_TTL_SECONDS = 36 * 24 * 60 * 60;

export interface ChunkWrite extends WriteClock {
  accountId: string;
  chunk: Chunk;
  /** Start of the plan period the chunk's requests count against. */
  periodStart: string;
  /** The plan's limits: checked atomically by the same transaction that adds to the counters. */
  limits: { trackedRequests: number; keys: number };
}

/** What the transaction's cancellation tells: events already counted, keys someone else created, or a retryable clash. */
export type ChunkOutcome =
  | { status: 'written' }
  | { status: 'conditions'; duplicateRequestIds: string[]; existingKeys: string[]; changedCells: string[] }
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

/** True when every sum is 0 (a rolling counter is written only for a period with something in it). */
const isZero = (sums: Sums): boolean => SUM_FIELDS.every((f) => sums[f] === 0n);

/**
 * What a cancelled action's failed condition means: an event counted before, a key someone else created, a plan
 * limit, the money ceiling, or (for a sync) a snapshot cell another sync changed first.
 */
export type Meaning =
  | { requestId: string }
  | { newKey: string }
  | { limit: 'requests' | 'keys' }
  | { ceiling: 'key' | 'month' }
  | { cell: string }
  | null;

/** The actions of one item family, each with its meaning (same index). Builders below return one; writers concatenate them. */
export interface Built {
  actions: Action[];
  meaning: Meaning[];
}

const built = (): Built => ({ actions: [], meaning: [] });

/** Concatenates the families, in order, into one transaction's actions. */
export function compose(...families: Built[]): Built {
  return { actions: families.flatMap((f) => f.actions), meaning: families.flatMap((f) => f.meaning) };
}

/** `:max` of a ceiling condition: the aggregate may hold at most this before the ADD (never negative: the fit ensured it). */
const roomBefore = (adding: bigint): bigint => MONEY_CEILING_MICROS - adding;

/** Family: each ingested event's exactly-once item (a conditional Put: an event counted before cancels the chunk). */
export function eventItems(accountId: string, events: readonly PricedEvent[], now: Date): Built {
  const TableName = tableName();
  const at = now.toISOString();
  const expiresAt = Math.floor(now.getTime() / 1000) + EVENT_TTL_SECONDS;
  const out = built();
  for (const e of events) {
    out.actions.push({
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
    out.meaning.push({ requestId: e.requestId });
  }
  return out;
}

/**
 * Family: the export rows. A key × day × model item carries gsi1 attributes that list the account's rows of a range
 * in one Query, days ascending (GET /spend/export): its `SET` clause and values.
 */
export function exportRowAttributes(accountId: string, kdm: KeyDayModel): { set: string; values: Record<string, string> } {
  const row = keys.spendRowIndex(accountId, kdm.date, kdm.keyHash, kdm.provider, kdm.model, kdm.correctionOf);
  return { set: 'gsi1pk = :gsi1pk, gsi1sk = :gsi1sk', values: { ':gsi1pk': row.gsi1pk, ':gsi1sk': row.gsi1sk } };
}

/** Family: key × day × model (GET /keys/:hash breakdown; the export rows ride on the same items). */
export function keyDayModelItems(accountId: string, kdms: Iterable<KeyDayModel>): Built {
  const TableName = tableName();
  const out = built();
  for (const kdm of kdms) {
    const add = addSums(kdm.sums);
    const row = exportRowAttributes(accountId, kdm);
    // A row of units (a connection's images, storage, …) also carries its unit and quantity; a correction the day it corrects.
    const units = kdm.unit !== undefined;
    const correction = kdm.correctionOf !== undefined;
    // The price lines' quantities: one counter per line (`ln:<line>[/<tier>]`, shared/pricing/lines.ts).
    const lines = [...(kdm.lines ?? [])].filter(([, q]) => q !== 0n);
    const lineAdd = lines.map((_, i) => `, #ln${i} :ln${i}`).join('');
    out.actions.push({
      Update: {
        TableName,
        Key: keys.keyDayModel(accountId, kdm.keyHash, kdm.date, kdm.provider, kdm.model, kdm.correctionOf),
        UpdateExpression: `SET #date = :date, provider = :provider, model = :model, keyHash = :keyHash, ${row.set}${units ? ', #unit = :unit' : ''}${correction ? ', correction = :correction, correctionOf = :correctionOf' : ''} ADD ${add.expr}${units ? ', quantity :quantity' : ''}${lineAdd}`,
        ExpressionAttributeNames: { '#date': 'date', ...(units ? { '#unit': 'unit' } : {}), ...Object.fromEntries(lines.map(([id], i) => [`#ln${i}`, `${LINE_PREFIX}${id}`])) },
        ExpressionAttributeValues: {
          ...Object.fromEntries(lines.map(([, q], i) => [`:ln${i}`, q])),
          ':date': kdm.date,
          ':provider': kdm.provider,
          ':model': kdm.model,
          ':keyHash': kdm.keyHash,
          ...row.values,
          ...add.values,
          ...(units ? { ':unit': kdm.unit, ':quantity': kdm.quantity ?? 0n } : {}),
          ...(correction ? { ':correction': true, ':correctionOf': kdm.correctionOf } : {}),
        },
      },
    });
    out.meaning.push(null);
  }
  return out;
}

/** The clock of a write: the instant, today's UTC date and month (which rolling counters are current). */
export interface WriteClock {
  now: Date;
  today: string;
  month: string;
}

/**
 * Family: the key items: totals, the rolling day/month counters (named after their period: shared/db/rolling.ts),
 * first and last seen (the write's time, or `KeyUpdate.lastSeenAt`). A new key is created by exactly one writer (a condition decides between racing writers); a
 * known key's total (which bounds its days and months) stays at or below the money ceiling. `KeyUpdate.attributes`
 * (a connection's key: source, name, project, ...) are SET as given.
 */
export function keyTotalItems(accountId: string, updates: Iterable<KeyUpdate>, clock: WriteClock): Built {
  const TableName = tableName();
  const at = clock.now.toISOString();
  const rolling = rollingNames(clock.today, clock.month);
  const stale = [...staleRollingNames(clock.today, clock.month), ...staleHourNames(clock.now)];
  const out = built();
  for (const key of updates) {
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
      key.lastSeenAt === undefined ? 'lastSeenAt = :now' : 'lastSeenAt = :seen',
    ];
    if (key.lastSeenAt !== undefined) values[':seen'] = key.lastSeenAt;
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
    Object.entries(key.attributes ?? {}).forEach(([name, value], i) => {
      names[`#a${i}`] = name;
      values[`:a${i}`] = value;
      sets.push(`#a${i} = :a${i}`);
    });
    const adds = ['totalCostMicros :cost', 'totalRequests :requests', 'unpricedRequests :unpriced'];
    const rollingAdds: [string, bigint][] = [];
    if (!isZero(key.today)) rollingAdds.push([rolling.dayCost, key.today.costMicros], [rolling.dayRequests, key.today.requests]);
    if (!isZero(key.month)) rollingAdds.push([rolling.monthCost, key.month.costMicros], [rolling.monthRequests, key.month.requests]);
    for (const [date, sums] of key.recent) rollingAdds.push([rollingNames(date, clock.month).dayCost, sums.costMicros]);
    for (const [hour, micros] of key.hours ?? []) if (micros > 0n) rollingAdds.push([hourCostName(hour), micros]);
    if (key.rateAt !== undefined) {
      sets.push('rateAt = :rateAt');
      values[':rateAt'] = key.rateAt;
    }
    rollingAdds.forEach(([name, value], i) => {
      names[`#r${i}`] = name;
      values[`:r${i}`] = value;
      adds.push(`#r${i} :r${i}`);
    });
    stale.forEach((name, i) => (names[`#s${i}`] = name));
    if (!key.isNew) values[':maxTotal'] = roomBefore(key.total.costMicros);
    out.actions.push({
      Update: {
        TableName,
        Key: keys.providerKey(accountId, key.keyHash),
        UpdateExpression: `SET ${sets.join(', ')} ADD ${adds.join(', ')} REMOVE ${stale.map((_, i) => `#s${i}`).join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ConditionExpression: key.isNew ? 'attribute_not_exists(pk)' : 'attribute_not_exists(totalCostMicros) OR totalCostMicros <= :maxTotal',
      },
    });
    out.meaning.push(key.isNew ? { newKey: key.keyHash } : { ceiling: 'key' });
  }
  return out;
}

/** Family: the account's spend per UTC day and per calendar month; the month (which bounds its days) under the money ceiling. */
export function accountUsageItems(accountId: string, days: Map<string, Sums>, months: Map<string, Sums>): Built {
  const TableName = tableName();
  const usage = (Key: { pk: string; sk: string }, label: string, value: string, sums: Sums, ceiling = false): Action => {
    const add = addSums(sums);
    return {
      Update: {
        TableName,
        Key,
        UpdateExpression: `SET #label = :label ADD ${add.expr}`,
        ExpressionAttributeNames: { '#label': label },
        ExpressionAttributeValues: { ':label': value, ...add.values, ...(ceiling ? { ':maxCost': roomBefore(sums.costMicros) } : {}) },
        ...(ceiling ? { ConditionExpression: 'attribute_not_exists(costMicros) OR costMicros <= :maxCost' } : {}),
      },
    };
  };
  const out = built();
  for (const [date, sums] of days) {
    out.actions.push(usage(keys.usageDay(accountId, date), 'date', date, sums));
    out.meaning.push(null);
  }
  for (const [month, sums] of months) {
    out.actions.push(usage(keys.usageMonth(accountId, month), 'month', month, sums, true));
    out.meaning.push({ ceiling: 'month' });
  }
  return out;
}

/** One of GET /spend's aggregates: SET its identifying fields, ADD the sums (no ceiling: the key totals and months bound them). */
function aggregateItem(Key: { pk: string; sk: string }, fields: Record<string, string>, sums: Sums): Action {
  const add = addSums(sums);
  const names = Object.keys(fields);
  return {
    Update: {
      TableName: tableName(),
      Key,
      UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :f${i}`).join(', ')} ADD ${add.expr}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#f${i}`, n])),
      ExpressionAttributeValues: { ...Object.fromEntries(names.map((n, i) => [`:f${i}`, fields[n]])), ...add.values },
    },
  };
}

/** Family: the account's spend per day × model (GET /spend groupBy=model). */
export function spendByModelItems(accountId: string, dayModels: Iterable<Aggregate>): Built {
  const out = built();
  for (const a of dayModels) {
    out.actions.push(aggregateItem(keys.spendDayModel(accountId, a.date, a.provider!, a.model!), { date: a.date, provider: a.provider!, model: a.model! }, a.sums));
    out.meaning.push(null);
  }
  return out;
}

/** Family: the account's spend per month × key and day × key (GET /spend groupBy=key: months whole, edges by day). */
export function spendByKeyItems(accountId: string, monthKeys: Iterable<Aggregate>, dayKeys: Iterable<Aggregate>): Built {
  const out = built();
  for (const a of monthKeys) {
    out.actions.push(aggregateItem(keys.spendMonthKey(accountId, a.date, a.keyHash!), { month: a.date, keyHash: a.keyHash! }, a.sums));
    out.meaning.push(null);
  }
  for (const a of dayKeys) {
    out.actions.push(aggregateItem(keys.spendDayKey(accountId, a.date, a.keyHash!), { date: a.date, keyHash: a.keyHash! }, a.sums));
    out.meaning.push(null);
  }
  return out;
}

/**
 * Family: the plan's counters, checked atomically by the same transaction that adds to the aggregates — the
 * period's tracked requests (`trackedRequests` more), and the account's key count when `newKeys` are created.
 */
export function planCounterItems(accountId: string, periodStart: string, trackedRequests: number, newKeys: number, limits: ChunkWrite['limits']): Built {
  const TableName = tableName();
  const out = built();
  out.actions.push({
    Update: {
      TableName,
      Key: keys.usagePeriod(accountId, periodStart),
      UpdateExpression: 'SET periodStart = :start ADD trackedRequests :n',
      ConditionExpression: 'attribute_not_exists(trackedRequests) OR trackedRequests <= :max',
      ExpressionAttributeValues: { ':start': periodStart, ':n': trackedRequests, ':max': limits.trackedRequests - trackedRequests },
    },
  });
  out.meaning.push({ limit: 'requests' });
  if (newKeys > 0) {
    out.actions.push({
      Update: {
        TableName,
        Key: keys.account(accountId),
        UpdateExpression: 'ADD keyCount :n',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(keyCount) OR keyCount <= :max)',
        ExpressionAttributeValues: { ':n': newKeys, ':max': limits.keys - newKeys },
      },
    });
    out.meaning.push({ limit: 'keys' });
  }
  return out;
}

/**
 * Family: the freeze of closed months. A write that touches a day of a past month still open is conditioned on that
 * month not being closed (its `MONTH#` item not existing): a month closed meanwhile cancels the write, and the
 * producer books the change as a correction instead (shared/months/).
 */
export function openMonthGuards(accountId: string, months: Iterable<string>): Built {
  const out = built();
  for (const month of months) {
    out.actions.push({ ConditionCheck: { TableName: tableName(), Key: keys.closedMonth(accountId, month), ConditionExpression: 'attribute_not_exists(pk)' } });
    out.meaning.push({ cell: `month:${month}` });
  }
  return out;
}

/** Every aggregate family of a planned set of changes, in the order a transaction holds them (after its guards). */
export function aggregateItems(accountId: string, a: Aggregates, clock: WriteClock): Built {
  return compose(
    keyDayModelItems(accountId, a.keyDayModels.values()),
    keyTotalItems(accountId, a.keys.values(), clock),
    accountUsageItems(accountId, a.days, a.months),
    spendByModelItems(accountId, a.dayModels.values()),
    spendByKeyItems(accountId, a.monthKeys.values(), a.dayKeys.values()),
    spendByNameItems(accountId, a.monthCustomers.values(), a.monthFeatures.values(), a.customerMonths, a.featureMonths),
  );
}

/**
 * Family: the account's spend per month × customer and month × feature (GET /spend groupBy=customer|feature,
 * GET /customers), with the first and last time each was seen.
 */
export function spendByNameItems(
  accountId: string,
  customers: Iterable<NamedAggregate>,
  features: Iterable<NamedAggregate>,
  customerMonths: Map<string, Sums> = new Map(),
  featureMonths: Map<string, Sums> = new Map(),
): Built {
  const out = built();
  const item = (Key: { pk: string; sk: string }, field: string, a: NamedAggregate): Action => {
    const add = addSums(a.sums);
    // gsi3: the partition sorted by the month's cost, moved by the same ADD as the sums (`:gcost` = this write's cost).
    return {
      Update: {
        TableName: tableName(),
        Key,
        UpdateExpression: `SET #month = :month, #name = :name, firstSeenAt = if_not_exists(firstSeenAt, :first), lastSeenAt = :last, gsi3pk = :gpk ADD ${add.expr}, gsi3sk :gcost`,
        ExpressionAttributeNames: { '#month': 'month', '#name': field },
        ExpressionAttributeValues: { ':month': a.month, ':name': a.name, ':first': a.firstAt, ':last': a.lastAt, ':gpk': keys.nameCostIndex(Key.pk).gsi3pk, ':gcost': a.sums.costMicros, ...add.values },
      },
    };
  };
  const total = (Key: { pk: string; sk: string }, month: string, sums: Sums): Action => {
    const add = addSums(sums);
    return { Update: { TableName: tableName(), Key, UpdateExpression: `SET #month = :month ADD ${add.expr}`, ExpressionAttributeNames: { '#month': 'month' }, ExpressionAttributeValues: { ':month': month, ...add.values } } };
  };
  for (const [month, sums] of customerMonths) {
    out.actions.push(total(keys.customerTotal(accountId, month), month, sums));
    out.meaning.push(null);
  }
  for (const [month, sums] of featureMonths) {
    out.actions.push(total(keys.featureTotal(accountId, month), month, sums));
    out.meaning.push(null);
  }
  for (const a of customers) {
    out.actions.push(item(keys.spendMonthCustomer(accountId, a.month, a.name), 'customerId', a));
    out.meaning.push(null);
  }
  for (const a of features) {
    out.actions.push(item(keys.spendMonthFeature(accountId, a.month, a.name), 'feature', a));
    out.meaning.push(null);
  }
  return out;
}

/** Ingestion's chunk: the events' exactly-once items, the aggregates, the plan's counters. */
export function buildChunkActions(w: ChunkWrite): Built {
  const { accountId, chunk } = w;
  return compose(
    eventItems(accountId, chunk.events, w.now),
    aggregateItems(accountId, chunk, w),
    planCounterItems(accountId, w.periodStart, chunk.events.length, chunk.newKeys, w.limits),
    openMonthGuards(accountId, pastMonthsOf(chunk, w)),
  );
}

const RETRYABLE = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/** Ingestion's chunk, written in one transaction. */
export function writeChunk(w: ChunkWrite): Promise<ChunkOutcome> {
  return writeActions(buildChunkActions(w));
}

/**
 * Writes composed families in ONE TransactWriteItems and reads a cancellation by the meaning of each failed
 * condition (ingestion's chunks and a sync's snapshot changes alike).
 */
export async function writeActions({ actions, meaning }: Built): Promise<ChunkOutcome> {
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
    const changedCells: string[] = [];
    let retry = false;
    let limit = false;
    let ceiling = false;
    reasons.forEach((reason, i) => {
      const m = meaning[i];
      if (reason.Code === 'ConditionalCheckFailed' && m && 'requestId' in m) duplicateRequestIds.push(m.requestId);
      else if (reason.Code === 'ConditionalCheckFailed' && m && 'newKey' in m) existingKeys.push(m.newKey);
      else if (reason.Code === 'ConditionalCheckFailed' && m && 'cell' in m) changedCells.push(m.cell);
      else if (reason.Code === 'ConditionalCheckFailed' && m && 'limit' in m) limit = true;
      else if (reason.Code === 'ConditionalCheckFailed' && m && 'ceiling' in m) ceiling = true;
      else if (reason.Code && RETRYABLE.has(reason.Code)) retry = true;
      else if (reason.Code && reason.Code !== 'None') throw error; // an unexpected failure: let it surface as a 500
    });
    // Duplicates and raced keys first: without them the chunk may well fit the limit.
    if (duplicateRequestIds.length > 0 || existingKeys.length > 0 || changedCells.length > 0) {
      return { status: 'conditions', duplicateRequestIds, existingKeys, changedCells };
    }
    if (limit) return { status: 'limit' };
    if (ceiling) return { status: 'ceiling' };
    if (retry) return { status: 'retry' };
    throw error;
  }
}
