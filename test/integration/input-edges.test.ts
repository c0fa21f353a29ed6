/**
 * Input edges against the running stack (issue 9 item 6): query dates outside 2000–2099, lone surrogates in any
 * string, and `Cache-Control: no-store` on every answer — the handlers' and the gateway's own.
 */
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, registerUser, stack, type RegisteredUser } from './harness.ts';

const PROBLEM = 'application/problem+json';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let user: RegisteredUser;
let ingestKey: string;
let hash: string;

const event = (extra: Record<string, unknown> = {}) => ({
  requestId: randomUUID(),
  keyHash: hash,
  provider: 'openai',
  model: 'gpt-4o-mini',
  inputTokens: 10,
  outputTokens: 5,
  ...extra,
});
const ingest = (events: unknown[]) => api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events } });

beforeAll(async () => {
  user = await registerUser();
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'edges' } });
  expect(res.status).toBe(201);
  ingestKey = res.body.key;
  hash = sha256(`sk-edges-${randomUUID()}`);
  expect((await ingest([event()])).status).toBe(200);
});

describe('query dates lie in 2000-01-01…2099-12-31', () => {
  it.each([
    ['to', '?to=9999-12-31'],
    ['to', '?to=2100-01-01'],
    ['from', '?from=1999-12-31&to=2000-01-05'],
    ['from', '?from=0000-01-01'],
    ['to', '?to=2024-02-30'],
  ])('%s out of range or not a date (%s) → 400 problem+json naming it', async (field, query) => {
    const res = await api(`/keys/${hash}${query}`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers.get('content-type')).toBe(PROBLEM);
    expect(res.body.errors).toContainEqual({ path: `query.${field}`, message: `${field} must be a date YYYY-MM-DD from 2000-01-01 to 2099-12-31.` });
  });

  it('the ends of the range are accepted', async () => {
    expect((await api(`/keys/${hash}?from=2000-01-01&to=2000-01-31`, { token: user.token })).status).toBe(200);
    const end = await api(`/keys/${hash}?to=2099-12-31`, { token: user.token });
    expect(end.status).toBe(200);
    expect(end.body.breakdown.from).toBe('2099-12-01');
    expect(end.body.breakdown.daily).toHaveLength(31);
  });
});

describe('strings must be well-formed Unicode', () => {
  it.each([
    ['requestId', { requestId: 'a\ud800b' }],
    ['model', { model: 'gpt\udfff' }],
    ['keyHint', { keyHint: '\udc00abc' }],
  ])('a lone surrogate in an event’s %s → 400 naming the field, nothing stored', async (field, extra) => {
    const requestId = randomUUID();
    const res = await ingest([event({ requestId, ...extra })]);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors).toEqual([{ path: `events.0.${field}`, message: expect.stringContaining('well-formed Unicode') }]);
    // A surrogate PAIR (an emoji) is fine: the same event without the lone half is taken.
    const ok = await ingest([event({ model: 'gpt-😀' })]);
    expect(ok.status).toBe(200);
    expect(ok.body.accepted).toBe(1);
  });

  it('in any other body too', async () => {
    const label = await api(`/keys/${hash}`, { method: 'PATCH', token: user.token, body: { label: 'x\ud83d' } });
    expect(label.status).toBe(400);
    expect(label.body.errors).toEqual([{ path: 'label', message: expect.stringContaining('well-formed Unicode') }]);
    const register = await api('/auth/register', {
      method: 'POST',
      body: { email: 'a@example.com', password: 'Passw0rdX', firstName: '\udc00', lastName: 'L', companyName: 'C' },
    });
    expect(register.status).toBe(400);
    expect(register.body.errors[0].path).toBe('firstName');
  });
});

describe('Cache-Control: no-store on every answer', () => {
  it('on answers carrying tokens and secrets', async () => {
    const email = `edges-${randomUUID().slice(0, 8)}@example.com`;
    const password = 'Passw0rdEdges';
    const register = await api('/auth/register', {
      method: 'POST',
      body: { email, password, firstName: 'A', lastName: 'B', companyName: 'C' },
    });
    expect(register.status).toBe(201);
    expect(register.headers.get('cache-control')).toBe('no-store');
    const login = await api('/auth/login', { method: 'POST', body: { email, password } });
    expect(login.status).toBe(200);
    expect(login.headers.get('cache-control')).toBe('no-store');
    const refresh = await api('/auth/refresh', { method: 'POST', body: { refreshToken: login.body.refreshToken } });
    expect(refresh.status).toBe(200);
    expect(refresh.headers.get('cache-control')).toBe('no-store');
    const key = await api('/ingest-keys', { method: 'POST', token: register.body.token, body: {} });
    expect(key.status).toBe(201);
    expect(key.headers.get('cache-control')).toBe('no-store');
    const me = await api('/auth/me', { token: register.body.token });
    expect(me.headers.get('cache-control')).toBe('no-store');
  });

  it('on problems, the gateway’s own answers, health and the OpenAPI document', async () => {
    const answers = [
      await api('/keys', {}), // 401 from the authorizer
      await api('/no-such-route'), // 404
      await api('/health', { method: 'DELETE' }), // 405
      await api('/auth/register', { method: 'POST', rawBody: '{' }), // 400 from the handler
      await api('/auth/register', { method: 'POST', rawBody: `{"email":"${'x'.repeat(7 * 1024 * 1024)}"}` }), // 413
      await api('/health'),
      await api('/openapi.json'),
      await api('/health', { method: 'OPTIONS', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' } }),
    ];
    expect(answers.map((r) => r.status)).toEqual([401, 404, 405, 400, 413, 200, 200, 204]);
    for (const res of answers) expect(res.headers.get('cache-control'), String(res.status)).toBe('no-store');
    // A request Node refuses before routing (headers past 16 KB) too.
    const big = await fetch(`${stack().apiUrl}/health`, { headers: { 'x-big': 'y'.repeat(20_000) } });
    expect(big.status).toBe(431);
    expect(big.headers.get('cache-control')).toBe('no-store');
  });
});
