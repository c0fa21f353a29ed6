/**
 * Asynchronous spend exports (docs/features/spend-and-exports.md): the CSV of `GET /spend/export` — the same rows,
 * header and quoting, from the same generator (shared/spend/export.ts `csvChunks`) — for ranges of up to 366 days
 * and any number of rows, built off the request path.
 *
 *   POST /spend/exports   → the export item and one of the account's 2 slots (shared/db/exports.ts), then a queue
 *                           message (shared/spend/export-queue.ts); 202 `running`.
 *   the worker            → Queries the export rows index page by page, streams the lines through gzip into the
 *                           file store (S3 multipart upload; locally a file), then `ready` with rows and bytes.
 *   GET /spend/exports/id → the status; once ready a download link valid 1 hour (S3 pre-signed GET; locally a
 *                           one-time link), as long as the file is kept (24 hours).
 */
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { NotFound, TooManyRequests } from '#shared/http/errors.ts';
import { logger } from '#shared/http/logger.ts';
import { isId, newId } from '#shared/ids.ts';
import { breakdownRange } from '#shared/keys/service.ts';
import * as repo from '#shared/db/exports.ts';
import { csvChunks } from '#shared/spend/export.ts';
import { EXPORT_PREFIX, exportFileLink, putExportFile } from '#shared/spend/export-files.ts';
import { queueExport, type ExportMessage } from '#shared/spend/export-queue.ts';
import type { CreateExportBody } from '#shared/spend/schemas.ts';

/**
 * A running export that has not settled by then has failed (its worker is gone); its slot is then free again. Longer
 * than the worker's timeout (15 minutes, infra/exports.ts), so a worker still running never loses its slot.
 */
export const EXPORT_LEASE_MS = 20 * 60_000;
/** How long a download link works. */
export const EXPORT_LINK_SECONDS = 3600;
/** How long the file is kept after it is ready (the bucket's lifecycle rule deletes it after 1 day). */
export const EXPORT_RETENTION_MS = 24 * 3600_000;
/** What a refused start (429) advises: a year of a SCALE account's rows takes well under a minute to export. */
export const EXPORT_RETRY_AFTER_SECONDS = 30;
/** The worker records the rows written so far at most this often (the status's progress). */
const PROGRESS_EVERY_MS = 2000;

/** The status of an export (docs/features/spend-and-exports.md): explicit fields, never the stored item. */
export interface ExportView {
  id: string;
  from: string;
  to: string;
  status: repo.ExportStatus;
  rows: number;
  bytes: number;
  url: string | null;
  expiresAt: string | null;
  createdAt: string;
  format: 'csv' | 'focus';
}

const filename = (record: Pick<repo.ExportRecord, 'from' | 'to' | 'format'>) =>
  `burnrate-${record.format === 'focus' ? 'focus' : 'spend'}-${record.from}-to-${record.to}.csv.gz`;
const objectKey = (record: Pick<repo.ExportRecord, 'accountId' | 'id'>) => `${EXPORT_PREFIX}${record.accountId}/${record.id}.csv.gz`;
const leaseOver = (record: repo.ExportRecord, now: Date) => record.status === 'running' && now.toISOString() > record.leaseUntil;

export async function startSpendExport(accountId: string, userId: string, body: CreateExportBody, now = new Date()): Promise<ExportView> {
  const { from, to } = breakdownRange(body, now, 'body');
  const record = await repo.startExport(
    {
      id: newId('export'),
      accountId,
      from,
      to,
      status: 'running',
      leaseUntil: new Date(now.getTime() + EXPORT_LEASE_MS).toISOString(),
      rows: 0,
      bytes: 0,
      objectKey: null,
      availableUntil: null,
      createdBy: userId,
      createdAt: now.toISOString(),
      completedAt: null,
      format: body.format ?? 'csv',
    },
    now,
  );
  if (!record) {
    throw new TooManyRequests(
      `${repo.EXPORT_SLOTS} exports of this account are running; start another when one of them is ready (GET /spend/exports/{id}).`,
      'too-many-exports',
      EXPORT_RETRY_AFTER_SECONDS,
    );
  }
  try {
    await queueExport({ accountId, exportId: record.id });
  } catch (error) {
    // Never a running export that nothing will run: it fails now, and frees its slot.
    await repo.settleExport(record, { status: 'failed' }, new Date());
    throw error;
  }
  return toView(record, null, now);
}

export async function spendExportStatus(accountId: string, exportId: string, now = new Date()): Promise<ExportView> {
  const record = isId('export', exportId) ? await repo.getExport(accountId, exportId) : undefined;
  if (!record) throw new NotFound('No such export.');
  // The link lives 1 hour, or until the file is deleted if that comes first (a link of under a second: none).
  const seconds = record.availableUntil ? Math.min(EXPORT_LINK_SECONDS, Math.floor((Date.parse(record.availableUntil) - now.getTime()) / 1000)) : 0;
  const available = record.status === 'ready' && record.objectKey && seconds >= 1;
  if (!available) return toView(record, null, now);
  const url = await exportFileLink(record.objectKey!, filename(record), seconds);
  return toView(record, { url, expiresAt: new Date(now.getTime() + seconds * 1000).toISOString() }, now);
}

function toView(record: repo.ExportRecord, link: { url: string; expiresAt: string } | null, now: Date): ExportView {
  return {
    id: record.id,
    from: record.from,
    to: record.to,
    status: leaseOver(record, now) ? 'failed' : record.status,
    rows: record.rows,
    bytes: record.bytes,
    url: link?.url ?? null,
    expiresAt: link?.expiresAt ?? null,
    createdAt: record.createdAt,
    format: record.format ?? 'csv',
  };
}

/**
 * The worker's part: runs one queued export to `ready` (or `failed`). A message of an export that is not running
 * (settled already: a redelivery) does nothing. Only a failure to read or settle the export itself throws (the
 * message then comes again); a failure while building the file settles it `failed`.
 */
export async function runSpendExport(message: ExportMessage, now = () => new Date()): Promise<repo.ExportStatus | 'skipped'> {
  const record = await repo.getExport(message.accountId, message.exportId);
  if (!record || record.status !== 'running') return 'skipped';
  if (leaseOver(record, now())) {
    await repo.settleExport(record, { status: 'failed' }, now());
    return 'failed';
  }
  try {
    const { rows, bytes } = await writeFile(record);
    const ready = now();
    const availableUntil = new Date(ready.getTime() + EXPORT_RETENTION_MS).toISOString();
    await repo.settleExport(record, { status: 'ready', rows, bytes, objectKey: objectKey(record), availableUntil }, ready);
    return 'ready';
  } catch (error) {
    logger.error('spend export failed', { exportId: record.id, error: error as Error });
    await repo.settleExport(record, { status: 'failed' }, now());
    return 'failed';
  }
}

/** The CSV lines, page by page, through gzip into the file store; the data rows and the file's bytes. */
async function writeFile(record: repo.ExportRecord): Promise<{ rows: number; bytes: number }> {
  let rows = 0;
  let bytes = 0;
  let progressAt = Date.now();
  async function* lines(): AsyncGenerator<Buffer> {
    for await (const chunk of csvChunks(record.accountId, record.from, record.to, Infinity, undefined, record.format ?? 'csv')) {
      rows = chunk.rows;
      yield Buffer.from(chunk.text, 'utf8');
      if (Date.now() - progressAt >= PROGRESS_EVERY_MS) {
        progressAt = Date.now();
        await repo.recordProgress(record, rows);
      }
    }
  }
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const source: Readable = counted;
  await Promise.all([pipeline(lines, createGzip(), counted), putExportFile(objectKey(record), source, filename(record))]);
  return { rows, bytes };
}
