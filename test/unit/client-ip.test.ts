/**
 * The client's IP address (shared/http/client-ip.ts): behind our CloudFront distribution the viewer's address from
 * CloudFront-Viewer-Address, but only when the request carries the edge secret; otherwise API Gateway's sourceIp.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resetConfig } from '#shared/config.ts';
import { clientIp, EDGE_SECRET_HEADER, VIEWER_ADDRESS_HEADER, viewerIp } from '#shared/http/client-ip.ts';
import { apiEvent } from './helpers.ts';

const SECRET = 'aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF';
/** An edge server of CloudFront: API Gateway's sourceIp of every request that came through the distribution. */
const EDGE = '130.176.10.20';

function event(headers: Record<string, string>, sourceIp = EDGE) {
  const base = apiEvent();
  return apiEvent({ headers: { ...base.headers, ...headers }, requestContext: { ...base.requestContext, http: { ...base.requestContext.http, sourceIp } } });
}
const throughCloudFront = (viewerAddress: string, secret = SECRET) => event({ [EDGE_SECRET_HEADER]: secret, [VIEWER_ADDRESS_HEADER]: viewerAddress });

describe('viewerIp (a CloudFront-Viewer-Address value)', () => {
  it('strips the port: IPv4, IPv6 as CloudFront sends it (unbracketed), and bracketed IPv6', () => {
    expect(viewerIp('198.51.100.10:46532')).toBe('198.51.100.10');
    expect(viewerIp('2406:2d40:728d:fa10::c4a:42838')).toBe('2406:2d40:728d:fa10::c4a');
    expect(viewerIp('2001:db8::1:443')).toBe('2001:db8::1');
    expect(viewerIp('[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(viewerIp(' 203.0.113.7:1 ')).toBe('203.0.113.7');
  });

  it('refuses anything else: no port, a port out of range, not an address, several values, empty', () => {
    for (const bad of ['198.51.100.10', '198.51.100.10:', '198.51.100.10:65536', '198.51.100.10:123456', 'example.com:443', '999.1.1.1:80',
      '198.51.100.10:1,203.0.113.7:2', '[2001:db8::1]', '[nonsense]:443', '', ':443', 'unknown:0']) {
      expect(viewerIp(bad), bad).toBeUndefined();
    }
  });
});

describe('clientIp', () => {
  afterEach(() => {
    delete process.env.EDGE_SECRET;
    resetConfig();
  });

  it('with the right edge secret: the viewer\'s address, without its port (IPv4 and IPv6)', () => {
    expect(clientIp(throughCloudFront('198.51.100.10:46532'), SECRET)).toBe('198.51.100.10');
    expect(clientIp(throughCloudFront('2001:db8:1:2::7:443'), SECRET)).toBe('2001:db8:1:2::7');
  });

  it('reads the secret from the configuration the Lambda gets (env EDGE_SECRET)', () => {
    process.env.EDGE_SECRET = SECRET;
    resetConfig();
    expect(clientIp(throughCloudFront('198.51.100.10:46532'))).toBe('198.51.100.10');
  });

  it('a wrong, a missing or a prefix of the secret: sourceIp (a forged CloudFront-Viewer-Address changes nothing)', () => {
    expect(clientIp(throughCloudFront('198.51.100.10:46532', 'wrong'), SECRET)).toBe(EDGE);
    expect(clientIp(throughCloudFront('198.51.100.10:46532', SECRET.slice(0, -1)), SECRET)).toBe(EDGE);
    expect(clientIp(throughCloudFront('198.51.100.10:46532', `${SECRET}x`), SECRET)).toBe(EDGE);
    expect(clientIp(throughCloudFront('198.51.100.10:46532', ''), SECRET)).toBe(EDGE);
    expect(clientIp(event({ [VIEWER_ADDRESS_HEADER]: '198.51.100.10:46532' }), SECRET)).toBe(EDGE);
  });

  it('no secret configured (locally, and every deployment without the distribution): always sourceIp, even for an empty header', () => {
    expect(clientIp(throughCloudFront('198.51.100.10:46532'))).toBe(EDGE);
    expect(clientIp(throughCloudFront('198.51.100.10:46532', ''), '')).toBe(EDGE);
  });

  it('the right secret but a malformed or missing viewer address: sourceIp', () => {
    expect(clientIp(throughCloudFront('not-an-address'), SECRET)).toBe(EDGE);
    expect(clientIp(throughCloudFront('198.51.100.10'), SECRET)).toBe(EDGE);
    expect(clientIp(event({ [EDGE_SECRET_HEADER]: SECRET }), SECRET)).toBe(EDGE);
  });

  it('without the headers: sourceIp as API Gateway gives it; none at all: empty', () => {
    expect(clientIp(event({}, '203.0.113.9'), SECRET)).toBe('203.0.113.9');
    const bare = apiEvent();
    expect(clientIp({ ...bare, requestContext: undefined } as unknown as typeof bare, SECRET)).toBe('');
  });
});
