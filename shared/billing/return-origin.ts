/**
 * Checkout and the billing portal send the browser back to the dashboard. A dashboard on this machine answers at
 * `localhost`, `127.0.0.1` and `[::1]` alike, and a session lives in one origin's storage: a user who came from
 * `127.0.0.1` and is sent back to `localhost` lands on Sign in. So the return goes to the origin the request came from
 * when it is the configured dashboard's loopback twin (same scheme and port); any other origin is ignored and the
 * configured URLs are used as they are (no open redirect).
 */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `origin` when it is `appUrl`'s loopback twin (or `appUrl` itself); else undefined. */
export function returnOrigin(appUrl: string, origin: string | undefined): string | undefined {
  if (!appUrl || !origin) return undefined;
  let app: URL;
  let from: URL;
  try {
    app = new URL(appUrl);
    from = new URL(origin);
  } catch {
    return undefined;
  }
  if (from.origin !== origin) return undefined;
  if (from.origin === app.origin) return from.origin;
  const twin = LOOPBACK.has(app.hostname) && LOOPBACK.has(from.hostname) && app.protocol === from.protocol && app.port === from.port;
  return twin ? from.origin : undefined;
}

/**
 * A configured return URL sent back to `origin` (from `returnOrigin`): a URL inside the dashboard gets that origin; a
 * URL elsewhere (the local Stripe stand-in's pages, which forward to the dashboard) carries it as `return_origin`.
 */
export function returnUrl(url: string, appUrl: string, origin: string | undefined): string {
  if (!origin || !appUrl) return url;
  const app = new URL(appUrl).origin;
  if (origin === app && url.startsWith(app)) return url;
  if (url.startsWith(`${app}/`) || url === app) return origin + url.slice(app.length);
  return `${url}${url.includes('?') ? '&' : '?'}return_origin=${encodeURIComponent(origin)}`;
}
