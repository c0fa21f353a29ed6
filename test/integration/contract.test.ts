/**
 * Contract test: every route of the route table is called on the running local stack, and every JSON answer —
 * successes AND problem+json errors — is validated against the OpenAPI document the stack serves
 * (GET /api/openapi.json), compiled with Ajv (JSON Schema 2020-12). Objects are validated CLOSED here
 * (`additionalProperties: false` where the document leaves them open), so a field the code returns but the
 * document does not list fails the test.
 *
 * Every call goes through Prism's validation proxy (`prism proxy <document> <api> --errors`), as a client team
 * would check us: any request or response violation fails the call. A request the document itself calls invalid
 * (Prism refuses it without forwarding) is sent to the API directly, which must refuse it too (a 4xx).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { routes } from '#shared/routes.ts';
import { buildOpenApi } from '#shared/openapi/document.ts';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { api, dynamo, registerUser, setPlan, stack, uniqueEmail, type ApiOptions, type ApiResponse, type RegisteredUser } from './harness.ts';
import { linkInMail } from './outbox.ts';
import { newStandInOrg } from './standins.ts';
import { freePort } from './global-setup.ts';

// ajv-formats is CommonJS with a default export: under NodeNext the import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

type Json = Record<string, any>;

// ---- the validator ------------------------------------------------------------------------------------------

const COMPONENTS_ID = 'urn:burnrate:openapi:components';
let doc: Json;
let ajv: Ajv2020;
const compiled = new Map<string, ValidateFunction>();

/** Refs into the document's components point at the one schema Ajv holds them in. */
const rewriteRefs = (value: unknown): any =>
  JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`));

/** Every object schema that lists its properties and says nothing about others is closed. */
function closeObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closeObjects);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'properties' ? mapValues(v, closeObjects) : closeObjects(v)]));
  if (out.properties && !('additionalProperties' in out) && !('unevaluatedProperties' in out)) out.additionalProperties = false;
  return out;
}
const mapValues = (record: Json, fn: (v: unknown) => unknown) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fn(v)]));

function useDocument(document: Json): void {
  doc = document;
  ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  addFormats(ajv);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: closeObjects(rewriteRefs(doc.components.schemas)) as Json });
  compiled.clear();
}

function resolve(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return resolve(
    node.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((p: string) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((n: any, p: string) => n?.[p], doc),
  );
}

/**
 * Validates one answer against the document: the status must be documented for the operation, the content type
 * must be one it documents for that status (none for a body-less answer), the body must match its schema, and a
 * success must carry the headers documented for it (when `headers` are given).
 * `path` is the route's template relative to /api (`/keys/{hash}`). Throws with Ajv's errors.
 */
function validateResponse(method: string, path: string, status: number, body: unknown, contentType?: string | null, headers?: Headers): void {
  const where = `${method} ${path} → ${status}`;
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not in the document`);
  const response = op.responses[String(status)] ?? op.responses.default;
  if (!response) throw new Error(`${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`);
  const documented = resolve(response);
  if (body === undefined) {
    if (documented.content) throw new Error(`${where}: the answer has no body; the document promises ${Object.keys(documented.content).join(', ')}`);
    return;
  }
  for (const header of status < 300 && headers ? Object.keys(documented.headers ?? {}) : []) {
    if (!headers?.has(header)) throw new Error(`${where}: the documented header ${header} is missing`);
  }
  const mediaType = (contentType ?? '').split(';')[0]!.trim();
  const media = documented.content?.[mediaType];
  if (!media) throw new Error(`${where}: content type ${mediaType || '(none)'} not documented (documented: ${Object.keys(documented.content ?? {}).join(', ') || 'no content'})`);
  const key = `${method} ${path} ${status} ${mediaType}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(closeObjects(rewriteRefs(media.schema)) as Json);
    compiled.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(`${where}: the body does not match the document:\n${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(body, null, 2).slice(0, 2000)}`);
  }
}

/** Which statuses each route was seen answering (and validated). */
const seen = new Map<string, Set<number>>();

// ---- Prism ---------------------------------------------------------------------------------------------------

const ROOT = new URL('../../', import.meta.url).pathname;
let prism: ChildProcess | undefined;
let prismUrl: string;
let prismDir: string;
/** Calls Prism forwarded and validated (request and response), by `METHOD template`. */
const forwarded = new Map<string, Set<number>>();
/** Calls Prism refused as invalid by the document (and the API refused too). */
let refusedByDocument = 0;

async function startPrism(document: Json): Promise<void> {
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  prismDir = mkdtempSync(join(ROOT, '.test-data', 'prism-'));
  const file = join(prismDir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  prismUrl = `http://127.0.0.1:${port}`;
  // The document's server is `/api`: Prism routes the paths below it, and forwards to the API's base URL.
  prism = spawn(join(ROOT, 'node_modules', '.bin', 'prism'), ['proxy', file, stack().apiUrl, '--errors', '--port', String(port), '--host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    prism!.stdout!.on('data', onData);
    prism!.stderr!.on('data', onData);
    prism!.once('exit', (code) => reject(new Error(`Prism exited (${code}):\n${output}`)));
  });
  prism.stdout!.resume();
  prism.stderr!.resume();
}

afterAll(() => {
  prism?.kill();
  if (prismDir) rmSync(prismDir, { recursive: true, force: true });
});

/** Calls `path` (a concrete path) of the route `method template` through Prism, validates the answer, and returns it. */
async function call(method: string, template: string, path: string, options: ApiOptions = {}): Promise<ApiResponse> {
  const proxied = await api(path, { ...options, method, baseUrl: prismUrl });
  const violations = proxied.headers.get('sl-violations');
  expect(violations, `${method} ${path} → ${proxied.status}: Prism found violations`).toBeNull();
  let res = proxied;
  // Every answer of the API carries x-request-id: one without it is Prism's own.
  if (!proxied.headers.has('x-request-id')) {
    // Not a response violation (that is a 500 with sl-violations): the document calls the request invalid, and
    // Prism did not forward it. The API must refuse it as well…
    expect(proxied.status, `${method} ${path}: ${JSON.stringify(proxied.body)}`).toBeLessThan(500);
    res = await api(path, { ...options, method });
    const why = JSON.stringify(proxied.body?.validation ?? proxied.body);
    // …except single events of POST /ingest: the API reports them in `rejected` and takes the rest (docs/api.md: one
    // bad event does not sink the batch), while the document shows clients the event they should send.
    const perEvent = template === '/ingest' && res.status === 200 && res.body.rejected.length > 0 && /"events","\d+"/.test(why);
    if (!perEvent) {
      expect(res.status, `${method} ${path}: Prism refused it (${why}), the API answered`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    refusedByDocument++;
  } else {
    const key = `${method} ${template}`;
    if (!forwarded.has(key)) forwarded.set(key, new Set());
    forwarded.get(key)!.add(proxied.status);
  }
  validateResponse(method, template, res.status, res.body, res.headers.get('content-type'), res.headers);
  if (res.status >= 400) {
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body.status).toBe(res.status);
  }
  const key = `${method} ${template}`;
  if (!seen.has(key)) seen.set(key, new Set());
  seen.get(key)!.add(res.status);
  return res;
}

/** `call`, and expects `status`. */
async function expectCall(status: number, method: string, template: string, path: string = template, options: ApiOptions = {}) {
  const res = await call(method, template, path, options);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
}

// ---- fixtures -----------------------------------------------------------------------------------------------

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newKeyHash = () => sha256(`sk-test-${randomUUID()}`);
const event = (keyHash: string, extra: Json = {}) => ({
  requestId: randomUUID(),
  keyHash,
  keyHint: 'sk-…abcd',
  provider: 'openai',
  model: 'gpt-4o',
  inputTokens: 1000,
  outputTokens: 100,
  ...extra,
});

let user: RegisteredUser;
let ingestKey: string;
const hashes = [newKeyHash(), newKeyHash()];

beforeAll(async () => {
  const res = await api('/openapi.json');
  expect(res.status).toBe(200);
  useDocument(res.body);
  await startPrism(res.body);
  user = await registerUser();
}, 90_000);

// ---- the routes ---------------------------------------------------------------------------------------------

describe('the document itself', () => {
  it('GET /health → 200', async () => {
    await expectCall(200, 'GET', '/health');
  });

  it('GET /openapi.json → 200, the document buildOpenApi() makes, no-store like every response', async () => {
    const res = await expectCall(200, 'GET', '/openapi.json');
    expect(res.body).toEqual(buildOpenApi());
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('the validator refuses what the document does not promise', () => {
    expect(() => validateResponse('GET', '/health', 200, { status: 'ok', extra: 1 }, 'application/json')).toThrow(/does not match/);
    expect(() => validateResponse('GET', '/health', 200, { status: 'down' }, 'application/json')).toThrow(/does not match/);
    expect(() => validateResponse('GET', '/health', 418, {}, 'application/json')).toThrow(/not documented/);
    expect(() => validateResponse('GET', '/health', 200, { status: 'ok' }, 'text/plain')).toThrow(/not documented/);
    expect(() => validateResponse('DELETE', '/budgets/{id}', 204, { id: 'x' }, 'application/json')).toThrow(/no content/);
  });
});

describe('auth', () => {
  it('POST /auth/register → 201, 400, 409', async () => {
    const input = { email: `contract-${randomUUID()}@example.com`, password: 'Contract9X', firstName: 'Ada', lastName: 'L', companyName: 'Acme' };
    await expectCall(201, 'POST', '/auth/register', '/auth/register', { body: input });
    await expectCall(409, 'POST', '/auth/register', '/auth/register', { body: input });
    const bad = await expectCall(400, 'POST', '/auth/register', '/auth/register', { body: { ...input, password: 'short', role: 'admin' } });
    expect(bad.body.errors.map((e: Json) => e.path)).toEqual(expect.arrayContaining(['password', 'role']));
    await expectCall(400, 'POST', '/auth/register', '/auth/register', { rawBody: '{"email":' });
    await expectCall(413, 'POST', '/auth/register', '/auth/register', { body: { ...input, firstName: 'x'.repeat(1024 * 1024) } });
  });

  it('POST /auth/login → 200, 400, 401', async () => {
    await expectCall(200, 'POST', '/auth/login', '/auth/login', { body: { email: user.email, password: user.password } });
    await expectCall(401, 'POST', '/auth/login', '/auth/login', { body: { email: user.email, password: `${user.password}x` } });
    await expectCall(400, 'POST', '/auth/login', '/auth/login', { body: { email: user.email } });
  });

  it('POST /auth/refresh → 200, 400, 401', async () => {
    await expectCall(200, 'POST', '/auth/refresh', '/auth/refresh', { body: { refreshToken: user.refreshToken } });
    await expectCall(401, 'POST', '/auth/refresh', '/auth/refresh', { body: { refreshToken: 'not-a-refresh-token' } });
    await expectCall(400, 'POST', '/auth/refresh', '/auth/refresh', { body: {} });
  });

  it('GET /auth/me → 200', async () => {
    await expectCall(200, 'GET', '/auth/me', '/auth/me', { token: user.token });
  });
});

describe('identity: profile, verified e-mail, passwords', () => {
  it('PATCH /auth/me → 200, 400', async () => {
    await expectCall(200, 'PATCH', '/auth/me', '/auth/me', { token: user.token, body: { lastName: 'King' } });
    await expectCall(400, 'PATCH', '/auth/me', '/auth/me', { token: user.token, body: {} });
  });

  it('POST /auth/resend-verification → 202, 429, 409; POST /auth/verify-email → 200, 400', async () => {
    const fresh = await registerUser();
    await expectCall(202, 'POST', '/auth/resend-verification', '/auth/resend-verification', { token: fresh.token });
    const throttled = await expectCall(429, 'POST', '/auth/resend-verification', '/auth/resend-verification', { token: fresh.token });
    expect(throttled.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    const { token } = await linkInMail(fresh.email, '/verify-email');
    await expectCall(200, 'POST', '/auth/verify-email', '/auth/verify-email', { body: { token } });
    await expectCall(400, 'POST', '/auth/verify-email', '/auth/verify-email', { body: { token } });
    await expectCall(409, 'POST', '/auth/resend-verification', '/auth/resend-verification', { token: fresh.token });
  });

  it('POST /auth/forgot-password → 202, 400; POST /auth/reset-password → 204, 400', async () => {
    const fresh = await registerUser();
    await expectCall(202, 'POST', '/auth/forgot-password', '/auth/forgot-password', { body: { email: fresh.email } });
    await expectCall(400, 'POST', '/auth/forgot-password', '/auth/forgot-password', { body: {} });
    const { token } = await linkInMail(fresh.email, '/reset-password');
    await expectCall(400, 'POST', '/auth/reset-password', '/auth/reset-password', { body: { token, password: 'weak' } });
    await expectCall(204, 'POST', '/auth/reset-password', '/auth/reset-password', { body: { token, password: 'Contract9New' } });
    await expectCall(400, 'POST', '/auth/reset-password', '/auth/reset-password', { body: { token, password: 'Contract9New' } });
  });

  it('POST /auth/change-password → 400 (wrong current), 204', async () => {
    const fresh = await registerUser();
    const wrong = await expectCall(400, 'POST', '/auth/change-password', '/auth/change-password', {
      token: fresh.token,
      body: { currentPassword: 'Not9ThePassword', newPassword: 'Contract9New' },
    });
    expect(wrong.body.errors[0].path).toBe('currentPassword');
    await expectCall(204, 'POST', '/auth/change-password', '/auth/change-password', {
      token: fresh.token,
      body: { currentPassword: fresh.password, newPassword: 'Contract9New' },
    });
  });
});

describe('every jwt route refuses a missing or bad token with a documented 401', () => {
  const jwtRoutes = routes.filter((r) => r.auth === 'jwt');
  it.each(jwtRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (_name, route) => {
    const path = route.path.replace('{hash}', 'a'.repeat(64)).replace('{id}', 'bud_01JD3K4Z7Q8W9E2R5T6Y7V8X9A');
    const body = route.method === 'GET' ? {} : { body: {} };
    await expectCall(401, route.method, route.path, path, body);
    await expectCall(401, route.method, route.path, path, { ...body, token: 'garbage.token.here' });
  });
});

describe('ingest keys and ingestion', () => {
  let deletable: string;

  it('POST /ingest-keys → 201 (with and without a body), 400', async () => {
    const res = await expectCall(201, 'POST', '/ingest-keys', '/ingest-keys', { token: user.token, body: { name: 'contract' } });
    ingestKey = res.body.key;
    deletable = (await expectCall(201, 'POST', '/ingest-keys', '/ingest-keys', { token: user.token })).body.id;
    await expectCall(400, 'POST', '/ingest-keys', '/ingest-keys', { token: user.token, body: { name: 'x', accountId: 'br_x' } });
  });

  it('GET /ingest-keys → 200', async () => {
    const res = await expectCall(200, 'GET', '/ingest-keys', '/ingest-keys', { token: user.token });
    expect(res.body.items.length).toBe(2);
  });

  it('DELETE /ingest-keys/{id} → 204, 404', async () => {
    await expectCall(204, 'DELETE', '/ingest-keys/{id}', `/ingest-keys/${deletable}`, { token: user.token });
    await expectCall(404, 'DELETE', '/ingest-keys/{id}', `/ingest-keys/${deletable}`, { token: user.token });
  });

  it('POST /ingest → 200 (a rejected event included), 400, 401, 413', async () => {
    const headers = { 'x-api-key': ingestKey };
    const res = await expectCall(200, 'POST', '/ingest', '/ingest', {
      headers,
      body: { events: [event(hashes[0]!), event(hashes[1]!, { costUsd: 0.25 }), event(hashes[0]!, { inputTokens: -1 })] },
    });
    expect(res.body).toMatchObject({ accepted: 2, duplicates: 0, rejected: [{ index: 2, code: 'invalid_event' }] });
    await expectCall(400, 'POST', '/ingest', '/ingest', { headers, body: { events: [] } });
    await expectCall(401, 'POST', '/ingest', '/ingest', { headers: { 'x-api-key': 'brk_wrong' }, body: { events: [event(hashes[0]!)] } });
    await expectCall(413, 'POST', '/ingest', '/ingest', { headers, rawBody: `{"events":["${'x'.repeat(1024 * 1024)}"]}` });
  });
});

describe('keys', () => {
  it('GET /keys → 200 (two pages), 400', async () => {
    const first = await expectCall(200, 'GET', '/keys', '/keys?limit=1', { token: user.token });
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await expectCall(200, 'GET', '/keys', `/keys?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: user.token });
    expect(second.body.nextCursor).toBeNull();
    await expectCall(400, 'GET', '/keys', '/keys?limit=0', { token: user.token });
    await expectCall(400, 'GET', '/keys', '/keys?cursor=forged', { token: user.token });
  });

  it('GET /keys with search, filters and sort → 200 with total, 400', async () => {
    const res = await expectCall(200, 'GET', '/keys', `/keys?q=${hashes[0]!.slice(0, 6)}&provider=openai&source=ingest&sort=name&order=desc&limit=5`, { token: user.token });
    expect(res.body.total).toBeGreaterThanOrEqual(1);
    await expectCall(400, 'GET', '/keys', '/keys?sort=cost', { token: user.token });
    await expectCall(400, 'GET', '/keys', `/keys?q=${'x'.repeat(101)}`, { token: user.token });
  });

  it('GET /keys/{hash} → 200, 400, 404', async () => {
    const res = await expectCall(200, 'GET', '/keys/{hash}', `/keys/${hashes[0]}`, { token: user.token });
    expect(res.body.breakdown.byModel.length).toBe(1);
    await expectCall(400, 'GET', '/keys/{hash}', `/keys/${hashes[0]}?from=2026-02-01&to=2026-01-01`, { token: user.token });
    await expectCall(404, 'GET', '/keys/{hash}', `/keys/${newKeyHash()}`, { token: user.token });
  });

  it('PATCH /keys/{hash} → 200, 400, 404', async () => {
    await expectCall(200, 'PATCH', '/keys/{hash}', `/keys/${hashes[0]}`, { token: user.token, body: { label: 'production' } });
    await expectCall(200, 'PATCH', '/keys/{hash}', `/keys/${hashes[0]}`, { token: user.token, body: { label: null } });
    await expectCall(400, 'PATCH', '/keys/{hash}', `/keys/${hashes[0]}`, { token: user.token, body: { label: '' } });
    await expectCall(200, 'PATCH', '/keys/{hash}', `/keys/${hashes[0]}`, { token: user.token, body: { tags: { team: 'search' } } });
    await expectCall(400, 'PATCH', '/keys/{hash}', `/keys/${hashes[0]}`, { token: user.token, body: { tags: { Team: 'search' } } });
    await expectCall(404, 'PATCH', '/keys/{hash}', `/keys/${newKeyHash()}`, { token: user.token, body: { label: 'x' } });
  });
});

describe('budgets', () => {
  let id: string;

  it('POST /budgets → 201 (ACCOUNT and KEY), 400', async () => {
    id = (await expectCall(201, 'POST', '/budgets', '/budgets', { token: user.token, body: { monthlyLimit: 0.5, alertThreshold: 50, scope: 'ACCOUNT' } })).body.id;
    await expectCall(201, 'POST', '/budgets', '/budgets', {
      token: user.token,
      body: { name: 'Key budget', monthlyLimit: 100, alertThreshold: 80, scope: 'KEY', keyHash: hashes[0] },
    });
    await expectCall(400, 'POST', '/budgets', '/budgets', { token: user.token, body: { monthlyLimit: -1, alertThreshold: 80, scope: 'ACCOUNT' } });
  });

  it('GET /budgets → 200', async () => {
    const res = await expectCall(200, 'GET', '/budgets', '/budgets', { token: user.token });
    expect(res.body.items.length).toBe(2);
  });

  it('PATCH /budgets/{id} → 200, 400, 404', async () => {
    await expectCall(200, 'PATCH', '/budgets/{id}', `/budgets/${id}`, { token: user.token, body: { name: 'Account' } });
    await expectCall(400, 'PATCH', '/budgets/{id}', `/budgets/${id}`, { token: user.token, body: {} });
    await expectCall(404, 'PATCH', '/budgets/{id}', '/budgets/bud_01JD3K4Z7Q8W9E2R5T6Y7V8X9A', { token: user.token, body: { name: 'x' } });
  });

  it('DELETE /budgets/{id} → 204, 404', async () => {
    const extra = (await expectCall(201, 'POST', '/budgets', '/budgets', { token: user.token, body: { monthlyLimit: 5, alertThreshold: 80, scope: 'ACCOUNT' } })).body.id;
    await expectCall(204, 'DELETE', '/budgets/{id}', `/budgets/${extra}`, { token: user.token });
    await expectCall(404, 'DELETE', '/budgets/{id}', `/budgets/${extra}`, { token: user.token });
  });
});

describe('budgets that stop spend', () => {
  it('POST /budgets/{id}/release → 200, 404; GET /enforcement-actions → 200, 404; GET /ingest/blocks → 200, 401', async () => {
    const hash = newKeyHash();
    await expectCall(200, 'POST', '/ingest', '/ingest', { headers: { 'x-api-key': ingestKey }, body: { events: [event(hash, { costUsd: 0.01 })] } });
    const id = (
      await expectCall(201, 'POST', '/budgets', '/budgets', { token: user.token, body: { name: 'Stop', monthlyLimit: 0.001, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } })
    ).body.id as string;
    const blocks = await expectCall(200, 'GET', '/ingest/blocks', '/ingest/blocks', { headers: { 'x-api-key': ingestKey } });
    expect(blocks.body.blocked).toContainEqual(expect.objectContaining({ keyHash: hash, budgetId: id, budgetName: 'Stop' }));
    await expectCall(401, 'GET', '/ingest/blocks', '/ingest/blocks');
    const acts = await expectCall(200, 'GET', '/enforcement-actions', `/enforcement-actions?budgetId=${id}`, { token: user.token });
    expect(acts.body.items[0]).toMatchObject({ kind: 'reporter_blocked', budgetId: id });
    await expectCall(404, 'GET', '/enforcement-actions', '/enforcement-actions?budgetId=bud_01JD3K4Z7Q8W9E2R5T6Y7V8X9A', { token: user.token });
    const filtered = await expectCall(200, 'GET', '/enforcement-actions', `/enforcement-actions?budgetId=${id}&provider=openai&result=ok`, { token: user.token });
    expect(filtered.body.items[0]).toMatchObject({ kind: 'reporter_blocked', budgetId: id, holderName: 'Stop', provider: 'openai', result: 'ok' });
    await expectCall(400, 'GET', '/enforcement-actions', '/enforcement-actions?result=maybe', { token: user.token });
    await expectCall(200, 'POST', '/budgets/{id}/release', `/budgets/${id}/release`, { token: user.token });
    await expectCall(404, 'POST', '/budgets/{id}/release', '/budgets/bud_01JD3K4Z7Q8W9E2R5T6Y7V8X9A/release', { token: user.token });
  });
});

describe('alert rules', () => {
  let id: string;

  it('POST /alert-rules → 201 (each type), 400', async () => {
    const base = { channels: ['email'], isActive: true };
    id = (
      await expectCall(201, 'POST', '/alert-rules', '/alert-rules', {
        token: user.token,
        body: { ...base, type: 'cost_threshold', name: 'Daily 10c', config: { threshold: 0.1, period: 'daily' } },
      })
    ).body.id;
    await expectCall(201, 'POST', '/alert-rules', '/alert-rules', { token: user.token, body: { ...base, type: 'new_key', name: 'New keys' } });
    await expectCall(201, 'POST', '/alert-rules', '/alert-rules', {
      token: user.token,
      body: { ...base, type: 'spend_spike', name: 'Spikes', config: { multiplier: 2, minSpend: 1 } },
    });
    await expectCall(400, 'POST', '/alert-rules', '/alert-rules', { token: user.token, body: { ...base, type: 'cost_threshold', name: 'x', config: {} } });
  });

  it('GET /alert-rules → 200', async () => {
    const res = await expectCall(200, 'GET', '/alert-rules', '/alert-rules', { token: user.token });
    expect(res.body.items.map((r: Json) => r.type).sort()).toEqual(['cost_threshold', 'new_key', 'spend_spike']);
  });

  it('PATCH /alert-rules/{id} → 200, 400, 404', async () => {
    await expectCall(200, 'PATCH', '/alert-rules/{id}', `/alert-rules/${id}`, { token: user.token, body: { name: 'Daily 10 cents' } });
    await expectCall(400, 'PATCH', '/alert-rules/{id}', `/alert-rules/${id}`, { token: user.token, body: { config: { threshold: 'ten' } } });
    await expectCall(404, 'PATCH', '/alert-rules/{id}', '/alert-rules/rul_01JD3K4Z7Q8W9E2R5T6Y7V8X9A', { token: user.token, body: { name: 'x' } });
  });

  it('DELETE /alert-rules/{id} → 204, 404', async () => {
    const extra = (
      await expectCall(201, 'POST', '/alert-rules', '/alert-rules', { token: user.token, body: { type: 'new_key', name: 'Temp', channels: ['email'] } })
    ).body.id;
    await expectCall(204, 'DELETE', '/alert-rules/{id}', `/alert-rules/${extra}`, { token: user.token });
    await expectCall(404, 'DELETE', '/alert-rules/{id}', `/alert-rules/${extra}`, { token: user.token });
  });
});

describe('alerts', () => {
  let alertId: string;

  it('ingesting past the rule and budget raises alerts; GET /alerts → 200, 400', async () => {
    // A new key (new_key rule), $1 today (past the 10c daily rule and the $0.50 budget: threshold and exceeded).
    await expectCall(200, 'POST', '/ingest', '/ingest', { headers: { 'x-api-key': ingestKey }, body: { events: [event(newKeyHash(), { costUsd: 1 })] } });
    const res = await expectCall(200, 'GET', '/alerts', '/alerts', { token: user.token });
    const types = res.body.items.map((a: Json) => a.type);
    expect(types).toEqual(expect.arrayContaining(['new_key', 'cost_threshold']));
    expect(types.filter((t: string) => t.startsWith('budget_')).length).toBeGreaterThan(0);
    alertId = res.body.items.find((a: Json) => a.type === 'cost_threshold').id;
    await expectCall(200, 'GET', '/alerts', '/alerts?status=triggered&limit=2', { token: user.token });
    await expectCall(400, 'GET', '/alerts', '/alerts?status=open', { token: user.token });
    await expectCall(400, 'GET', '/alerts', '/alerts?cursor=forged', { token: user.token });
    const filtered = await expectCall(200, 'GET', '/alerts', '/alerts?type=new_key&limit=5', { token: user.token });
    expect(filtered.body.counts.triggered).toBeGreaterThanOrEqual(filtered.body.items.length);
    await expectCall(400, 'GET', '/alerts', '/alerts?type=bogus', { token: user.token });
  });

  it('PATCH /alerts/{id}/acknowledge → 200, 404', async () => {
    const res = await expectCall(200, 'PATCH', '/alerts/{id}/acknowledge', `/alerts/${alertId}/acknowledge`, { token: user.token });
    expect(res.body).toMatchObject({ status: 'acknowledged', acknowledgedBy: user.userId });
    await expectCall(404, 'PATCH', '/alerts/{id}/acknowledge', '/alerts/alt_01JD3K4Z7Q8W9E2R5T6Y7V8X9A/acknowledge', { token: user.token });
  });

  it('POST /alerts/acknowledge → 200 (ids, all matching), 400', async () => {
    const byIds = await expectCall(200, 'POST', '/alerts/acknowledge', '/alerts/acknowledge', { token: user.token, body: { ids: [alertId] } });
    expect(byIds.body).toEqual({ acknowledged: 0 });
    const all = await expectCall(200, 'POST', '/alerts/acknowledge', '/alerts/acknowledge', { token: user.token, body: { all: true, type: 'new_key' } });
    expect(all.body.acknowledged).toBeGreaterThanOrEqual(1);
    await expectCall(400, 'POST', '/alerts/acknowledge', '/alerts/acknowledge', { token: user.token, body: { ids: [] } });
  });
});

describe('webhook secret and billing', () => {
  it('GET /webhook-secret → 200', async () => {
    await expectCall(200, 'GET', '/webhook-secret', '/webhook-secret', { token: user.token });
  });

  it('POST /webhook-secret/rotate → 200', async () => {
    await expectCall(200, 'POST', '/webhook-secret/rotate', '/webhook-secret/rotate', { token: user.token });
  });

  it('GET /billing/status → 200', async () => {
    await expectCall(200, 'GET', '/billing/status', '/billing/status', { token: user.token });
  });

  it('POST /billing/checkout → 201, 400, 409', async () => {
    const res = await expectCall(201, 'POST', '/billing/checkout', '/billing/checkout', { token: user.token, body: { plan: 'GROWTH' } });
    expect(res.body.url).toMatch(/^http/);
    await expectCall(400, 'POST', '/billing/checkout', '/billing/checkout', { token: user.token, body: { plan: 'FREE' } });
    const subscribed = await registerUser();
    await setPlan(subscribed.accountId, 'GROWTH');
    await expectCall(409, 'POST', '/billing/checkout', '/billing/checkout', { token: subscribed.token, body: { plan: 'GROWTH' } });
  });

  it('POST /billing/portal → 201 (a Stripe customer since the checkout), 409 (none yet)', async () => {
    await expectCall(201, 'POST', '/billing/portal', '/billing/portal', { token: user.token });
    const fresh = await registerUser();
    await expectCall(409, 'POST', '/billing/portal', '/billing/portal', { token: fresh.token });
  });

  it('POST /billing/webhook → 200 (signed), 400 (unsigned, forged)', async () => {
    const payload = JSON.stringify({
      id: `evt_contract_${randomUUID().replaceAll('-', '')}`,
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: Math.floor(Date.now() / 1000),
      type: 'customer.created',
      data: { object: { id: 'cus_contract', object: 'customer' } },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: stack().stripeWebhookSecret });
    const res = await expectCall(200, 'POST', '/billing/webhook', '/billing/webhook', { rawBody: payload, headers: { 'stripe-signature': signature } });
    expect(res.body.received).toBe(true);
    await expectCall(400, 'POST', '/billing/webhook', '/billing/webhook', { rawBody: payload });
    const forged = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_forged' });
    await expectCall(400, 'POST', '/billing/webhook', '/billing/webhook', { rawBody: payload, headers: { 'stripe-signature': forged } });
  });
});

describe('the team', () => {
  it('POST/GET/DELETE /invitations, GET /auth/invitation, POST /auth/accept-invitation, GET/PATCH/DELETE /users → successes and problems', async () => {
    const admin = await registerUser();
    const auth = { token: admin.token };
    const email = uniqueEmail('contract');
    const invitation = await expectCall(201, 'POST', '/invitations', '/invitations', { ...auth, body: { email, role: 'member' } });
    await expectCall(409, 'POST', '/invitations', '/invitations', { ...auth, body: { email, role: 'viewer' } });
    await expectCall(400, 'POST', '/invitations', '/invitations', { ...auth, body: { email, role: 'owner' } });
    await expectCall(200, 'GET', '/invitations', '/invitations', auth);
    await expectCall(400, 'GET', '/invitations', '/invitations?limit=0', auth);
    const { token } = await linkInMail(email, '/accept-invitation');
    await expectCall(200, 'GET', '/auth/invitation', `/auth/invitation?token=${token}`);
    await expectCall(400, 'GET', '/auth/invitation', '/auth/invitation?token=short');
    const body = { token, password: 'Corr3ct-Horse', firstName: 'Con', lastName: 'Tract' };
    const joined = await expectCall(201, 'POST', '/auth/accept-invitation', '/auth/accept-invitation', { body });
    await expectCall(400, 'POST', '/auth/accept-invitation', '/auth/accept-invitation', { body });
    const member = { token: joined.body.token };
    await expectCall(403, 'POST', '/invitations', '/invitations', { ...member, body: { email: uniqueEmail('nope'), role: 'viewer' } });
    await expectCall(200, 'GET', '/users', '/users', member);
    await expectCall(400, 'GET', '/users', '/users?cursor=forged', member);
    await expectCall(200, 'PATCH', '/users/{userId}', `/users/${joined.body.userId}`, { ...auth, body: { role: 'viewer' } });
    await expectCall(409, 'PATCH', '/users/{userId}', `/users/${admin.userId}`, { ...auth, body: { role: 'viewer' } });
    await expectCall(204, 'DELETE', '/users/{userId}', `/users/${joined.body.userId}`, auth);
    await expectCall(404, 'DELETE', '/users/{userId}', `/users/${joined.body.userId}`, auth);
    const other = await expectCall(201, 'POST', '/invitations', '/invitations', { ...auth, body: { email: uniqueEmail('revoke'), role: 'viewer' } });
    await expectCall(204, 'DELETE', '/invitations/{id}', `/invitations/${other.body.id}`, auth);
    await expectCall(404, 'DELETE', '/invitations/{id}', `/invitations/${other.body.id}`, auth);
    expect(invitation.body.status).toBe('pending');
  });
});

describe('spend insight and prices', () => {
  it('GET /spend → 200 (each grouping), 400', async () => {
    for (const groupBy of ['day', 'model', 'provider', 'key']) {
      const res = await expectCall(200, 'GET', '/spend', `/spend?groupBy=${groupBy}`, { token: user.token });
      expect(res.body.groupBy).toBe(groupBy);
    }
    await expectCall(200, 'GET', '/spend', '/spend?from=2025-01-01&to=2025-01-31', { token: user.token });
    await expectCall(400, 'GET', '/spend', '/spend?groupBy=week', { token: user.token });
    const compared = await expectCall(200, 'GET', '/spend', '/spend?groupBy=model&provider=openai&model=gpt-4o&compare=previous', { token: user.token });
    expect(compared.body.previous).toMatchObject({ from: expect.any(String), to: expect.any(String) });
    await expectCall(200, 'GET', '/spend', `/spend?groupBy=key&keyHash=${'a'.repeat(64)}`, { token: user.token });
    await expectCall(400, 'GET', '/spend', '/spend?model=gpt-4o', { token: user.token });
  });

  it('GET /spend/export → 200 text/csv, 400 export-too-large', async () => {
    const res = await expectCall(200, 'GET', '/spend/export', '/spend/export', { token: user.token });
    expect(res.body.startsWith('date,key_hash,')).toBe(true);
    const big = await expectCall(400, 'GET', '/spend/export', '/spend/export?from=2025-01-01&to=2025-06-30', { token: user.token });
    expect(big.body.type).toContain('/problems/export-too-large');
  });

  it('POST /spend/exports → 202, 400; GET /spend/exports/{id} → 200 (running or ready), 404', async () => {
    const started = await expectCall(202, 'POST', '/spend/exports', '/spend/exports', { token: user.token, body: { from: '2026-01-01', to: '2026-01-31' } });
    expect(started.body.status).toBe('running');
    await expectCall(400, 'POST', '/spend/exports', '/spend/exports', { token: user.token, body: { from: '2025-01-01', to: '2026-01-02' } });
    for (let attempt = 0; attempt < 100; attempt++) {
      const status = await expectCall(200, 'GET', '/spend/exports/{id}', `/spend/exports/${started.body.id}`, { token: user.token });
      if (status.body.status === 'ready') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expectCall(404, 'GET', '/spend/exports/{id}', '/spend/exports/exp_01JZ3N5Q8W0000000000000000', { token: user.token });
  });

  it('GET /prices → 200; PUT /prices/{provider}/{model} → 200, 400; DELETE → 204, 404', async () => {
    await expectCall(200, 'PUT', '/prices/{provider}/{model}', '/prices/openai/contract-model', { token: user.token, body: { input: 1, output: 2 } });
    await expectCall(400, 'PUT', '/prices/{provider}/{model}', '/prices/openai/contract-model', { token: user.token, body: { input: -1, output: 2 } });
    const list = await expectCall(200, 'GET', '/prices', '/prices', { token: user.token });
    expect(list.body.items).toContainEqual(expect.objectContaining({ model: 'contract-model', source: 'account' }));
    await expectCall(401, 'GET', '/prices', '/prices');
    await expectCall(204, 'DELETE', '/prices/{provider}/{model}', '/prices/openai/contract-model', { token: user.token });
    await expectCall(404, 'DELETE', '/prices/{provider}/{model}', '/prices/openai/contract-model', { token: user.token });
  });
});

describe('provider connections', () => {
  it('POST /connections → 201, 400, 409; GET → 200, 404; PATCH → 200, 400; sync → 202, 429; reconciliation → 200, 400; DELETE → 204, 404', async () => {
    const owner = await registerUser();
    const auth = { token: owner.token };
    // An organization of the test's own with 2 days of usage: the first sync the connection queues on the stack imports
    // 2 days (this test deletes the connection in a moment), not the main organization's 2 months.
    const org = await newStandInOrg('anthropic', { historyDays: 2 });
    onTestFinished(() => org.remove());
    const state = { adminKey: org.adminKey };
    const created = await expectCall(201, 'POST', '/connections', '/connections', { ...auth, body: { provider: 'anthropic', adminKey: state.adminKey } });
    const id = created.body.id as string;
    await expectCall(400, 'POST', '/connections', '/connections', { ...auth, body: { provider: 'anthropic', adminKey: 'sk-ant-api03-notanadminkey000' } });
    await expectCall(409, 'POST', '/connections', '/connections', { ...auth, body: { provider: 'anthropic', adminKey: state.adminKey } });
    await expectCall(200, 'GET', '/connections', '/connections', auth);
    await expectCall(200, 'GET', '/connections/{id}', `/connections/${id}`, auth);
    await expectCall(404, 'GET', '/connections/{id}', '/connections/con_01JD4Z7Q8W9X0Y1Z2A3B4C5D6E', auth);
    await expectCall(200, 'PATCH', '/connections/{id}', `/connections/${id}`, { ...auth, body: { name: 'Contract org' } });
    await expectCall(400, 'PATCH', '/connections/{id}', `/connections/${id}`, { ...auth, body: {} });
    await expectCall(202, 'POST', '/connections/{id}/sync', `/connections/${id}/sync`, auth);
    await expectCall(429, 'POST', '/connections/{id}/sync', `/connections/${id}/sync`, auth);
    await expectCall(200, 'GET', '/connections/{id}/reconciliation', `/connections/${id}/reconciliation`, auth);
    // A key of the connection in a workspace (as a sync writes it): the project's tags.
    const hash = sha256(`anthropic:${randomUUID()}`);
    await dynamo().send(
      new PutCommand({
        TableName: stack().tableName,
        Item: { ...keys.providerKey(owner.accountId, hash), ...keys.providerKeyIndex(owner.accountId, hash), keyHash: hash, provider: 'anthropic', source: 'connection', connectionId: id, project: { id: 'wrkspc_contract', name: 'Contract' }, firstSeenAt: new Date().toISOString(), lastSeenAt: new Date().toISOString() },
      }),
    );
    await expectCall(200, 'GET', '/projects', '/projects', auth);
    await expectCall(200, 'GET', '/customers', '/customers', auth);
    await expectCall(400, 'GET', '/customers', '/customers?from=2026-01-02&to=2026-01-03', auth);
    await expectCall(401, 'GET', '/projects', '/projects', {});
    await expectCall(200, 'PATCH', '/projects/{connectionId}/{projectId}', `/projects/${id}/wrkspc_contract`, { ...auth, body: { tags: { team: 'platform' } } });
    await expectCall(400, 'PATCH', '/projects/{connectionId}/{projectId}', `/projects/${id}/wrkspc_contract`, { ...auth, body: { tags: { team: '' } } });
    await expectCall(404, 'PATCH', '/projects/{connectionId}/{projectId}', `/projects/${id}/wrkspc_nope`, { ...auth, body: { tags: {} } });
    await expectCall(400, 'GET', '/connections/{id}/reconciliation', `/connections/${id}/reconciliation?from=2025-01-01&to=2025-06-30`, auth);
    await expectCall(204, 'DELETE', '/connections/{id}', `/connections/${id}`, auth);
    await expectCall(404, 'DELETE', '/connections/{id}', `/connections/${id}`, auth);
  });
});

describe('closed months, a key’s incident and its release', () => {
  it('GET /months → 200, 400; POST /months/{month}/close → 200, 409; GET /keys/{hash}/incident → 200, 404; POST /keys/{hash}/release → 200, 409', async () => {
    const auth = { token: user.token };
    await expectCall(200, 'GET', '/months', '/months', auth);
    await expectCall(400, 'GET', '/months', '/months?from=2020-01&to=2026-11', auth);
    await expectCall(409, 'POST', '/months/{month}/close', `/months/${new Date().toISOString().slice(0, 7)}/close`, { ...auth, body: {} });
    await expectCall(200, 'POST', '/months/{month}/close', '/months/2024-01/close', { ...auth, body: { force: true } });
    // A stopping spend-anomaly rule and a new reporter key spending past its floor: the ingest that sees the rate holds it.
    await api('/alert-rules', { method: 'POST', token: user.token, body: { type: 'spend_anomaly', name: 'Runaway keys', channels: ['email'], config: { minUsdPerHour: 1, multiplier: 2, action: 'stop' } } });
    const hash = newKeyHash();
    for (let i = 0; i < 2; i++) {
      await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event(hash, { costUsd: 5 })] } });
    }
    await expectCall(200, 'GET', '/keys/{hash}/incident', `/keys/${hash}/incident`, auth);
    await expectCall(404, 'GET', '/keys/{hash}/incident', `/keys/${'b'.repeat(64)}/incident`, auth);
    await expectCall(200, 'POST', '/keys/{hash}/release', `/keys/${hash}/release`, auth);
    await expectCall(409, 'POST', '/keys/{hash}/release', `/keys/${hash}/release`, auth);
  });
});

describe('coverage', () => {
  it('every route answered a validated success, and every route that can refuse a validated problem', () => {
    const missing: string[] = [];
    for (const route of routes) {
      const statuses = [...(seen.get(`${route.method} ${route.path}`) ?? [])];
      if (!statuses.some((s) => s < 300)) missing.push(`${route.method} ${route.path}: no success`);
      // /health and /openapi.json have no way to fail on demand (only 429/500).
      if (route.auth !== 'none' || route.handler.startsWith('auth/')) {
        if (!statuses.some((s) => s >= 400)) missing.push(`${route.method} ${route.path}: no error`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('Prism forwarded and validated a success of every route, and the document refused only what the API refuses', () => {
    const missing = routes
      .map((route) => `${route.method} ${route.path}`)
      .filter((key) => ![...(forwarded.get(key) ?? [])].some((s) => s < 300));
    expect(missing).toEqual([]);
    const errors = [...forwarded.values()].flatMap((statuses) => [...statuses]).filter((s) => s >= 400);
    expect(errors.length, 'problem answers validated by Prism').toBeGreaterThan(20);
    expect(refusedByDocument).toBeGreaterThan(0);
  });
});
