/**
 * The local gateway itself: routing, CORS, body limits, the JWT authorizer and the payload-2.0 event it builds.
 * The first block talks to the stack of global-setup.ts; the second runs a gateway in this process with
 * stand-in handlers, to look at the exact event a handler receives.
 */
import { once } from 'node:events';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { resetConfig } from '#shared/config.ts';
import type { Route } from '#shared/routes.ts';
import { createGateway, type GatewayEvent, type LambdaHandler } from '#local/gateway.ts';
import { api, registerUser, stack, uniqueEmail } from './harness.ts';
import {
  cognitoUser,
  expiredToken,
  foreignSignedToken,
  signAsCognitoLocal,
  tamper,
  unsignedToken,
  validClaims,
  type CognitoSession,
} from './tokens.ts';

const PROBLEM = 'application/problem+json';

// ------------------------------------------------------------------------------------------------

describe('the local gateway (running stack)', () => {
  let session: CognitoSession;
  beforeAll(async () => {
    session = await cognitoUser(stack(), uniqueEmail('gw'));
  });

  it('answers GET /api/health with 200 {"status":"ok"}', async () => {
    const res = await api('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers.get('apigw-requestid')).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });

  it('answers an unknown path with 404 problem+json', async () => {
    for (const path of ['/no-such-thing', '/health/extra', '/']) {
      const res = await api(path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
      expect(res.body).toMatchObject({ type: '/problems/not-found', status: 404 });
    }
    // Outside /api the dashboard answers (its index.html), never the API.
    const outside = await fetch(stack().apiUrl.replace(/\/api$/, '/health'));
    expect(outside.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await outside.text()).not.toContain('"status"');
  });

  it('answers a known path with another method with 405 and an Allow header', async () => {
    const res = await api('/health', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect(res.headers.get('allow')).toBe('GET, OPTIONS');
    expect(res.body).toMatchObject({ type: '/problems/method-not-allowed', status: 405 });
  });

  it('answers a CORS preflight itself', async () => {
    const res = await api('/budgets/bud_1', {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,PATCH,DELETE,OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization,content-type,x-api-key,stripe-signature');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    const get = await api('/health', { headers: { origin: 'http://localhost:5173' } });
    expect(get.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers 413 problem+json for a body past the gateway limit, without reaching the handler', async () => {
    const res = await api('/auth/register', { method: 'POST', rawBody: `{"email":"${'x'.repeat(7 * 1024 * 1024)}"}` });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect((await api('/health')).status).toBe(200);
  });

  describe('GET /api/auth/me answers 401 problem+json before any handler runs', () => {
    const cases: Array<[string, () => string | undefined]> = [
      ['no token', () => undefined],
      ['garbage', () => 'garbage'],
      ['three garbage parts', () => 'aaa.bbb.ccc'],
      ['a tampered payload', () => tamper(session.idToken, { 'custom:accountId': 'br_01JZ3N5Q8W0000000000000002' })],
      ['alg none', () => unsignedToken(validClaims(stack()))],
      ['a foreign RSA key with the right kid and claims', () => foreignSignedToken(validClaims(stack()))],
      ['an expired token signed with the real key', () => expiredToken(validClaims(stack()))],
      ['another audience, signed with the real key', () => signAsCognitoLocal({ ...validClaims(stack()), aud: 'some-other-client' })],
      ['an access token instead of an ID token', () => session.accessToken],
    ];

    it.each(cases)('%s', async (_name, token) => {
      const res = await api('/auth/me', { token: token() });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.body).toMatchObject({ type: '/problems/unauthorized', status: 401 });
      expect(res.body.instance).toBe(`/requests/${res.headers.get('apigw-requestid')}`);
    });

    it('while a real token gets through to the handler', async () => {
      const user = await registerUser();
      const res = await api('/auth/me', { token: user.token });
      expect(res.status).toBe(200);
    });
  });
});

// ------------------------------------------------------------------------------------------------

describe('the event a handler receives (gateway in this process, stand-in handlers)', () => {
  const testRoutes: Route[] = [
    { method: 'POST', path: '/echo/{id}', handler: 'echo', auth: 'none', table: [] },
    { method: 'GET', path: '/echo/fixed', handler: 'fixed', auth: 'none', table: [] },
    { method: 'GET', path: '/private', handler: 'echo', auth: 'jwt', table: [] },
    { method: 'GET', path: '/throws', handler: 'throws', auth: 'none', table: [] },
    { method: 'GET', path: '/missing', handler: 'missing', auth: 'none', table: [] },
    { method: 'GET', path: '/binary', handler: 'binary', auth: 'none', table: [] },
    { method: 'GET', path: '/plain', handler: 'plain', auth: 'none', table: [] },
  ];
  const handlers: Record<string, LambdaHandler> = {
    echo: (event, context) => ({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event, context: { ...context, remaining: context.getRemainingTimeInMillis() } }),
    }),
    fixed: () => ({ statusCode: 200, body: 'fixed' }),
    throws: async () => {
      throw new Error('secret database password is hunter2');
    },
    binary: () => ({
      statusCode: 200,
      headers: { 'content-type': 'application/octet-stream', 'x-count': 3 as unknown as string },
      cookies: ['a=1; Path=/', 'b=2; HttpOnly'],
      body: Buffer.from([0, 1, 2, 255]).toString('base64'),
      isBase64Encoded: true,
    }),
    plain: () => ({ hello: 'world' }),
  };

  let base = '';
  let close = async () => {};
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    const s = stack();
    Object.assign(process.env, {
      AWS_REGION: s.region,
      COGNITO_ENDPOINT: s.cognitoEndpoint,
      USER_POOL_ID: s.userPoolId,
      USER_POOL_CLIENT_ID: s.userPoolClientId,
      CORS_ORIGINS: 'https://app.example.com',
    });
    resetConfig();
    const gateway = createGateway({
      routes: testRoutes,
      logRequests: false,
      bodyLimitBytes: 1024,
      resolveHandler: async (name) => {
        const handler = handlers[name];
        if (!handler) throw new Error(`no module functions/${name}.ts`);
        return handler;
      },
    });
    gateway.server.listen(0, '127.0.0.1');
    await once(gateway.server, 'listening');
    base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => gateway.server.close(() => resolve()));
  });
  afterAll(async () => {
    await close();
    process.env = savedEnv;
    resetConfig();
  });

  /** A POST whose header lines are sent exactly as given (repeats included). */
  function rawRequest(path: string, headerLines: Array<[string, string]>, body: string) {
    return new Promise<{ event: GatewayEvent; context: Record<string, unknown> }>((resolve, reject) => {
      const req = request(`${base}${path}`, { method: 'POST' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            expect(res.statusCode).toBe(200);
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (error) {
            reject(error);
          }
        });
      });
      req.on('error', reject);
      const grouped = new Map<string, string[]>();
      for (const [name, value] of headerLines) grouped.set(name.toLowerCase(), [...(grouped.get(name.toLowerCase()) ?? []), value]);
      for (const [name, values] of grouped) req.setHeader(name, values.length === 1 ? values[0]! : values);
      req.end(body);
    });
  }

  async function echo(path: string, init: RequestInit = {}) {
    const res = await fetch(`${base}${path}`, { method: 'POST', ...init });
    expect(res.status).toBe(200);
    return (await res.json()) as { event: GatewayEvent; context: Record<string, unknown> };
  }

  it('builds a payload-2.0 event like API Gateway', async () => {
    // node:http, not fetch: fetch folds a repeated header into one line before sending it.
    const { event, context } = await rawRequest(
      '/api/echo/a%20b%2Fc?x=1&y=two%20words&x=2&empty=',
      [
        ['Content-Type', 'application/json'],
        ['X-Custom', 'one'],
        ['x-custom', 'two'],
        ['Cookie', 'c1=v1; c2=v2'],
        ['User-Agent', 'gateway-test'],
      ],
      '{"n":1}',
    );
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /api/echo/{id}',
      rawPath: '/api/echo/a%20b%2Fc',
      rawQueryString: 'x=1&y=two%20words&x=2&empty=',
      cookies: ['c1=v1', 'c2=v2'],
      queryStringParameters: { x: '1,2', y: 'two words', empty: '' },
      pathParameters: { id: 'a b/c' },
      body: '{"n":1}',
      isBase64Encoded: false,
      requestContext: {
        accountId: expect.any(String),
        apiId: expect.any(String),
        domainName: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
        domainPrefix: '127',
        http: {
          method: 'POST',
          path: '/api/echo/a%20b%2Fc',
          protocol: 'HTTP/1.1',
          sourceIp: '127.0.0.1',
          userAgent: 'gateway-test',
        },
        requestId: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
        routeKey: 'POST /api/echo/{id}',
        stage: '$default',
        time: expect.stringMatching(/^\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000$/),
        timeEpoch: expect.any(Number),
      },
    });
    expect(event.headers['content-type']).toBe('application/json');
    expect(event.headers['x-custom']).toBe('one,two');
    expect(event.headers.cookie).toBeUndefined();
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(event.requestContext.authorizer).toBeUndefined();
    expect(Math.abs(event.requestContext.timeEpoch - Date.now())).toBeLessThan(10_000);
    expect(context).toMatchObject({
      functionName: expect.stringContaining('Echo'),
      awsRequestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      remaining: expect.any(Number),
    });
  });

  it('leaves out cookies, query and path parameters and body when there are none', async () => {
    const res = await fetch(`${base}/api/private`, { headers: { authorization: 'Bearer x.y.z' } });
    expect(res.status).toBe(401);
    const { event } = await echo('/api/echo/plain');
    expect(event.rawQueryString).toBe('');
    expect('cookies' in event).toBe(false);
    expect('queryStringParameters' in event).toBe(false);
    expect('body' in event).toBe(false);
    expect(event.isBase64Encoded).toBe(false);
  });

  it('prefers a literal segment over a parameter', async () => {
    const res = await fetch(`${base}/api/echo/fixed`);
    expect(await res.text()).toBe('fixed');
  });

  it('base64-encodes a body that is not text', async () => {
    const { event } = await echo('/api/echo/1', {
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 1, 2, 255]),
    });
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body!, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
    const form = await echo('/api/echo/1', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'plan=GROWTH',
    });
    expect(form.event.isBase64Encoded).toBe(true);
    expect(Buffer.from(form.event.body!, 'base64').toString()).toBe('plan=GROWTH');
    const text = await echo('/api/echo/1', { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'héllo' });
    expect(text.event).toMatchObject({ body: 'héllo', isBase64Encoded: false });
  });

  it('hands verified claims to a jwt route as strings, like the JWT authorizer', async () => {
    const session = await cognitoUser(stack(), uniqueEmail('gw'));
    const res = await fetch(`${base}/api/private`, { headers: { authorization: `Bearer ${session.idToken}` } });
    expect(res.status).toBe(200);
    const { event } = (await res.json()) as { event: GatewayEvent };
    const jwt = event.requestContext.authorizer?.jwt;
    expect(jwt?.scopes).toBeNull();
    expect(jwt?.claims).toMatchObject({
      email: session.email,
      token_use: 'id',
      email_verified: 'true',
      aud: stack().userPoolClientId,
      'custom:accountId': 'br_01JZ3N5Q8W0000000000000000',
      'custom:userId': 'usr_01JZ3N5Q8W0000000000000000',
      exp: expect.stringMatching(/^\d+$/),
    });
  });

  it('answers 500 problem+json without the error text when a handler throws or cannot be loaded', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    onTestFinished(() => logged.mockRestore());
    for (const path of ['/api/throws', '/api/missing']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
      const text = await res.text();
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('functions/');
      expect(JSON.parse(text)).toMatchObject({ type: '/problems/internal-error', status: 500 });
    }
    // ... but the log has it.
    expect(logged.mock.calls.flat().map(String).join('\n')).toContain('hunter2');
  });

  it('writes back a structured result: base64 body, cookies, header values as strings', async () => {
    const res = await fetch(`${base}/api/binary`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(res.headers.get('x-count')).toBe('3');
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
  });

  it('sends any other return value as JSON with 200', async () => {
    const res = await fetch(`${base}/api/plain`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ hello: 'world' });
  });

  it('refuses a body past the limit with 413, declared or streamed', async () => {
    const declared = await fetch(`${base}/api/echo/1`, { method: 'POST', body: 'x'.repeat(2048) });
    expect(declared.status).toBe(413);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(512).fill(120));
        controller.close();
      },
    });
    const streamed = await fetch(`${base}/api/echo/1`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(streamed.headers.get('content-type')).toBe(PROBLEM);
  });

  it('allows only the configured CORS origins', async () => {
    const preflight = (origin: string) =>
      fetch(`${base}/api/echo/1`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const allowed = await preflight('https://app.example.com');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('vary')).toBe('origin');
    const other = await preflight('https://evil.example.com');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('requests Node refuses before any route', () => {
  it('answers headers past 16 KB with 431 problem+json', async () => {
    const res = await fetch(`${stack().apiUrl}/health`, { headers: { 'x-padding': 'x'.repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(((await res.json()) as { status: number }).status).toBe(431);
  });
});
