/**
 * Asynchronous spend exports (shared/spend/exports.ts): the export item and the account's running-export slots,
 * both in the account's partition (rare, small writes).
 *
 * At most {@link EXPORT_SLOTS} exports of an account run at once, exactly, under any concurrency: starting one puts
 * its item together with a slot item in ONE transaction, the slot conditional on being free (absent, or its lease
 * over). The worker frees the slot when it settles the export; a worker that crashed frees nothing, and its slot
 * is free again when the lease ends (the export then reads as `failed`).
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, failedConditions, tableName, transactWrite, type Item } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';

/** Running exports an account may have at once (docs/features/spend-and-exports.md). */
export const EXPORT_SLOTS = 2;

export type ExportStatus = 'running' | 'ready' | 'failed';

export interface ExportRecord {
  id: string;
  accountId: string;
  from: string;
  to: string;
  status: ExportStatus;
  /** Which slot it holds while running. */
  slot: number;
  /** ISO: past it, a `running` export has failed (its worker is gone) and its slot is free. */
  leaseUntil: string;
  rows: number;
  bytes: number;
  /** Where the file lives (S3 key, or the local store's), once ready. */
  objectKey: string | null;
  /** ISO: when the file is deleted (the bucket's lifecycle), once ready. */
  availableUntil: string | null;
  createdBy: string;
  createdAt: string;
  completedAt: string | null;
  /** `csv` (absent on exports made before formats existed) or `focus`. */
  format?: 'csv' | 'focus';
}

const toRecord = (item: Item): ExportRecord => ({
  id: item.id as string,
  accountId: item.accountId as string,
  from: item.from as string,
  to: item.to as string,
  status: item.status as ExportStatus,
  slot: Number(item.slot),
  leaseUntil: item.leaseUntil as string,
  rows: Number(item.rows ?? 0),
  bytes: Number(item.bytes ?? 0),
  objectKey: (item.objectKey as string | undefined) ?? null,
  availableUntil: (item.availableUntil as string | undefined) ?? null,
  createdBy: item.createdBy as string,
  createdAt: item.createdAt as string,
  completedAt: (item.completedAt as string | undefined) ?? null,
  format: item.format === 'focus' ? 'focus' : 'csv',
});

/** Sends a conditional write: `true` when written, `false` when its condition failed (anything else throws). */
async function conditionally(command: UpdateCommand | DeleteCommand): Promise<boolean> {
  try {
    await db().send(command);
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Epoch seconds (the table's TTL attribute `expiresAt`): an export item is kept a week past its lease. */
const ttlAfter = (iso: string) => Math.floor(Date.parse(iso) / 1000) + 7 * 86_400;

/**
 * Stores a new running export in the first free slot, and answers it. `undefined`: every slot is held by a running
 * export (nothing stored). Tries the slots in turn; a slot lost to a concurrent start is simply the next one tried.
 */
export async function startExport(record: Omit<ExportRecord, 'slot'>, now: Date): Promise<ExportRecord | undefined> {
  for (let slot = 0; slot < EXPORT_SLOTS; slot++) {
    const item = { ...keys.spendExport(record.accountId, record.id), ...record, slot, expiresAt: ttlAfter(record.leaseUntil) };
    try {
      await transactWrite([
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.exportSlot(record.accountId, slot), exportId: record.id, leaseUntil: record.leaseUntil, expiresAt: ttlAfter(record.leaseUntil) },
            ConditionExpression: 'attribute_not_exists(pk) OR leaseUntil < :now',
            ExpressionAttributeValues: { ':now': now.toISOString() },
          },
        },
        { Put: { TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      ]);
      return { ...record, slot };
    } catch (error) {
      if (!failedConditions(error).includes(0)) throw error;
    }
  }
  return undefined;
}

export async function getExport(accountId: string, exportId: string): Promise<ExportRecord | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.spendExport(accountId, exportId), ConsistentRead: true }));
  return res.Item ? toRecord(res.Item) : undefined;
}

/** The rows written so far, for the status's progress (only while it runs). */
export async function recordProgress(record: ExportRecord, rows: number): Promise<void> {
  await conditionally(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.spendExport(record.accountId, record.id),
      UpdateExpression: 'SET #rows = :rows',
      ConditionExpression: '#status = :running',
      ExpressionAttributeNames: { '#rows': 'rows', '#status': 'status' },
      ExpressionAttributeValues: { ':rows': rows, ':running': 'running' },
    }),
  );
}

export type Settlement =
  | { status: 'ready'; rows: number; bytes: number; objectKey: string; availableUntil: string }
  | { status: 'failed' };

/**
 * Settles a running export (`ready` with its figures, or `failed`) and frees its slot. `false`: it was not running
 * any more (settled before — a redelivered message), nothing changed.
 */
export async function settleExport(record: ExportRecord, settlement: Settlement, now: Date): Promise<boolean> {
  const ready = settlement.status === 'ready';
  const settled = await conditionally(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.spendExport(record.accountId, record.id),
      UpdateExpression: ready
        ? 'SET #status = :status, completedAt = :now, #rows = :rows, #bytes = :bytes, objectKey = :objectKey, availableUntil = :availableUntil, expiresAt = :ttl'
        : 'SET #status = :status, completedAt = :now',
      ConditionExpression: '#status = :running',
      ExpressionAttributeNames: { '#status': 'status', ...(ready ? { '#rows': 'rows', '#bytes': 'bytes' } : {}) },
      ExpressionAttributeValues: {
        ':status': settlement.status,
        ':running': 'running',
        ':now': now.toISOString(),
        ...(ready
          ? {
              ':rows': settlement.rows,
              ':bytes': settlement.bytes,
              ':objectKey': settlement.objectKey,
              ':availableUntil': settlement.availableUntil,
              ':ttl': ttlAfter(settlement.availableUntil),
            }
          : {}),
      },
    }),
  );
  if (settled) await releaseSlot(record);
  return settled;
}

/** Frees the export's slot, unless another export took it over meanwhile (its lease had ended). */
async function releaseSlot(record: ExportRecord): Promise<void> {
  await conditionally(
    new DeleteCommand({
      TableName: tableName(),
      Key: keys.exportSlot(record.accountId, record.slot),
      ConditionExpression: 'exportId = :id',
      ExpressionAttributeValues: { ':id': record.id },
    }),
  );
}
