/**
 * The webhook channel: POST `{id, type, alert}` as JSON to the alert's `webhookUrl`, signed with the account's
 * secret. Receivers verify `burnrate-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`
 * (`verifyWebhookSignature` below does exactly that) and dedupe on `burnrate-delivery` (the alert id).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { alertView, type Alert } from '#shared/alerting/model.ts';
import { addressProblem, checkWebhookTarget, specialRangeOf } from '#shared/net/special-addresses.ts';
import { toJson } from '#shared/http/json.ts';

export const SIGNATURE_HEADER = 'burnrate-signature';
export const DELIVERY_HEADER = 'burnrate-delivery';
export const WEBHOOK_USER_AGENT = 'Burnrate-Webhooks/1';
export const WEBHOOK_TIMEOUT_MS = 5_000;
/** The event type of the body; the alert's own type is `alert.type`. */
export const ALERT_EVENT_TYPE = 'alert.triggered';

export type SendOutcome = { ok: true } | { ok: false; error: string; permanent?: boolean };

const hmacHex = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');

/** The `burnrate-signature` header value for `body` sent at unix second `t`. */
/** `t=<t>,v1=<sig>` — one v1 per secret: during a rotation's grace period both the new and the previous secret sign. */
export function signWebhook(secrets: string | readonly string[], body: string, t: number): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${t}`, ...list.map((secret) => `v1=${hmacHex(secret, t, body)}`)].join(',');
}

/**
 * For receivers (and tests): true when `header` carries a v1 signature of `body` with `secret` whose timestamp
 * is within `toleranceSec` of `now` (either side). Compares in constant time.
 */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string | null | undefined,
  toleranceSec = 300,
  now: Date = new Date(),
): boolean {
  if (!header) return false;
  let t: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (name === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (t === undefined || signatures.length === 0) return false;
  if (Math.abs(Math.floor(now.getTime() / 1000) - t) > toleranceSec) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  return signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected));
}

/** The exact bytes that are signed and sent. */
export function webhookBody(alert: Alert): string {
  return toJson({ id: alert.id, type: ALERT_EVENT_TYPE, alert: alertView(alert) }); // amounts exact, as in responses
}

/**
 * The rule of shared/net/special-addresses.ts again (the URL was checked when saved; the table may have grown
 * since): anything it refuses is refused for good. Where a name resolves to is checked when connecting.
 */
export function checkWebhookUrl(url: string | undefined, allowInsecure: boolean): { ok: true; url: URL } | { ok: false; error: string } {
  if (!url) return { ok: false, error: 'the alert has no webhook URL' };
  const target = checkWebhookTarget(url, allowInsecure);
  return target.ok ? target : { ok: false, error: `the webhook URL ${target.reason}` };
}

// ---------------------------------------------------------------------------------------------------------------
// SSRF guard: the rule's URL was checked when it was saved, but a public NAME may resolve to a special address.
// The check runs inside the connection's own DNS lookup, so the address checked is the address connected to.

/** True for an address a webhook must never reach (any IANA special-purpose address). */
export function isNonPublicAddress(address: string): boolean {
  return addressProblem(address, false) !== undefined;
}

const PRIVATE_ADDRESS = 'EWEBHOOKPRIVATE';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * `dns.lookup` that fails unless every address is public (loopback too when `allowLoopback`; ONLY loopback when
 * `loopbackOnly`, for the local stack's `http:` receivers); for `http.request({lookup})`.
 */
function guardedLookup(allowLoopback: boolean, loopbackOnly: boolean): Lookup {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = (a: LookupAddress) =>
        loopbackOnly ? specialRangeOf(a.address)?.loopback !== true : addressProblem(a.address, allowLoopback) !== undefined;
      if (addresses.length === 0 || addresses.some(refused)) {
        return callback(Object.assign(new Error('the webhook host resolves to a non-public address'), { code: PRIVATE_ADDRESS }), []);
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      return callback(null, first!.address, first!.family);
    });
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Sending

export interface WebhookOptions {
  /** The account's signing secrets: the current one first, the previous one too while a rotation's grace lasts. */
  secrets: readonly string[];
  /** Local stack and tests (ALLOW_INSECURE_WEBHOOKS): loopback receivers allowed, and only they over http:. */
  allowInsecure: boolean;
  now?: Date;
  timeoutMs?: number;
}

/** One POST: 2xx is sent; any other status (redirects are not followed), a network error or the timeout is a retryable failure. */
export async function sendWebhook(alert: Alert, options: WebhookOptions): Promise<SendOutcome> {
  const target = checkWebhookUrl(alert.webhookUrl, options.allowInsecure);
  if (!target.ok) return { ok: false, error: target.error, permanent: true };
  // An IP literal is connected to without a lookup: checkWebhookUrl has checked it. A name is checked by the lookup.
  const guard = guardedLookup(options.allowInsecure, target.url.protocol === 'http:');

  const body = webhookBody(alert);
  const t = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body, 'utf8')),
    'user-agent': WEBHOOK_USER_AGENT,
    [DELIVERY_HEADER]: alert.id,
    [SIGNATURE_HEADER]: signWebhook(options.secrets, body, t),
  };
  try {
    const status = await post(target.url, headers, body, AbortSignal.timeout(timeoutMs), guard);
    if (status >= 200 && status < 300) return { ok: true };
    return { ok: false, error: `HTTP ${status}` };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === PRIVATE_ADDRESS) return { ok: false, error: 'the webhook host resolves to a non-public address', permanent: true };
    return { ok: false, error: networkError(error, timeoutMs) };
  }
}

/** The response status. The signal bounds the exchange up to the response's headers. */
function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal, guard: Lookup): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', headers, signal, lookup: guard as unknown as LookupFunction },
      (res) => {
        // The status decides; the body is drained in the background (the signal still bounds it).
        res.on('error', () => undefined);
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A short reason without the URL (it may carry a token): `timeout after 5 s`, `ECONNREFUSED`, ... */
function networkError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `timeout after ${timeoutMs / 1000} s`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code.slice(0, 40) : 'network error';
}
