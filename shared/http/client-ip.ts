/**
 * The client's IP address of a request: what the per-IP abuse limits of docs/security.md count (shared/auth/limits.ts).
 *
 * Behind our CloudFront distribution (the dashboard's `/api/*`), API Gateway's `sourceIp` is a CloudFront edge
 * server, shared by every viewer of that edge. CloudFront then also sends the viewer's own address in
 * `CloudFront-Viewer-Address` (`ip:port`; IPv6 unbracketed, `2001:db8::1:443`), but any client that calls the API's
 * own endpoint can send that header too. So it is believed only when the request also carries the origin secret
 * that the distribution adds as a custom origin header (`x-burnrate-edge`, a generated Secrets Manager value that
 * the functions get as env `EDGE_SECRET`; infra/dashboard.ts). Anything else — no secret configured (locally),
 * a missing or wrong secret, a missing or malformed viewer address — falls back to `sourceIp`, as before.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { config } from '#shared/config.ts';

/** The origin custom header CloudFront adds with the edge secret (payload 2.0 header names are lower case). */
export const EDGE_SECRET_HEADER = 'x-burnrate-edge';
/** The viewer's `ip:port`, added by CloudFront when the origin request policy includes it. */
export const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant time (over fixed-length digests): the comparison tells nothing about how much of a guess was right. */
function isEdgeSecret(given: string | undefined, expected: string): boolean {
  return expected.length > 0 && given !== undefined && timingSafeEqual(digest(given), digest(expected));
}

/**
 * The IP address of a `CloudFront-Viewer-Address` value, without the port: `198.51.100.10:46532` → `198.51.100.10`,
 * `2001:db8::1:46532` and `[2001:db8::1]:46532` → `2001:db8::1`. Undefined for anything else (no port, a port out
 * of range, not an IP address, several values).
 */
export function viewerIp(value: string): string | undefined {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(value.trim()) ?? /^(.+):(\d{1,5})$/.exec(value.trim());
  if (!match || Number(match[2]) > 65_535) return undefined;
  const ip = match[1]!;
  return isIP(ip) ? ip : undefined;
}

/** The address the request came from: the viewer's behind our CloudFront (proven by the edge secret), else `sourceIp`. */
export function clientIp(event: APIGatewayProxyEventV2, edgeSecret = config().edgeSecret): string {
  const sourceIp = event.requestContext?.http?.sourceIp ?? '';
  const headers = event.headers ?? {};
  if (!isEdgeSecret(headers[EDGE_SECRET_HEADER], edgeSecret)) return sourceIp;
  const viewer = headers[VIEWER_ADDRESS_HEADER];
  return (viewer !== undefined && viewerIp(viewer)) || sourceIp;
}
