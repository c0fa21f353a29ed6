/**
 * The HTTP stack every API handler uses (middy):
 *   no-store → logger context → CORS headers → problem+json errors → auth → body/query/path parsing → your
 * function. A handler file is then a thin adapter: declare its schemas, call one domain function, return a reply.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import httpCors from '@middy/http-cors';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { $ZodType } from 'zod/v4/core';
import * as z from 'zod/mini';
import { config } from '#shared/config.ts';
import { injectLambdaContext, logger } from '#shared/http/logger.ts';
import { FeatureOff, HttpError } from '#shared/http/errors.ts';
import { CACHE_CONTROL, problemResponse } from '#shared/http/problem.ts';
import { jsonBody, MAX_BODY_BYTES, noBody } from '#shared/http/body.ts';
import { validate } from '#shared/http/validate.ts';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS } from '#shared/http/cors.ts';
import { toJson } from '#shared/http/json.ts';

const NO_PARAMETERS = z.strictObject({});

/**
 * Who may call: anyone (`none`), or whoever an authenticator accepts — `jwtAuth` (a Cognito ID token),
 * `ingestKeyAuth` (an ingest key), `stripeWebhookAuth` (a Stripe signature). Each handler imports only the one
 * it uses, so a bundle carries no verifier it does not need.
 */
export type Authenticator<T> = (event: APIGatewayProxyEventV2) => Promise<T>;
export type HandlerAuth = 'none' | Authenticator<unknown>;
type AuthOf<A> = A extends Authenticator<infer T> ? T : undefined;

export interface HandlerSpec<A extends HandlerAuth, B, Q, P> {
  auth: A;
  body?: $ZodType<B>;
  query?: $ZodType<Q>;
  params?: $ZodType<P>;
  maxBodyBytes?: number;
  /**
   * The body may be left out: an empty (or blank) body then parses as `{}` before validation, for endpoints whose
   * fields are all optional (`POST /ingest-keys`). A body that is sent is read exactly as without this option.
   */
  optionalBody?: boolean;
  /**
   * The authenticator reads the raw body itself (the Stripe webhook verifies a signature over its bytes): the body
   * is neither parsed here nor refused as a body on an operation without one.
   */
  rawBody?: true;
  /**
   * The route belongs to billing: in a deployment without it (env `BILLING=off`, set by the stack with
   * `-c billing=off`) it answers 503 problem+json `billing-off` before anything else.
   */
  billing?: true;
}

export interface HandlerInput<A extends HandlerAuth, B, Q, P> {
  auth: AuthOf<A>;
  body: B;
  query: Q;
  params: P;
  requestId: string;
  event: APIGatewayProxyEventV2;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** A body that is not JSON (e.g. text/csv), sent as is; `headers` give its content-type. */
  text?: string;
  headers?: Record<string, string>;
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const noContent = (): Reply => ({ status: 204 });

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

const requestIdOf = (event: Event) => event.requestContext?.requestId ?? '';

/** Maps every error once to RFC 9457 problem+json; logs 5xx with their cause, 4xx briefly. */
function problemErrors(): MiddlewareObj<Event, Result> {
  return {
    onError: (request) => {
      const error = request.error;
      if (error instanceof HttpError && error.status < 500) {
        logger.info('request refused', { status: error.status, problem: error.slug });
      } else {
        logger.error('request failed', error as Error);
      }
      request.response = problemResponse(error, requestIdOf(request.event));
    },
  };
}

/**
 * `Cache-Control: no-store` on EVERY response of the API, successes and problems alike (docs/api.md): tokens,
 * secrets and account data must never sit in a browser's or a proxy's cache. Set here, once, last.
 */
function noStore(): MiddlewareObj<Event, Result> {
  const apply = (request: { response: Result | null | undefined }) => {
    if (request.response) request.response = { ...request.response, headers: { ...request.response.headers, 'cache-control': CACHE_CONTROL } };
  };
  return { after: apply, onError: apply };
}

function toResult(reply: Reply, requestId: string): Result {
  const headers: Record<string, string> = { 'x-request-id': requestId, ...reply.headers };
  if (reply.text !== undefined) return { statusCode: reply.status, headers, body: reply.text };
  if (reply.body === undefined) return { statusCode: reply.status, headers };
  return {
    statusCode: reply.status,
    headers: { 'content-type': 'application/json', ...headers },
    body: toJson(reply.body), // money exact on the wire (shared/http/json.ts)
  };
}

const cors = () =>
  httpCors({
    origins: config().corsOrigins,
    headers: CORS_ALLOW_HEADERS.join(','),
    methods: CORS_ALLOW_METHODS.join(','),
    exposeHeaders: CORS_EXPOSE_HEADERS.join(','),
    maxAge: 600,
  });

export function httpHandler<A extends HandlerAuth, B = undefined, Q = undefined, P = undefined>(
  spec: HandlerSpec<A, B, Q, P>,
  fn: (input: HandlerInput<A, B, Q, P>) => Promise<Reply>,
) {
  const maxBodyBytes = spec.maxBodyBytes ?? MAX_BODY_BYTES;
  const inner = async (event: Event, _context: Context): Promise<Result> => {
    const requestId = requestIdOf(event);
    if (spec.billing && config().billingOff) {
      throw new FeatureOff('billing', 'Billing is off in this deployment: plans cannot be bought or changed here.');
    }
    const auth = spec.auth === 'none' ? undefined : await spec.auth(event);
    if (auth && typeof auth === 'object' && 'accountId' in auth) logger.appendKeys({ accountId: auth.accountId as string });
    // A body: JSON only (415 otherwise). No body: none or {} (400 otherwise).
    const body = spec.body ? validate(spec.body, jsonBody(event, maxBodyBytes, spec.optionalBody), 'body') : undefined;
    if (!spec.body && !spec.rawBody) noBody(event, maxBodyBytes);
    // Query strings are strict like bodies: a route without a query schema takes no parameters.
    const query = validate<unknown>(spec.query ?? NO_PARAMETERS, event.queryStringParameters ?? {}, 'query') as Q;
    const params = spec.params ? validate(spec.params, event.pathParameters ?? {}, 'path') : undefined;
    const reply = await fn({ auth, body, query, params, requestId, event } as HandlerInput<A, B, Q, P>);
    return toResult(reply, requestId);
  };
  // middy runs `after`/`onError` in reverse order of `use`: noStore, used first, sees the final response.
  return middy<Event, Result>()
    .use(noStore())
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(cors())
    .use(problemErrors())
    .handler(inner);
}
