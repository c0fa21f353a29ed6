import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { parseJsonObject, rawBody } from '#shared/http/body.ts';
import { malformedStrings, validate } from '#shared/http/validate.ts';
import { isQueryDate, queryDate } from '#shared/http/dates.ts';
import { breakdownRange } from '#shared/keys/service.ts';
import { problemResponse, PROBLEM_CONTENT_TYPE } from '#shared/http/problem.ts';
import { Conflict, HttpError, NotFound, ValidationError } from '#shared/http/errors.ts';
import { created, httpHandler } from '#shared/http/handler.ts';
import { authFromClaims, authenticate } from '#shared/http/auth-context.ts';
import { apiEvent, lambdaContext } from './helpers.ts';

const statusOf = (fn: () => unknown): number => {
  try {
    fn();
  } catch (error) {
    return (error as HttpError).status;
  }
  return 0;
};

describe('parseJsonObject', () => {
  it('parses an object', () => {
    expect(parseJsonObject('{"a":1,"b":{"c":[1,2]}}')).toEqual({ a: 1, b: { c: [1, 2] } });
  });
  it.each([
    ['empty', ''],
    ['whitespace', '  \n'],
    ['malformed', '{"a":'],
    ['an array', '[1,2]'],
    ['a string', '"x"'],
    ['a number', '42'],
    ['null', 'null'],
  ])('refuses %s with 400', (_name, text) => {
    expect(statusOf(() => parseJsonObject(text))).toBe(400);
  });
  it.each(['__proto__', 'constructor', 'prototype'])('refuses the key %s at any depth', (key) => {
    expect(statusOf(() => parseJsonObject(`{"${key}":{"admin":true}}`))).toBe(400);
    expect(statusOf(() => parseJsonObject(`{"a":[{"${key}":1}]}`))).toBe(400);
    expect(statusOf(() => parseJsonObject(`{"a":{"\\u005f_proto__":1}}`.replace('__proto__', key)))).toBe(400);
  });
  it('answers 413 past the size cap, counting bytes not characters', () => {
    expect(statusOf(() => parseJsonObject(`{"a":"${'x'.repeat(100)}"}`, 50))).toBe(413);
    expect(statusOf(() => parseJsonObject(`{"a":"${'é'.repeat(20)}"}`, 40))).toBe(413);
    expect(parseJsonObject(`{"a":"${'x'.repeat(10)}"}`, 50)).toEqual({ a: 'x'.repeat(10) });
  });
  it('decodes base64 bodies', () => {
    expect(rawBody(Buffer.from('{"a":1}').toString('base64'), true)).toBe('{"a":1}');
    expect(rawBody(undefined, false)).toBe('');
  });
});

describe('validate', () => {
  const Schema = z.strictObject({ limit: z.number().check(z.positive()), nested: z.optional(z.strictObject({ name: z.string() })) });
  it('returns the parsed value', () => {
    expect(validate(Schema, { limit: 3 }, 'body')).toEqual({ limit: 3 });
  });
  it('lists every problem with its path, unknown fields included', () => {
    try {
      validate(Schema, { limit: -1, accountId: 'br_x', nested: { name: 3, spend: 1 } }, 'body');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      const paths = (error as ValidationError).errors!.map((e) => e.path).sort();
      expect(paths).toEqual(['accountId', 'limit', 'nested.name', 'nested.spend']);
    }
  });
  it('prefixes query and path errors', () => {
    try {
      validate(z.strictObject({ limit: z.string() }), {}, 'query');
      expect.unreachable();
    } catch (error) {
      expect((error as ValidationError).errors![0]!.path).toBe('query.limit');
    }
  });
});

describe('problemResponse', () => {
  it('renders an HttpError as RFC 9457 problem+json', () => {
    const res = problemResponse(new Conflict('Taken.', 'email-taken'), 'req-9');
    expect(res.statusCode).toBe(409);
    expect(res.headers!['content-type']).toBe(PROBLEM_CONTENT_TYPE);
    expect(JSON.parse(res.body!)).toEqual({
      type: '/problems/email-taken',
      title: 'Conflict.',
      status: 409,
      detail: 'Taken.',
      instance: '/requests/req-9',
    });
  });
  it('never shows the text of an unexpected error', () => {
    const error = new Error('ResourceNotFoundException: arn:aws:dynamodb:us-east-1:123:table/secret at stack');
    const res = problemResponse(error, 'req-9');
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('dynamodb');
    expect(res.body).not.toContain('stack');
    expect(JSON.parse(res.body!).type).toBe('/problems/internal-error');
  });
});

describe('authFromClaims', () => {
  const good = { token_use: 'id', 'custom:accountId': 'br_01JZ3N5Q8W0000000000000000', 'custom:userId': 'usr_01JZ3N5Q8W0000000000000000', email: 'a@b.co' };
  it('takes the account and user from the claims', () => {
    expect(authFromClaims(good)).toEqual({ accountId: good['custom:accountId'], userId: good['custom:userId'], email: 'a@b.co' });
  });
  it.each([
    ['no account', { ...good, 'custom:accountId': undefined }],
    ['a malformed account', { ...good, 'custom:accountId': 'acct_1' }],
    ['no user', { ...good, 'custom:userId': undefined }],
    ['an access token', { ...good, token_use: 'access' }],
  ])('refuses %s with 401', (_name, claims) => {
    expect(statusOf(() => authFromClaims(claims))).toBe(401);
  });
});

describe('httpHandler', () => {
  const Body = z.strictObject({ name: z.string().check(z.minLength(1)) });
  const echo = httpHandler({ auth: 'none', body: Body }, async ({ body }) => created({ hello: body.name }));
  // The claims part of jwtAuth (its user and role check reads the table: test/integration/roles.test.ts).
  const authed = httpHandler({ auth: authenticate }, async ({ auth }) => created({ accountId: auth.accountId }));
  const failing = httpHandler({ auth: 'none' }, async () => {
    throw new Error('secret internals');
  });
  const notFound = httpHandler({ auth: 'none' }, async () => {
    throw new NotFound();
  });

  it('parses, validates and replies with JSON and the request id', async () => {
    const res = await echo(apiEvent({ body: '{"name":"x"}' }), lambdaContext);
    expect(res.statusCode).toBe(201);
    expect(res.headers!['content-type']).toBe('application/json');
    expect(res.headers!['x-request-id']).toBe('req-1');
    expect(JSON.parse(res.body!)).toEqual({ hello: 'x' });
  });
  it('answers a validation problem with field paths', async () => {
    const res = await echo(apiEvent({ body: '{"name":"","extra":1}' }), lambdaContext);
    expect(res.statusCode).toBe(400);
    expect(res.headers!['content-type']).toBe(PROBLEM_CONTENT_TYPE);
    const problem = JSON.parse(res.body!);
    expect(problem.type).toBe('/problems/validation-error');
    expect(problem.errors.map((e: { path: string }) => e.path).sort()).toEqual(['extra', 'name']);
  });
  it('answers malformed JSON with 400 and a too-large body with 413', async () => {
    expect((await echo(apiEvent({ body: '{nope' }), lambdaContext)).statusCode).toBe(400);
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    expect((await echo(apiEvent({ body: big }), lambdaContext)).statusCode).toBe(413);
  });
  it('hides internals of unexpected errors behind a 500', async () => {
    const res = await failing(apiEvent(), lambdaContext);
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('secret');
  });
  it('maps typed errors', async () => {
    expect((await notFound(apiEvent(), lambdaContext)).statusCode).toBe(404);
  });
  it('reads the account from verified authorizer claims only', async () => {
    const claims = { token_use: 'id', 'custom:accountId': 'br_01JZ3N5Q8W0000000000000000', 'custom:userId': 'usr_01JZ3N5Q8W0000000000000000' };
    const res = await authed(apiEvent({ claims }), lambdaContext);
    expect(JSON.parse(res.body!)).toEqual({ accountId: claims['custom:accountId'] });
    // A body naming another account is no way in either: this operation takes no body (400).
    expect((await authed(apiEvent({ claims, body: '{"accountId":"br_other"}' }), lambdaContext)).statusCode).toBe(400);
  });
  it('a body that is not JSON by its Content-Type: 415 problem+json, before it is read', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}]) {
      const res = await echo(apiEvent({ body: '{"name":"x"}', headers }), lambdaContext);
      expect(res.statusCode, JSON.stringify(headers)).toBe(415);
      expect(res.headers!['content-type']).toBe(PROBLEM_CONTENT_TYPE);
      expect(JSON.parse(res.body!)).toMatchObject({ type: '/problems/unsupported-media-type', status: 415 });
    }
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/merge-patch+json']) {
      expect((await echo(apiEvent({ body: '{"name":"x"}', headers: { 'content-type': type } }), lambdaContext)).statusCode, type).toBe(201);
    }
    // An empty body is a 400 (a body is required), whatever its type.
    expect((await echo(apiEvent({ body: '', headers: { 'content-type': 'text/plain' } }), lambdaContext)).statusCode).toBe(400);
  });
  it('an operation without a body: none or {} is accepted, anything else is 400 (never ignored silently)', async () => {
    const none = httpHandler({ auth: 'none' }, async () => created({ done: true }));
    for (const body of [undefined, '', '  ', '{}', ' { } ']) {
      expect((await none(apiEvent(body === undefined ? {} : { body }), lambdaContext)).statusCode, String(body)).toBe(201);
    }
    for (const body of ['{"a":1}', '[]', 'null', '0', 'hello', '{']) {
      const res = await none(apiEvent({ body }), lambdaContext);
      expect(res.statusCode, body).toBe(400);
      expect(JSON.parse(res.body!)).toMatchObject({ type: '/problems/malformed-request', detail: 'This operation takes no body: send none, or {}.' });
    }
    expect((await none(apiEvent({ body: 'x'.repeat(1024 * 1024 + 1) }), lambdaContext)).statusCode).toBe(413);
  });
  it('answers 401 when a jwt route has no authorizer claims and no token', async () => {
    const res = await authed(apiEvent(), lambdaContext);
    expect(res.statusCode).toBe(401);
    expect(res.headers!['content-type']).toBe(PROBLEM_CONTENT_TYPE);
  });
  it('adds CORS headers to successes and problems alike', async () => {
    const headers = { origin: 'https://app.example', 'content-type': 'application/json' };
    const ok = await echo(apiEvent({ body: '{"name":"x"}', headers }), lambdaContext);
    const bad = await echo(apiEvent({ body: '{', headers }), lambdaContext);
    expect(ok.headers!['Access-Control-Allow-Origin']).toBe('*');
    expect(bad.headers!['Access-Control-Allow-Origin']).toBe('*');
  });
  it('sends Cache-Control: no-store on successes, problems and 500s alike (AWS: no gateway adds it)', async () => {
    const responses = [
      await echo(apiEvent({ body: '{"name":"x"}' }), lambdaContext),
      await echo(apiEvent({ body: '{' }), lambdaContext),
      await authed(apiEvent(), lambdaContext),
      await failing(apiEvent(), lambdaContext),
      await notFound(apiEvent(), lambdaContext),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([201, 400, 401, 500, 404]);
    for (const res of responses) expect(res.headers!['cache-control'], String(res.statusCode)).toBe('no-store');
  });
  it('refuses a lone surrogate in the body, the query and the path with 400 naming where', async () => {
    const withQuery = httpHandler({ auth: 'none', query: z.strictObject({ q: z.optional(z.string()) }) }, async () => created({}));
    const body = await echo(apiEvent({ body: '{"name":"a\\ud800"}' }), lambdaContext);
    expect(body.statusCode).toBe(400);
    expect(JSON.parse(body.body!).errors).toEqual([{ path: 'name', message: 'name must be well-formed Unicode text (it contains a lone surrogate).' }]);
    const query = await withQuery(apiEvent({ queryStringParameters: { q: '\udfff' } }), lambdaContext);
    expect(query.statusCode).toBe(400);
    expect(JSON.parse(query.body!).errors[0].path).toBe('query.q');
    expect((await withQuery(apiEvent({ queryStringParameters: { q: 'ok 😀' } }), lambdaContext)).statusCode).toBe(201);
  });
});

describe('the one Unicode rule and the one date schema', () => {
  it('finds lone surrogates at any depth, in values and keys; pairs are fine', () => {
    expect(malformedStrings({ a: ['ok', { b: 'x\ud83d' }], ['k\udc00']: 1, e: '😀' }).map((e) => e.path)).toEqual(['a.1.b', '']);
    expect(malformedStrings({ s: '\ud83d\ude00', t: 'plain' })).toEqual([]);
    expect(statusOf(() => validate(z.strictObject({ s: z.string() }), { s: '\ud800' }, 'body'))).toBe(400);
  });
  it.each([
    ['2000-01-01', true],
    ['2099-12-31', true],
    ['2024-02-29', true],
    ['1999-12-31', false],
    ['2100-01-01', false],
    ['9999-12-31', false],
    ['2023-02-29', false],
    ['2024-1-01', false],
    ['+02024-01-01', false],
  ])('queryDate %s → %s', (value, accepted) => {
    expect(isQueryDate(value)).toBe(accepted);
    expect(statusOf(() => validate(z.strictObject({ to: queryDate('to') }), { to: value }, 'query'))).toBe(accepted ? 0 : 400);
  });
  it('breakdownRange refuses a date past 2099 with a 400, not a crash', () => {
    expect(statusOf(() => breakdownRange({ to: '9999-12-31' }, new Date()))).toBe(400);
    expect(breakdownRange({ to: '2099-12-31' }, new Date())).toEqual({ from: '2099-12-01', to: '2099-12-31' });
  });
});
