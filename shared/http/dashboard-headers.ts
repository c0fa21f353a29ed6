/**
 * The dashboard's security headers, one definition for both servers of the app: the local gateway
 * (local/web.ts, on every HTML response) and CloudFront's response headers policy (infra/dashboard.ts, on every
 * response of the distribution). The Chromium journey runs the app under exactly this policy.
 */

/**
 * Content-Security-Policy. No inline or foreign script can run (the build has none: one module script from
 * /assets). `style-src 'unsafe-inline'` is for style attributes only: the screens and uPlot size bars and chart
 * parts with inline styles. The app talks to its own origin only (the API is under /api on the same origin).
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const REFERRER_POLICY = 'strict-origin-when-cross-origin';
export const PERMISSIONS_POLICY = 'camera=(), microphone=(), geolocation=()';
/** X-Frame-Options, for browsers without CSP frame-ancestors. */
export const FRAME_OPTIONS = 'DENY';
/** Strict-Transport-Security max-age (2 years, includeSubDomains) — HTTPS only, so CloudFront alone sends it. */
export const HSTS_MAX_AGE_SECONDS = 2 * 365 * 24 * 60 * 60;
