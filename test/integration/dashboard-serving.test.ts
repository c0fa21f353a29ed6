/**
 * The local gateway serves the built dashboard at `/`: files from web/dist, index.html for any other path outside
 * `/api` (client-side routes), while `/api/*` 404s stay problem+json. The app's HTML carries the security headers.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEB_DIST } from '#local/web.ts';
import { stack } from './harness.ts';

const origin = () => stack().apiUrl.replace(/\/api$/, '');

describe('the dashboard at /', () => {
  it('answers / and client-side routes with the app HTML and its security headers', async () => {
    for (const path of ['/', '/keys/abc', '/verify-email?token=abc', '/alerts']) {
      const res = await fetch(`${origin()}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await res.text();
      expect(html).toContain('<div id="app"></div>');
      expect(html).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    }
  });

  it('keeps /api 404s problem+json', async () => {
    for (const path of ['/api/nope', '/api/keys/abc/def', '/api']) {
      const res = await fetch(`${origin()}${path}`, { method: path === '/api' ? 'POST' : 'GET' });
      expect([404, 405], path).toContain(res.status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
  });

  it('serves a built asset as its file, cacheable forever, gzipped when asked', async () => {
    const assets = await readdir(join(WEB_DIST, 'assets'));
    const js = assets.find((name) => name.endsWith('.js'))!;
    const res = await fetch(`${origin()}/assets/${js}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const { readFile } = await import('node:fs/promises');
    expect(await res.text()).toBe(await readFile(join(WEB_DIST, 'assets', js), 'utf8'));
    const icon = await fetch(`${origin()}/favicon.svg`);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
  });

  it('never serves a file from outside the build', async () => {
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json']) {
      const res = await fetch(`${origin()}${path}`);
      const text = await res.text();
      expect(text, path).not.toContain('"name": "burnrate"');
    }
  });
});
