/**
 * The CloudFront Function of the dashboard's default behaviour, run in Node: the very file the stack deploys
 * (FunctionCode.fromFile), evaluated as CloudFront does — a script whose top-level `handler` gets the event.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SPA_ROUTING_FILE } from '#infra/dashboard.ts';

interface CloudFrontRequest {
  method: string;
  uri: string;
  querystring: Record<string, { value: string }>;
  headers: Record<string, { value: string }>;
  cookies: Record<string, { value: string }>;
}

const source = readFileSync(SPA_ROUTING_FILE, 'utf8');
const handler = new Function(`${source}\nreturn handler;`)() as (event: unknown) => CloudFrontRequest;

/** A viewer-request event (CloudFront Functions event structure, version 1.0). */
function viewerRequest(uri: string, querystring: Record<string, { value: string }> = {}) {
  const request: CloudFrontRequest = { method: 'GET', uri, querystring, headers: { host: { value: 'd111.cloudfront.net' } }, cookies: {} };
  return {
    version: '1.0',
    context: { distributionDomainName: 'd111.cloudfront.net', distributionId: 'E1', eventType: 'viewer-request', requestId: 'r1' },
    viewer: { ip: '198.51.100.7' },
    request,
  };
}

const uriAfter = (uri: string) => handler(viewerRequest(uri)).uri;

describe('SPA routing (CloudFront Function, cloudfront-js-2.0)', () => {
  it('answers index.html for the app paths (no file extension)', () => {
    for (const uri of ['/', '/keys/abc', '/keys/01J9Z8X/', '/verify-email', '/reset-password', '/alerts', '/join/xyz']) {
      expect(uriAfter(uri), uri).toBe('/index.html');
    }
  });

  it('leaves files unchanged', () => {
    for (const uri of ['/assets/x.js', '/assets/index-BdbAyTC6.css', '/favicon.svg', '/index.html', '/robots.txt']) {
      expect(uriAfter(uri), uri).toBe(uri);
    }
  });

  it('keeps the query string (the verification link carries its token there) and the rest of the request', () => {
    const event = viewerRequest('/verify-email', { token: { value: 'abc_123' } });
    const out = handler(event);
    expect(out).toEqual({ ...event.request, uri: '/index.html', querystring: { token: { value: 'abc_123' } } });
  });

  it('is a plain script CloudFront accepts: one top-level handler, no modules, under the 10 KB limit', () => {
    expect(source).toMatch(/^function handler\(event\) \{$/m);
    expect(source).not.toMatch(/\b(import|export|require)\b/);
    expect(Buffer.byteLength(source)).toBeLessThan(10 * 1024);
  });
});
