/**
 * The write calls of the levers: JSON over fetch to the provider's own origin only (like the reads of
 * shared/connections/http.ts), with the admin key redacted from anything thrown. A 401/403 is the admin key refused
 * (a read-only key, a key without the scope): `ProviderRefused`, never retried; another 4xx is `ProviderBadResponse`;
 * 429 and 5xx are retried a few times with backoff, then `ProviderUnavailable`.
 */
import { ProviderBadResponse, ProviderRefused, ProviderUnavailable, redact, retryAfterMs } from '#shared/connections/http.ts';

export interface LeverHttpOptions {
  /** Attempts per call (the first included). @default 3 */
  attempts?: number;
  /** First backoff step in ms. @default 300 */
  backoffMs?: number;
  /** Per-request timeout. @default 15000 */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface LeverHttp {
  /** The parsed body of a 2xx; `undefined` for a 404 when `missingOk`. */
  send(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, opts?: { missingOk?: boolean }): Promise<unknown>;
}

const errorMessage = (body: unknown, status: number) => {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' && message ? message : `HTTP ${status}`;
};

export function leverHttp(base: string, headers: Record<string, string>, secret: string, options: LeverHttpOptions = {}): LeverHttp {
  const origin = new URL(base).origin;
  const attempts = options.attempts ?? 3;
  const backoffMs = options.backoffMs ?? 300;
  const doFetch = options.fetch ?? fetch;
  return {
    async send(method, path, body, opts = {}) {
      const url = new URL(`${base}${path}`);
      if (url.origin !== origin) throw new ProviderBadResponse(`Refused to send the admin key to ${url.origin}: the provider's API is ${origin}.`);
      let last = '';
      for (let attempt = 0; attempt < attempts; attempt++) {
        let res: Response;
        try {
          res = await doFetch(url, {
            method,
            headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
            body: body === undefined ? undefined : JSON.stringify(body),
            redirect: 'manual',
            signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
          });
        } catch {
          last = 'could not be reached';
          await new Promise((r) => setTimeout(r, Math.random() * backoffMs * 2 ** attempt));
          continue;
        }
        const text = await res.text();
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        if (res.ok) return parsed ?? {};
        const message = redact(errorMessage(parsed, res.status), [secret]);
        if (res.status === 404 && opts.missingOk) return undefined;
        if (res.status === 401 || res.status === 403) throw new ProviderRefused(res.status, message);
        if (res.status === 429 || res.status >= 500) {
          last = `answered ${res.status}: ${message}`;
          const wait = retryAfterMs(res.headers.get('retry-after'));
          if (attempt + 1 < attempts) await new Promise((r) => setTimeout(r, Math.min(wait ?? Math.random() * backoffMs * 2 ** attempt, 5000)));
          continue;
        }
        throw new ProviderBadResponse(`The provider answered ${method} ${url.pathname} with ${res.status}: ${message}`);
      }
      throw new ProviderUnavailable(`The provider ${last} (${method} ${url.pathname}, ${attempts} attempts).`);
    },
  };
}
