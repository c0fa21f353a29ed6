/**
 * Where the files of asynchronous exports live: in AWS (`EXPORTS_BUCKET` set) S3 — the worker's multipart upload of
 * the gzip stream (lib-storage `Upload`), downloaded through a pre-signed GET URL made by the status route (signing
 * needs the signer's own s3:GetObject); locally the store the local stack registers with `setLocalExportFiles`: a
 * folder under the data folder, downloaded through one-time links the local gateway serves (local/export-files.ts).
 */
import type { Readable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '#shared/config.ts';

export interface ExportFileStore {
  /** Stores the file read from `body` (gzip CSV) under `key`; resolves once it is complete. */
  put(key: string, body: Readable, filename: string): Promise<void>;
  /** A link that downloads the file as `filename`, valid `seconds`. */
  link(key: string, filename: string, seconds: number): Promise<string>;
}

/** The objects' prefix in the bucket (the worker may write under it only). */
export const EXPORT_PREFIX = 'exports/';

let localFiles: ExportFileStore | undefined;
let s3: S3Client | undefined;
const s3Client = () => (s3 ??= new S3Client({ region: config().region }));
const bucket = () => process.env.EXPORTS_BUCKET;

/** The local stack registers its store here (`undefined` unregisters it). */
export function setLocalExportFiles(store: ExportFileStore | undefined): void {
  localFiles = store;
}

function local(): ExportFileStore {
  if (!localFiles) throw new Error('no export file store is configured (EXPORTS_BUCKET)');
  return localFiles;
}

/** S3: 5 MB parts (the minimum), 2 in flight — a few MB of memory whatever the export's size. */
export async function putExportFile(key: string, body: Readable, filename: string): Promise<void> {
  const name = bucket();
  if (!name) return local().put(key, body, filename);
  const upload = new Upload({
    client: s3Client(),
    params: { Bucket: name, Key: key, Body: body, ContentType: 'application/gzip', ContentDisposition: `attachment; filename="${filename}"` },
    queueSize: 2,
    partSize: 5 * 1024 * 1024,
  });
  await upload.done();
}

/** A link that downloads the file as `filename`, valid `seconds` (S3: a pre-signed GetObject URL). */
export function exportFileLink(key: string, filename: string, seconds: number): Promise<string> {
  const name = bucket();
  if (!name) return local().link(key, filename, seconds);
  const get = new GetObjectCommand({ Bucket: name, Key: key, ResponseContentDisposition: `attachment; filename="${filename}"` });
  return getSignedUrl(s3Client(), get, { expiresIn: seconds });
}
