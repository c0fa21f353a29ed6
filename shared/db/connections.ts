/**
 * Repository of provider connections (`ACCOUNT#<a>` / `CONNECTION#<id>`), their sync lease, and the import snapshot
 * (`IMPORT#<a>#<provider>`: cells and reconciliation days). The account item carries `connected:<provider>` = the
 * connection's id while one exists: set in the transaction that creates it, so there is one per provider and account
 * under races too, and read by ingestion with the account (one source per provider).
 */
import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, failedConditions, queryAll, tableName, transactWrite, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { readInt, readNumber } from '#shared/db/numbers.ts';
import type { StoredCell } from '#shared/db/import-snapshot.ts';
import { UNATTRIBUTED } from '#shared/usage/names.ts';

/** What the connection item stores (base64 fields). */
export interface SealedSecret {
  /** `kms` or `local`: who wrapped the data key. */
  wrap: 'kms' | 'local';
  wrappedKey: string;
  iv: string;
  tag: string;
  ciphertext: string;
}

/** The providers a connection may be of (shared/connections/model.ts lists them: `PROVIDERS`). */
export type Provider = 'openai' | 'anthropic' | 'openrouter';

export type ConnectionStatus = 'active' | 'paused' | 'error';

export interface Connection {
  id: string;
  accountId: string;
  provider: Provider;
  name: string;
  keyHint: string;
  status: ConnectionStatus;
  statusDetail: string | null;
  lastSyncAt: string | null;
  lastSuccessAt: string | null;
  importedFrom: string;
  createdAt: string;
  updatedAt: string;
  secret: SealedSecret;
  /** The first day a sync still has to import (a backfill in progress), or null: read the recent days only. */
  cursor: string | null;
  nextSyncAt: string | null;
  /** The last `POST …/sync` accepted (at most one a minute). */
  manualSyncAt: string | null;
  /** The UTC day of the last `connection_error` alert (once per connection and day). */
  errorAlertDay: string | null;
  /**
   * A backfill runs newest first: the days `cursor`…`backfillTo` are still to import (null: up to today, or no
   * backfill when `cursor` is null too).
   */
  backfillTo?: string | null;
  /** After the last sync: keys listed untracked past the key limit, and the first day the period's requests held back. */
  untrackedKeys?: number;
  requestsHeldFrom?: string | null;
  requestsHeldTo?: string | null;
  /** Days from `importedFrom` on that the provider has not billed yet (today aside): their spend is an estimate. */
  unsettledDays?: string[];
  /** Whether stop budgets may act on this organization through the admin key (`off` unless an admin turns it on). */
  enforcement?: 'on' | 'off';
  /** What the provider says the admin key's organization is (shared/connections/organization.ts); absent: not read. */
  organization?: string[] | null;
}

export const SHARDS = 16;

/** The due index's shard of a connection: spread over 16 partitions by its id. */
export const shardOf = (connectionId: string) => createHash('sha256').update(connectionId).digest()[0]! % SHARDS;

/** The account item's attribute that names its connection of `provider`. */
export const connectedAttribute = (provider: string) => `connected:${provider}`;

export function toConnection(item: Item): Connection {
  const opt = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    id: item.id as string,
    accountId: item.accountId as string,
    provider: item.provider as Provider,
    name: item.name as string,
    keyHint: item.keyHint as string,
    status: item.status as ConnectionStatus,
    statusDetail: opt(item.statusDetail),
    lastSyncAt: opt(item.lastSyncAt),
    lastSuccessAt: opt(item.lastSuccessAt),
    importedFrom: item.importedFrom as string,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
    secret: item.secret as SealedSecret,
    cursor: opt(item.cursor),
    nextSyncAt: opt(item.nextSyncAt),
    manualSyncAt: opt(item.manualSyncAt),
    errorAlertDay: opt(item.errorAlertDay),
    backfillTo: opt(item.backfillTo),
    untrackedKeys: typeof item.untrackedKeys === 'number' ? item.untrackedKeys : 0,
    requestsHeldFrom: opt(item.requestsHeldFrom),
    requestsHeldTo: opt(item.requestsHeldTo),
    unsettledDays: Array.isArray(item.unsettledDays) ? (item.unsettledDays as string[]) : [],
    enforcement: item.enforcement === 'on' ? 'on' : 'off',
    organization: Array.isArray(item.organization) ? (item.organization as string[]) : null,
  };
}

function toItem(c: Connection): Item {
  return {
    ...keys.connection(c.accountId, c.id),
    type: 'Connection',
    ...c,
    ...(c.status !== 'paused' && c.nextSyncAt ? keys.connectionDueIndex(shardOf(c.id), c.nextSyncAt, c.accountId, c.id) : {}),
  };
}

/** Stores a new connection; false when the account has one of this provider already (or does not exist). */
export async function putNewConnection(c: Connection): Promise<boolean> {
  try {
    await transactWrite([
      { Put: { TableName: tableName(), Item: toItem(c), ConditionExpression: 'attribute_not_exists(pk)' } },
      {
        Update: {
          TableName: tableName(),
          Key: keys.account(c.accountId),
          UpdateExpression: 'SET #c = :id',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#c)',
          ExpressionAttributeNames: { '#c': connectedAttribute(c.provider) },
          ExpressionAttributeValues: { ':id': c.id },
        },
      },
    ]);
    return true;
  } catch (error) {
    if (failedConditions(error).length > 0) return false;
    throw error;
  }
}

export async function getConnection(accountId: string, connectionId: string, consistent = false): Promise<Connection | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.connection(accountId, connectionId), ConsistentRead: consistent }));
  return res.Item ? toConnection(res.Item) : undefined;
}

/** The account's connections (ONE Query; at most one per provider). */
export async function listConnections(accountId: string): Promise<Connection[]> {
  const q = queries.accountItems(accountId, 'CONNECTION');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
  });
  return items.map(toConnection);
}

/** The account item and its connections (ONE Query of the account partition: coverage). */
export async function accountWithConnections(accountId: string): Promise<{ account: Item | undefined; connections: Connection[] }> {
  const q = queries.accountAndConnections(accountId);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
  });
  const account = keys.account(accountId);
  return {
    account: items.find((item) => item.sk === account.sk),
    connections: items.filter((item) => item.type === 'Connection').map(toConnection),
  };
}

/**
 * Replaces the connection with `next` if it still is at `expectedUpdatedAt` (optimistic: a concurrent change → false).
 * The due index follows the status: removed while paused.
 */
export async function replaceConnection(next: Connection, expectedUpdatedAt: string): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: toItem(next),
        ConditionExpression: 'updatedAt = :expected',
        ExpressionAttributeValues: { ':expected': expectedUpdatedAt },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * Sets some fields of an existing connection (the sync's state); the due index moves with `nextSyncAt`. With
 * `expected`: only while the connection is unpaused and still at that `updatedAt` (false otherwise).
 */
export async function setConnectionFields(
  c: Pick<Connection, 'accountId' | 'id' | 'status'>,
  fields: Partial<Connection>,
  expected?: { updatedAt: string },
): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  Object.entries(fields).forEach(([name, value], i) => {
    names[`#f${i}`] = name;
    values[`:f${i}`] = value;
    sets.push(`#f${i} = :f${i}`);
  });
  const status = fields.status ?? c.status;
  let remove = '';
  if (fields.nextSyncAt !== undefined || fields.status !== undefined) {
    if (status !== 'paused' && (fields.nextSyncAt ?? null) !== null) {
      const due = keys.connectionDueIndex(shardOf(c.id), fields.nextSyncAt!, c.accountId, c.id);
      sets.push('gsi2pk = :g2pk', 'gsi2sk = :g2sk');
      values[':g2pk'] = due.gsi2pk;
      values[':g2sk'] = due.gsi2sk;
    } else if (status === 'paused') remove = ' REMOVE gsi2pk, gsi2sk';
  }
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.connection(c.accountId, c.id),
        UpdateExpression: `SET ${sets.join(', ')}${remove}`,
        ConditionExpression: expected ? 'attribute_exists(pk) AND updatedAt = :expectedAt AND #st <> :paused' : 'attribute_exists(pk)',
        ExpressionAttributeNames: expected ? { ...names, '#st': 'status' } : names,
        ExpressionAttributeValues: expected ? { ...values, ':expectedAt': expected.updatedAt, ':paused': 'paused' } : values,
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** A sealed secret of the same shape and lengths with every byte gone (what a deleted connection's item is overwritten with). */
function shredded(secret: SealedSecret): SealedSecret {
  const blank = (field: string) => 'A'.repeat(field.length);
  return { wrap: secret.wrap, wrappedKey: blank(secret.wrappedKey), iv: blank(secret.iv), tag: blank(secret.tag), ciphertext: blank(secret.ciphertext) };
}

/**
 * Deletes the connection (its sealed admin key with it), frees the provider on the account, drops its lease. The
 * sealed key is first overwritten in place with a blank of the same length, so a database that keeps deleted rows
 * for a while (DynamoDB Local's file) holds no copy of it to decrypt.
 */
export async function deleteConnection(c: Pick<Connection, 'accountId' | 'id' | 'provider'> & { secret?: SealedSecret }): Promise<boolean> {
  if (c.secret) {
    try {
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.connection(c.accountId, c.id),
          UpdateExpression: 'SET secret = :blank',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':blank': shredded(c.secret) },
        }),
      );
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
  try {
    await transactWrite([
      { Delete: { TableName: tableName(), Key: keys.connection(c.accountId, c.id), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Update: {
          TableName: tableName(),
          Key: keys.account(c.accountId),
          UpdateExpression: 'REMOVE #c',
          ConditionExpression: '#c = :id',
          ExpressionAttributeNames: { '#c': connectedAttribute(c.provider) },
          ExpressionAttributeValues: { ':id': c.id },
        },
      },
      { Delete: { TableName: tableName(), Key: keys.connectionLease(c.accountId, c.id) } },
    ]);
    return true;
  } catch (error) {
    if (failedConditions(error).length > 0) return false;
    throw error;
  }
}

/**
 * Takes the once-a-minute slot of `POST …/sync`: true when taken; else the seconds until the next one is allowed.
 */
export async function claimManualSync(c: Connection, now: Date, everyMs = 60_000): Promise<true | number> {
  const since = new Date(now.getTime() - everyMs).toISOString();
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.connection(c.accountId, c.id),
        UpdateExpression: 'SET manualSyncAt = :now',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(manualSyncAt) OR manualSyncAt = :null OR manualSyncAt <= :since)',
        ExpressionAttributeValues: { ':now': now.toISOString(), ':since': since, ':null': null },
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
    const fresh = await getConnection(c.accountId, c.id, true);
    const last = fresh?.manualSyncAt ? Date.parse(fresh.manualSyncAt) : now.getTime();
    return Math.max(1, Math.ceil((last + everyMs - now.getTime()) / 1000));
  }
}

/** Takes the connection's sync lease until `now + ttlMs` (false: another sync holds it). */
export async function acquireLease(accountId: string, connectionId: string, owner: string, now: Date, ttlMs: number): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.connectionLease(accountId, connectionId), owner, expiresAtMs: now.getTime() + ttlMs, expiresAt: Math.ceil((now.getTime() + ttlMs) / 1000) + 86_400 },
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAtMs < :now',
        ExpressionAttributeValues: { ':now': now.getTime() },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * Releases the lease; true when a sync was asked for while it was held (`syncAfterLease`): the holder queues one
 * right after, so that request is never dropped.
 */
export async function releaseLease(accountId: string, connectionId: string, owner: string): Promise<boolean> {
  try {
    const res = await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.connectionLease(accountId, connectionId),
        ConditionExpression: '#o = :owner',
        ExpressionAttributeNames: { '#o': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return res.Attributes?.again === true;
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
    return false;
  }
}

/**
 * A sync asked for while another holds the lease: marks the lease so its holder runs another sync after it. False
 * when no lease is held any more (the caller may take it itself).
 */
export async function syncAfterLease(accountId: string, connectionId: string, now: Date): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.connectionLease(accountId, connectionId),
        UpdateExpression: 'SET again = :t',
        ConditionExpression: 'attribute_exists(pk) AND expiresAtMs >= :now',
        ExpressionAttributeValues: { ':t': true, ':now': now.getTime() },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

export function toStoredCell(item: Item): StoredCell {
  const keyId = item.keyId as string;
  return {
    date: item.date as string,
    keyId: keyId === UNATTRIBUTED ? null : keyId,
    model: item.model as string,
    tier: item.tier as string,
    ...(item.longContext === true ? { longContext: true as const } : {}),
    projectId: typeof item.projectId === 'string' ? item.projectId : null,
    requests: readNumber(item.requests),
    inputTokens: readNumber(item.inputTokens),
    cachedInputTokens: readNumber(item.cachedInputTokens),
    cacheWriteInputTokens: readNumber(item.cacheWriteInputTokens),
    cacheWrite1hInputTokens: readNumber(item.cacheWrite1hInputTokens),
    outputTokens: readNumber(item.outputTokens),
    // Cells written before web searches were read hold none.
    webSearchRequests: item.webSearchRequests === undefined ? 0 : readNumber(item.webSearchRequests),
    quantity: item.quantity === undefined ? 0 : readNumber(item.quantity),
    costMicros: readInt(item.costMicros),
    version: readNumber(item.v),
  };
}

/** The snapshot of a provider's cells on the days `from`…`to` (ONE Query, every page), by cell id. */
export async function loadCells(accountId: string, provider: string, from: string, to: string): Promise<Item[]> {
  const q = queries.importCells(accountId, provider, from, to);
  return queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
    ConsistentRead: true,
  });
}

export interface ReconDay {
  date: string;
  computedMicros: bigint;
  billedMicros: bigint | null;
}

/** A provider's reconciliation days `from`…`to` (ONE Query). */
export async function loadReconDays(accountId: string, provider: string, from: string, to: string): Promise<ReconDay[]> {
  const q = queries.importDays(accountId, provider, from, to);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
  });
  return items.map((item) => ({
    date: item.date as string,
    computedMicros: readInt(item.computedMicros),
    billedMicros: item.billedMicros === undefined || item.billedMicros === null ? null : readInt(item.billedMicros),
  }));
}

/**
 * Sets the billed figure of the days whose figure changed: one transaction per 100 days (a first sync's 62 days are
 * one request), never one write per day. Each update only SETs the billed figure: the computed cost the sync's
 * transactions ADD to the same items is left alone.
 */
export async function setBilledDays(accountId: string, provider: string, days: readonly { date: string; billedMicros: bigint }[]): Promise<void> {
  for (let i = 0; i < days.length; i += 100) {
    await transactWrite(
      days.slice(i, i + 100).map(({ date, billedMicros }) => ({
        Update: {
          TableName: tableName(),
          Key: keys.importDay(accountId, provider, date),
          UpdateExpression: 'SET #date = :date, billedMicros = :billed',
          ExpressionAttributeNames: { '#date': 'date' },
          ExpressionAttributeValues: { ':date': date, ':billed': billedMicros },
        },
      })),
    );
  }
}

/** Connections of one shard due by `now` (ONE Query page of up to `limit`). */
export async function dueConnections(shard: number, now: Date, limit = 100): Promise<{ accountId: string; connectionId: string; provider: Provider }[]> {
  const q = queries.dueConnections(shard, now.toISOString());
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk <= :before',
      ExpressionAttributeValues: { ':pk': q.gsi2pk, ':before': q.skBelow },
      ProjectionExpression: 'accountId, id, provider',
      Limit: limit,
    }),
  );
  return (res.Items ?? []).map((item) => ({ accountId: item.accountId as string, connectionId: item.id as string, provider: item.provider as Provider }));
}
