/**
 * The CORS settings of the API, ONE copy read by the handlers (shared/http/handler.ts), the local gateway
 * (local/gateway.ts) and the HTTP API's CORS configuration (infra/burnrate-stack.ts). In AWS, API Gateway drops the
 * handler's CORS headers and sends its own: without `ExposeHeaders` there, a browser cannot read these headers.
 */

/** Response headers a browser script may read: the request id to quote, when to retry, where a creation lives. */
export const CORS_EXPOSE_HEADERS = ['x-request-id', 'apigw-requestid', 'retry-after', 'location'] as const;

/** Request headers the dashboard sends. */
export const CORS_ALLOW_HEADERS = ['authorization', 'content-type', 'x-api-key'] as const;

export const CORS_ALLOW_METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] as const;
