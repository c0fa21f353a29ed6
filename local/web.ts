/**
 * The dashboard locally: `npm start` builds web/ when its build is missing or older than its sources, and the
 * gateway serves the build at `/` — files from web/dist, any other path outside `/api` answers index.html (the
 * app routes on the client). AWS does the same with S3 + CloudFront (infra/).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { DASHBOARD_CSP, FRAME_OPTIONS, PERMISSIONS_POLICY, REFERRER_POLICY } from '#shared/http/dashboard-headers.ts';

export const WEB_DIR = fileURLToPath(new URL('../web/', import.meta.url));
export const WEB_DIST = join(WEB_DIR, 'dist');
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The headers of the app's HTML: no inline script may run (the build has none), nothing may frame it, and it
 * talks to its own origin only. The same values as CloudFront's (shared/http/dashboard-headers.ts).
 */
export const HTML_HEADERS: Record<string, string> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': FRAME_OPTIONS,
  'referrer-policy': REFERRER_POLICY,
  'permissions-policy': PERMISSIONS_POLICY,
  'cache-control': 'no-cache',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
};

/** The newest modification time (ms) of the files under `dir` (recursively); 0 for none. */
async function newest(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.filter((e) => e !== 'dist' && e !== 'node_modules').map((e) => newest(join(path, e))));
  return Math.max(info.mtimeMs, ...times);
}

/** Whether `<webDir>/dist` is missing or older than any source of the app (src/, public/, index.html, the config). */
export async function webBuildIsStale(webDir = WEB_DIR): Promise<boolean> {
  const built = (await stat(join(webDir, 'dist', 'index.html')).catch(() => undefined))?.mtimeMs ?? 0;
  if (built === 0) return true;
  const sources = await Promise.all(['src', 'public', 'index.html', 'vite.config.ts'].map((p) => newest(join(webDir, p))));
  return Math.max(...sources) > built;
}

/** Builds the app when stale (into a temporary directory, then moved in place: a reader never sees half of it). */
export async function ensureWebBuild(log: (line: string) => void = console.log): Promise<void> {
  if (!(await webBuildIsStale())) return;
  log('Building the dashboard (web/) ...');
  const tmp = `${WEB_DIST}.tmp-${process.pid}`;
  const child = spawn(
    process.execPath,
    [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(WEB_DIR, 'vite.config.ts'), '--outDir', tmp, '--emptyOutDir', '--logLevel', 'warn'],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) {
    await rm(tmp, { recursive: true, force: true });
    throw new Error(`building the dashboard failed (vite exited with ${code})`);
  }
  await rm(WEB_DIST, { recursive: true, force: true });
  // Another process may have moved its build in meanwhile: theirs is as good as ours.
  await rename(tmp, WEB_DIST).catch(() => rm(tmp, { recursive: true, force: true }));
}

interface CachedFile {
  body: Buffer;
  gzip: Buffer | undefined;
  mtimeMs: number;
}

/** Serves files of `dir`, else its index.html. Returns the status sent, or undefined when `dir` has no app. */
export function staticFiles(dir: string) {
  const cache = new Map<string, CachedFile>();

  async function load(file: string): Promise<CachedFile | undefined> {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const hit = cache.get(file);
    if (hit && hit.mtimeMs === info.mtimeMs) return hit;
    const body = await readFile(file);
    const compressible = /^(text\/|application\/(json|manifest)|image\/svg)/.test(TYPES[extname(file)] ?? '');
    const entry = { body, gzip: compressible && body.length > 1024 ? gzipSync(body) : undefined, mtimeMs: info.mtimeMs };
    cache.set(file, entry);
    return entry;
  }

  return async function serve(req: IncomingMessage, res: ServerResponse, rawPath: string): Promise<number | undefined> {
    let relative: string;
    try {
      relative = normalize(decodeURIComponent(rawPath)).replace(/^([/\\])+/, '');
    } catch {
      relative = '';
    }
    let file = join(dir, relative);
    if (!file.startsWith(dir + sep) || relative === '') file = join(dir, 'index.html');
    let found = await load(file);
    if (!found) {
      file = join(dir, 'index.html');
      found = await load(file);
    }
    if (!found) return undefined;
    const isHtml = file.endsWith('.html');
    const hashed = relative.startsWith(`assets${sep}`) && file !== join(dir, 'index.html');
    const headers: Record<string, string> = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      ...(isHtml ? HTML_HEADERS : { 'x-content-type-options': 'nosniff', 'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache' }),
      vary: 'accept-encoding',
    };
    const gzip = found.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? found.gzip! : found.body;
    if (gzip) headers['content-encoding'] = 'gzip';
    headers['content-length'] = String(body.length);
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
    return 200;
  };
}
