/**
 * The local stand-in for the exports bucket (shared/spend/export-files.ts): files under `<dataDir>/exports/`, and
 * download links the local gateway serves at `/local-exports/<token>` — each link works ONCE and for at most the
 * seconds asked (1 hour), like a pre-signed URL that can't be replayed. A link is a random token; only its SHA-256 is
 * kept (`<dataDir>/exports/.links/<sha256>.json`), so a restart keeps links and files working.
 *
 * The download is the gzip file as stored: `Content-Type: application/gzip` and an attachment named
 * `burnrate-spend-<from>-to-<to>.csv.gz` (no `Content-Encoding`), exactly what S3 serves in AWS.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CACHE_CONTROL } from '#shared/http/problem.ts';
import type { ExportFileStore } from '#shared/spend/export-files.ts';

export const LOCAL_EXPORTS_PATH = '/local-exports/';

interface LinkRecord {
  key: string;
  filename: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface LocalExportFiles extends ExportFileStore {
  /** Answers a gateway request under {@link LOCAL_EXPORTS_PATH} (and returns its status), or undefined for any other path. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<number | undefined>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** `origin`: where the gateway answers (`http://localhost:3000`). */
export function localExportFiles(dataDir: string, origin: string): LocalExportFiles {
  const root = resolve(dataDir, 'exports');
  const links = join(root, '.links');
  const fileOf = (key: string) => {
    const file = resolve(root, key);
    if (!file.startsWith(`${root}${sep}`) || file.startsWith(`${links}${sep}`)) throw new Error(`not an export key: ${key}`);
    return file;
  };

  function refuse(res: ServerResponse, status: number, title: string, detail: string): number {
    const body = JSON.stringify({ type: `/problems/${status === 404 ? 'not-found' : 'link-gone'}`, title, status, detail });
    res.writeHead(status, { 'content-type': 'application/problem+json', 'cache-control': CACHE_CONTROL, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
    return status;
  }

  return {
    async put(key, body) {
      const file = fileOf(key);
      await mkdir(dirname(file), { recursive: true });
      // Written aside, then renamed: a half-written file is never the export's.
      const partial = `${file}.${randomBytes(6).toString('hex')}.partial`;
      try {
        await pipeline(body, createWriteStream(partial, { mode: 0o600 }));
        await rename(partial, file);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
    },

    async link(key, filename, seconds) {
      fileOf(key);
      await mkdir(links, { recursive: true });
      const token = randomBytes(32).toString('base64url');
      const record: LinkRecord = { key, filename, expiresAt: Date.now() + seconds * 1000 };
      await writeFile(join(links, `${sha256(token)}.json`), JSON.stringify(record), { mode: 0o600 });
      return `${origin}${LOCAL_EXPORTS_PATH}${token}`;
    },

    async serve(req, res, path) {
      if (!path.startsWith(LOCAL_EXPORTS_PATH)) return undefined;
      const token = path.slice(LOCAL_EXPORTS_PATH.length);
      if (req.method !== 'GET' || !/^[A-Za-z0-9_-]{43}$/.test(token)) return refuse(res, 404, 'Not found.', 'No such download link.');
      const pending = join(links, `${sha256(token)}.json`);
      const used = `${pending}.used`;
      // The rename is the one-time check: of two concurrent downloads exactly one renames the link.
      try {
        await rename(pending, used);
      } catch {
        const known = await stat(used).then(() => true, () => false);
        return known
          ? refuse(res, 410, 'The link was used.', 'A download link works once: ask GET /api/spend/exports/{id} for a new one.')
          : refuse(res, 404, 'Not found.', 'No such download link.');
      }
      const link = JSON.parse(await readFile(used, 'utf8')) as LinkRecord;
      if (Date.now() > link.expiresAt) {
        return refuse(res, 410, 'The link has expired.', 'A download link works for 1 hour: ask GET /api/spend/exports/{id} for a new one.');
      }
      const file = fileOf(link.key);
      const size = await stat(file).then((s) => s.size, () => undefined);
      if (size === undefined) return refuse(res, 404, 'Not found.', 'The export file is gone (files are kept 24 hours).');
      res.writeHead(200, {
        'content-type': 'application/gzip',
        'content-disposition': `attachment; filename="${link.filename}"`,
        'content-length': String(size),
        'cache-control': CACHE_CONTROL,
      });
      await pipeline(createReadStream(file), res);
      return 200;
    },
  };
}
