/**
 * A local stand-in for API Gateway (HTTP API): serves shared/routes.ts under /api, answers CORS preflights,
 * emulates the JWT authorizer, and calls each route's Lambda handler in-process with a payload-format-2.0
 * event built the way AWS builds it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type {
  APIGatewayEventRequestContextJWTAuthorizer,
  APIGatewayEventRequestContextV2,
  APIGatewayProxyEventV2WithRequestContext,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { API_PREFIX, routeId, routes as routeTable, type Route } from '#shared/routes.ts';
import { bearerToken, verifier } from '#shared/access/verifier.ts';
import { config } from '#shared/config.ts';
import { db } from '#shared/db/client.ts';
import { HttpError, NotFound, PayloadTooLarge, Unauthorized } from '#shared/http/errors.ts';
import { CACHE_CONTROL, problemResponse } from '#shared/http/problem.ts';
import {
  CORS_ALLOW_HEADERS as SHARED_ALLOW_HEADERS,
  CORS_ALLOW_METHODS as SHARED_ALLOW_METHODS,
  CORS_EXPOSE_HEADERS as SHARED_EXPOSE_HEADERS,
} from '#shared/http/cors.ts';
import { staticFiles } from '#local/web.ts';

/** API Gateway's own cap is 10 MB, Lambda's 6 MB; the handlers enforce their 1 MB themselves. */
export const DEFAULT_BODY_LIMIT_BYTES = 6 * 1024 * 1024;
/** API Gateway HTTP API's integration timeout. */
const INTEGRATION_TIMEOUT_MS = 30_000;
const FUNCTIONS_DIR = fileURLToPath(new URL('../functions/', import.meta.url));
const CORS_ALLOW_HEADERS = [...SHARED_ALLOW_HEADERS, 'stripe-signature'].join(',');
const CORS_ALLOW_METHODS = SHARED_ALLOW_METHODS.join(',');
/** The same list API Gateway exposes (infra) and the handlers send (shared/http/cors.ts). */
export const CORS_EXPOSE_HEADERS = SHARED_EXPOSE_HEADERS.join(',');

type RequestContext = APIGatewayEventRequestContextV2 & { authorizer?: APIGatewayEventRequestContextJWTAuthorizer };
export type GatewayEvent = APIGatewayProxyEventV2WithRequestContext<RequestContext>;
export type LambdaHandler = (event: GatewayEvent, context: Context) => unknown;

export interface GatewayOptions {
  routes?: readonly Route[];
  /** One log line per request on stdout (default: on unless LOG_REQUESTS=0). */
  logRequests?: boolean;
  bodyLimitBytes?: number;
  /** Where handler `name` (`auth/register`) comes from; default: import `functions/<name>.ts`. For tests. */
  resolveHandler?: (name: string) => Promise<LambdaHandler>;
  /** The built dashboard (web/dist): served at `/`, its index.html for any other path outside `/api`. */
  webDir?: string;
  /**
   * Downloads outside `/api` (the export files' one-time links, local/export-files.ts): answers a request and returns
   * its status, or undefined when the path is not one of its.
   */
  downloads?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<number | undefined>;
}

export interface Gateway {
  server: Server;
  /** Imports every handler module now (errors are logged, not thrown): the first requests come faster. */
  preload(): Promise<void>;
}

interface CompiledRoute {
  route: Route;
  routeKey: string;
  pattern: RegExp;
  params: string[];
  /** Per segment: 0 literal, 1 {param}, 2 {greedy+}; literal segments win, like API Gateway. */
  rank: number[];
}

export function createGateway(options: GatewayOptions = {}): Gateway {
  const compiled = compileRoutes(options.routes ?? routeTable);
  const logRequests = options.logRequests ?? process.env.LOG_REQUESTS !== '0';
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const resolveHandler = options.resolveHandler ?? importHandler;
  const modules = new Map<string, Promise<LambdaHandler>>();
  const serveWeb = options.webDir ? staticFiles(options.webDir) : undefined;
  // Local only, COUNT_DB_REQUESTS=1 (the integration tests' stack): DynamoDB requests counted per API call.
  const dbCounter = process.env.COUNT_DB_REQUESTS === '1' ? dbRequestCounter() : undefined;

  /**
   * Loads each handler once, lazily: a broken module breaks only its own routes (500, logged). A failed load
   * is retried on the next request, which helps when the handler file appears later; a module that failed
   * further down its imports stays failed in Node's module cache until a restart.
   */
  function loadHandler(name: string): Promise<LambdaHandler> {
    let loading = modules.get(name);
    if (!loading) {
      loading = resolveHandler(name);
      loading.catch(() => modules.delete(name));
      modules.set(name, loading);
    }
    return loading;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<number> {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const rawPath = queryAt < 0 ? url : url.slice(0, queryAt);
    const rawQueryString = queryAt < 0 ? '' : url.slice(queryAt + 1);
    const method = (req.method ?? 'GET').toUpperCase();
    const cors = corsHeaders(req.headers.origin);

    const reply = (result: APIGatewayProxyStructuredResultV2) => send(res, result, requestId, cors);
    const problem = (error: unknown) => reply(problemResponse(error, requestId));

    const isApi = rawPath === API_PREFIX || rawPath.startsWith(`${API_PREFIX}/`);
    if (!isApi && options.downloads) {
      const status = await options.downloads(req, res, rawPath);
      if (status !== undefined) return status;
    }
    if (!isApi && serveWeb && (method === 'GET' || method === 'HEAD')) {
      const status = await serveWeb(req, res, rawPath);
      if (status !== undefined) return status;
    }

    if (method === 'OPTIONS' && (rawPath === API_PREFIX || rawPath.startsWith(`${API_PREFIX}/`))) {
      const preflight = cors['access-control-allow-origin']
        ? {
            ...cors,
            'access-control-allow-methods': CORS_ALLOW_METHODS,
            'access-control-allow-headers': CORS_ALLOW_HEADERS,
            'access-control-max-age': '600',
          }
        : {};
      return send(res, { statusCode: 204 }, requestId, preflight);
    }

    // `GET /api`: an index, so a person who opens the API's root finds where to go.
    if (rawPath === API_PREFIX && (method === 'GET' || method === 'HEAD')) {
      return reply({
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(apiIndex()),
      });
    }

    const matches = compiled.flatMap((c) => {
      const m = c.pattern.exec(rawPath);
      return m ? [{ compiled: c, values: m.slice(1) }] : [];
    });
    if (matches.length === 0) return problem(new NotFound(`No route matches ${method} ${rawPath}.`));
    const match = matches.find((m) => m.compiled.route.method === method);
    if (!match) {
      const allow = [...new Set(matches.map((m) => m.compiled.route.method)), 'OPTIONS'].join(', ');
      return problem(
        new HttpError(405, 'method-not-allowed', 'Method not allowed.', `${rawPath} does not accept ${method}.`, undefined, {
          allow,
        }),
      );
    }
    const { route, routeKey, params } = match.compiled;

    let pathParameters: Record<string, string> | undefined;
    try {
      pathParameters = params.length
        ? Object.fromEntries(params.map((name, i) => [name, decodeURIComponent(match.values[i] ?? '')]))
        : undefined;
    } catch {
      return problem(new NotFound(`No route matches ${method} ${rawPath}.`));
    }

    const body = await readBody(req, bodyLimit);
    if (body === 'too-large') {
      const status = problem(new PayloadTooLarge(bodyLimit));
      // Discard the rest so the client can finish sending and read the 413 (closing now would make it fail
      // with EPIPE instead); a client still sending after 2 s is cut off.
      req.resume();
      setTimeout(() => {
        if (!req.complete) req.socket.destroy();
      }, 2000).unref();
      return status;
    }

    const event = buildEvent({ req, method, rawPath, rawQueryString, routeKey, requestId, pathParameters, body });

    if (route.auth === 'jwt') {
      const token = bearerToken(event.headers.authorization);
      if (!token) return problem(new Unauthorized());
      let claims: Record<string, unknown>;
      try {
        claims = await verifier().verify(token);
      } catch {
        return problem(new Unauthorized());
      }
      event.requestContext.authorizer = { jwt: { claims: stringifyClaims(claims), scopes: null } };
    }

    let handler: LambdaHandler;
    try {
      handler = await loadHandler(route.handler);
    } catch (error) {
      console.error(`[gateway] cannot load the handler of ${routeKey} (functions/${route.handler}.ts):`, error);
      return problem(new Error('handler not loadable'));
    }

    let result: unknown;
    // With the DynamoDB request counter on, the invocation runs in its own store: its requests count there.
    const dbCounts: DbRequestCounts | undefined = dbCounter ? new Map() : undefined;
    const invoke = () => handler(event, lambdaContext(route));
    try {
      const invocation = dbCounter && dbCounts ? dbCounter.run(dbCounts, invoke) : invoke();
      result = await withTimeout(Promise.resolve(invocation), INTEGRATION_TIMEOUT_MS);
    } catch (error) {
      // Like Lambda behind API Gateway: an uncaught error is a bare 500, whatever it was.
      console.error(`[gateway] ${routeKey} (request ${requestId}) failed:`, error);
      return problem(new Error('handler failed'));
    }
    return reply(withDbRequestHeaders(toStructuredResult(result), dbCounts));
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    const requestId = newRequestId();
    handle(req, res, requestId)
      .catch((error: unknown) => {
        console.error(`[gateway] request ${requestId} failed:`, error);
        if (!res.headersSent) return send(res, problemResponse(new Error('gateway'), requestId), requestId, {});
        res.destroy();
        return 500;
      })
      .then((status) => {
        if (logRequests) {
          const ms = (performance.now() - started).toFixed(0);
          process.stdout.write(`${req.method} ${(req.url ?? '/').split('?')[0]} ${status} ${ms}ms\n`);
        }
      });
  });
  // A request Node refuses before any route runs (headers past 16 KB, a malformed request line) still gets a
  // problem+json answer, like every other error.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify({
      type: tooLarge ? '/problems/headers-too-large' : '/problems/malformed-request',
      title: tooLarge ? 'The request headers are too large.' : 'The request could not be read.',
      status: tooLarge ? 431 : 400,
    });
    socket.end(
      `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
        `content-type: application/problem+json\r\ncache-control: ${CACHE_CONTROL}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  // Keep-alive connections of test clients must not hold `server.close()` for long.
  server.keepAliveTimeout = 5000;

  return {
    server,
    async preload() {
      const names = [...new Set(compiled.map((c) => c.route.handler))];
      await Promise.all(
        names.map((name) =>
          loadHandler(name).catch((error: unknown) => {
            const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
            console.error(`[gateway] warning: functions/${name}.ts is not loadable yet: ${reason}`);
          }),
        ),
      );
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// DynamoDB request counting (local only: COUNT_DB_REQUESTS=1; nothing of it exists in the AWS code paths)

/** Command name (`Query`, `BatchGetItem`) → requests made by one handler invocation. */
type DbRequestCounts = Map<string, number>;

let dbRequestStore: AsyncLocalStorage<DbRequestCounts> | undefined;

/**
 * Adds ONE middleware to this process's `db()` client (once per process, however many gateways are made) that
 * counts each command sent into the store of the handler invocation in progress. The handlers run in this
 * process and share that one client, so AsyncLocalStorage attributes every request to its API call exactly,
 * concurrent calls included. The count is of commands sent, not of SDK retry attempts (those happen below the
 * `initialize` step); a BatchGetItem re-sent for unprocessed keys is a second command, and counts.
 */
function dbRequestCounter(): AsyncLocalStorage<DbRequestCounts> {
  if (dbRequestStore) return dbRequestStore;
  const store = new AsyncLocalStorage<DbRequestCounts>();
  db().middlewareStack.add(
    (next, context) => (args) => {
      const counts = store.getStore();
      if (counts) {
        const command = (context.commandName ?? 'unknown').replace(/Command$/, '');
        counts.set(command, (counts.get(command) ?? 0) + 1);
      }
      return next(args);
    },
    { step: 'initialize', name: 'requestCounter', override: true },
  );
  dbRequestStore = store;
  return store;
}

/** `x-dynamodb-requests: 2` and `x-dynamodb-commands: Query=1,BatchGetItem=1` on the response (when counting). */
function withDbRequestHeaders(
  result: APIGatewayProxyStructuredResultV2,
  counts: DbRequestCounts | undefined,
): APIGatewayProxyStructuredResultV2 {
  if (!counts) return result;
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const commands = [...counts].map(([name, n]) => `${name}=${n}`).join(',');
  return {
    ...result,
    headers: { ...result.headers, 'x-dynamodb-requests': String(total), 'x-dynamodb-commands': commands },
  };
}

/** `auth/register` → the `handler` export of functions/auth/register.ts. */
async function importHandler(name: string): Promise<LambdaHandler> {
  const file = join(FUNCTIONS_DIR, `${name}.ts`);
  const mod = (await import(pathToFileURL(file).href)) as { handler?: unknown };
  if (typeof mod.handler !== 'function') throw new Error(`${file} does not export a function named handler`);
  return mod.handler as LambdaHandler;
}

// ---------------------------------------------------------------------------------------------------------------
// Routing

export function compileRoutes(routes: readonly Route[]): CompiledRoute[] {
  const compiled = routes.map((route): CompiledRoute => {
    const fullPath = `${API_PREFIX}${route.path}`;
    const params: string[] = [];
    const rank: number[] = [];
    const source = fullPath
      .split('/')
      .map((segment) => {
        const param = /^\{([A-Za-z0-9_]+)(\+)?\}$/.exec(segment);
        if (!param) {
          rank.push(0);
          return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        }
        params.push(param[1]!);
        rank.push(param[2] ? 2 : 1);
        return param[2] ? '(.+)' : '([^/]+)';
      })
      .join('/');
    return { route, routeKey: `${route.method} ${fullPath}`, pattern: new RegExp(`^${source}$`), params, rank };
  });
  return compiled.sort((a, b) => {
    for (let i = 0; i < Math.min(a.rank.length, b.rank.length); i++) {
      const diff = a.rank[i]! - b.rank[i]!;
      if (diff !== 0) return diff;
    }
    return b.rank.length - a.rank.length;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The event

interface EventParts {
  req: IncomingMessage;
  method: string;
  rawPath: string;
  rawQueryString: string;
  routeKey: string;
  requestId: string;
  pathParameters: Record<string, string> | undefined;
  body: Buffer | undefined;
}

function buildEvent(parts: EventParts): GatewayEvent {
  const { req, method, rawPath, rawQueryString, routeKey, requestId, pathParameters, body } = parts;
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    // Payload 2.0 moves cookies to `cookies` and drops the header.
    if (name === 'cookie') {
      cookies.push(...value.split(';').map((c) => c.trim()).filter(Boolean));
      continue;
    }
    headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${sourceIp}` : sourceIp;
  headers['x-forwarded-proto'] ??= 'http';
  headers['x-forwarded-port'] ??= String(req.socket.localPort ?? '');

  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    query[name] = name in query ? `${query[name]},${value}` : value;
  }

  const domainName = headers.host ?? 'localhost';
  const now = new Date();
  const textual = body !== undefined && isTextual(headers['content-type']);
  const event: GatewayEvent = {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split(/[.:]/)[0] ?? domainName,
      http: {
        method,
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: body !== undefined && !textual,
  };
  if (cookies.length) event.cookies = cookies;
  if (Object.keys(query).length) event.queryStringParameters = query;
  if (pathParameters) event.pathParameters = pathParameters;
  if (body !== undefined) event.body = textual ? body.toString('utf8') : body.toString('base64');
  return event;
}

/** The content types API Gateway passes as text; anything else (forms and no type included) arrives base64. */
function isTextual(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/javascript'
  );
}

/** The JWT authorizer hands claims over as strings: numbers and booleans printed, arrays as `[a b]`. */
function stringifyClaims(claims: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(claims).map(([name, value]) => [
      name,
      typeof value === 'string'
        ? value
        : Array.isArray(value)
          ? `[${value.join(' ')}]`
          : typeof value === 'object' && value !== null
            ? JSON.stringify(value)
            : String(value),
    ]),
  );
}

function lambdaContext(route: Route): Context {
  const functionName = `burnrate-local-${routeId(route)}`;
  const deadline = Date.now() + INTEGRATION_TIMEOUT_MS;
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${config().region}:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `${day}/[$LATEST]local`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Body and response

/** Reads the body up to `limit` bytes; a Content-Length past it is refused before reading anything. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined | 'too-large'> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) return 'too-large';
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        chunks.length = 0;
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(size === 0 ? undefined : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** A handler may return a structured result, or any value that API Gateway then sends as JSON with 200. */
function toStructuredResult(result: unknown): APIGatewayProxyStructuredResultV2 {
  if (typeof result === 'object' && result !== null && 'statusCode' in result) {
    return result as APIGatewayProxyStructuredResultV2;
  }
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: typeof result === 'string' ? result : JSON.stringify(result ?? null),
  };
}

function send(
  res: ServerResponse,
  result: APIGatewayProxyStructuredResultV2,
  requestId: string,
  cors: Record<string, string>,
): number {
  const status = result.statusCode ?? 200;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    const lower = name.toLowerCase();
    // With CORS configured on the API, API Gateway ignores the integration's CORS headers and sends its own.
    if (!lower.startsWith('access-control-')) headers[lower] = String(value);
  }
  for (const [name, value] of Object.entries(cors)) {
    headers[name] = name === 'vary' && headers.vary ? `${headers.vary}, ${value}` : value;
  }
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  headers['apigw-requestid'] = requestId;
  // Every answer of the API, the gateway's own (404, 405, 413, preflights) included, is never cached.
  headers['cache-control'] = CACHE_CONTROL;
  const body =
    result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  headers['content-length'] = String(body.length);
  res.writeHead(status, headers);
  res.end(body);
  return status;
}

function corsHeaders(origin: string | undefined): Record<string, string> {
  const allowed = config().corsOrigins;
  if (allowed.includes('*')) {
    return { 'access-control-allow-origin': '*', 'access-control-expose-headers': CORS_EXPOSE_HEADERS };
  }
  if (origin && allowed.includes(origin)) {
    return {
      'access-control-allow-origin': origin,
      'access-control-expose-headers': CORS_EXPOSE_HEADERS,
      vary: 'origin',
    };
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------------------
// Small things

/** The body of `GET /api`. */
export function apiIndex() {
  return {
    name: 'Burnrate API',
    links: {
      health: { href: `${API_PREFIX}/health`, description: 'Liveness: 200 {"status":"ok"} once every service is ready.' },
      openapi: { href: `${API_PREFIX}/openapi.json`, description: 'The OpenAPI 3.1 document of every endpoint.' },
    },
  };
}

/** API Gateway's request ids look like `JKJaXmPLvHcESHA=`; base64url keeps them safe in a URL path. */
function newRequestId(): string {
  return randomBytes(12).toString('base64url');
}

/** `12/Mar/2020:19:03:58 +0000`, the format of requestContext.time. */
function clfTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`handler timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
