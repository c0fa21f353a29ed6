/**
 * Calls to a provider's admin API: JSON over fetch, with the retry rules of docs/features/connections.md — a 429 waits
 * the `Retry-After` the provider sent (bounded), else backs off; 5xx and timeouts retry with backoff. A 401/403 is the
 * admin key refused (never retried). The admin key never appears in an error: provider messages are redacted.
 * The admin key goes to the provider's own origin only (docs/security.md, egress): a URL on any other origin is
 * refused before anything is sent, and a redirect is never followed (it is a bad response).
 */
export class ProviderRefused extends Error {
  override name = 'ProviderRefused';
  constructor(
    readonly status: number,
    /** What the provider said, redacted. */
    readonly providerMessage: string,
  ) {
    super(`The provider refused the admin key (${status}): ${providerMessage}`);
  }
}

/** The provider could not be reached, kept answering 5xx / 429, or timed out. */
export class ProviderUnavailable extends Error {
  override name = 'ProviderUnavailable';
}

/** Another 4xx, or a body that is not what the reference describes. */
export class ProviderBadResponse extends Error {
  override name = 'ProviderBadResponse';
}

/** Most bytes of one provider response body (pages.ts names every bound). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Which of Burnrate's bounds on a provider's answers was met (pages.ts). */
export type ReadLimit = 'body' | 'pages' | 'items' | 'repeat';

/** A provider's answer that passed one of Burnrate's bounds (`limit`): refused, with words that say which. */
export class ProviderLimitExceeded extends ProviderBadResponse {
  override name = 'ProviderLimitExceeded';
  constructor(
    readonly limit: ReadLimit,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A response's body as text, read as it streams and refused (the rest cancelled) once it passes `max` bytes — or at
 * once, when its content-length says it will: never a whole oversized body in memory.
 */
export async function readBody(res: Response, max: number, what: string): Promise<string> {
  const refuse = () =>
    new ProviderLimitExceeded('body', `The provider answered ${what} with a body over ${Math.round(max / 1024 / 1024)} MB, the most Burnrate reads of one answer; it was refused while it arrived.`);
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw refuse();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw refuse();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

export interface ProviderHttpOptions {
  /** Attempts per request (the first included). @default 5 */
  attempts?: number;
  /** The longest `Retry-After` honoured, in ms (a longer one is cut to this). @default 30000 */
  maxRetryAfterMs?: number;
  /** First backoff step in ms (doubles, with full jitter). @default 500 */
  backoffMs?: number;
  /** Per-request timeout. @default 20000 */
  timeoutMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Called once per HTTP request sent (benches count provider requests). */
  onRequest?: () => void;
  /** Awaited before each request is sent; what it throws ends the call unretried (a sync stopped by a pause or DELETE). */
  beforeRequest?: () => Promise<void>;
  /** The most bytes of one response body (refused past it while it streams). @default MAX_BODY_BYTES */
  maxBodyBytes?: number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Anything shaped like a secret key (`sk-…`) in a provider's words becomes `[redacted]`; the given secrets too. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out.replace(/sk-[A-Za-z0-9_*.\-]{6,}/g, '[redacted]').slice(0, 300);
}

/** The message of OpenAI's and Anthropic's error bodies (`{error: {message}}` both). */
function errorMessage(body: unknown, status: number): string {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' && message ? message : `HTTP ${status}`;
}

/** `Retry-After` in seconds (or an HTTP date), as ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface ProviderHttp {
  /** A read: the JSON body of a 2xx (a 2xx that is not JSON is a bad response). */
  getJson(url: URL): Promise<unknown>;
  /**
   * A call of the levers (a key's status, a project's limit), with the same retry rules and errors: the parsed body
   * of a 2xx (`{}` for an empty one); `undefined` for a 404 when `missingOk` (a limit that is not there).
   */
  send(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: URL, body?: unknown, opts?: { missingOk?: boolean }): Promise<unknown>;
}

/**
 * A JSON GET client for one admin key: `headers` carry the key; `secret` is redacted from anything it throws. Only
 * URLs of `base`'s origin (the provider's base URL, shared/config.ts) are fetched.
 */
export function providerHttp(base: string, headers: Record<string, string>, secret: string, options: ProviderHttpOptions = {}): ProviderHttp {
  const origin = new URL(base).origin;
  const attempts = options.attempts ?? 5;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  const backoffMs = options.backoffMs ?? 500;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? defaultSleep;
  const backoff = (attempt: number) => Math.random() * backoffMs * 2 ** attempt;

  async function request(method: string, url: URL, payload?: unknown, opts: { missingOk?: boolean; emptyOk?: boolean } = {}): Promise<unknown> {
      // Reads name the path; the levers' calls the method too (`POST /v1/…/spend_limit`).
      const what = method === 'GET' && !opts.emptyOk ? url.pathname : `${method} ${url.pathname}`;
      if (url.origin !== origin) throw new ProviderBadResponse(`Refused to send the admin key to ${url.origin}: the provider's API is ${origin}.`);
      let last = '';
      for (let attempt = 0; attempt < attempts; attempt++) {
        let res: Response;
        await options.beforeRequest?.();
        try {
          options.onRequest?.();
          // `manual`: a 3xx comes back as itself (below), never followed to wherever its Location points.
          res = await doFetch(url, {
            method,
            headers: { accept: 'application/json', ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
            ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
            redirect: 'manual',
            signal: AbortSignal.timeout(timeoutMs),
          });
        } catch (error) {
          last = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'could not be reached';
          if (attempt + 1 < attempts) await sleep(backoff(attempt));
          continue;
        }
        if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
          await res.body?.cancel();
          throw new ProviderBadResponse(`The provider answered ${url.pathname} with a redirect (${res.status}), which is not followed: the admin key goes to ${origin} only.`);
        }
        let text: string;
        try {
          text = await readBody(res, maxBodyBytes, what);
        } catch (error) {
          if (error instanceof ProviderLimitExceeded) throw error;
          // The connection broke mid-body, or the timeout fired while it arrived: retried like a failed request.
          last = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'could not be reached';
          if (attempt + 1 < attempts) await sleep(backoff(attempt));
          continue;
        }
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        if (res.ok) {
          if (body !== undefined) return body;
          if (opts.emptyOk && !text) return {};
          throw new ProviderBadResponse(`The provider answered ${what} with a body that is not JSON.`);
        }
        if (res.status === 404 && opts.missingOk) return undefined;
        const message = redact(errorMessage(body, res.status), [secret]);
        if (res.status === 401 || res.status === 403) throw new ProviderRefused(res.status, message);
        if (res.status === 429 || res.status >= 500) {
          last = `answered ${res.status}: ${message}`;
          if (attempt + 1 < attempts) {
            const wait = res.status === 429 ? retryAfterMs(res.headers.get('retry-after')) : undefined;
            await sleep(wait === undefined ? backoff(attempt) : Math.min(wait, maxRetryAfterMs));
          }
          continue;
        }
        throw new ProviderBadResponse(`The provider answered ${what} with ${res.status}: ${message}`);
      }
      throw new ProviderUnavailable(`The provider ${last} (${what}, ${attempts} attempts).`);
  }

  return {
    getJson: (url) => request('GET', url),
    send: (method, url, body, opts) => request(method, url, body, { ...opts, emptyOk: true }),
  };
}

/** A page of a report: `has_more` + `next_page` (both providers). `has_more` without a token is an error. */
export function nextPageOf(body: { has_more?: unknown; next_page?: unknown }, path: string): string | undefined {
  if (body.has_more !== true) return undefined;
  if (typeof body.next_page !== 'string' || body.next_page === '') {
    throw new ProviderBadResponse(`The provider said ${path} has more pages but gave no next_page.`);
  }
  return body.next_page;
}
