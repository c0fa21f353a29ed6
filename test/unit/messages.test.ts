/**
 * Validation messages a person can act on (issue 9 item 7): bad inputs walked across every schema of the route
 * table (the fuzzer's specs: bodies, the items checked one by one, query strings), and no message may be a bare
 * generic one — each names its field and says what was expected.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import { safeParse } from 'zod/mini';
import { issuesToFieldErrors, validate } from '#shared/http/validate.ts';
import type { HttpError } from '#shared/http/errors.ts';
import { IngestEvent } from '#shared/ingest/schemas.ts';
import { RegisterBody } from '#shared/auth/schemas.ts';
import { IngestBody } from '#shared/ingest/schemas.ts';
import { ROUTE_SPECS, fieldNames, mutated, toJsonText, type Json, type Tenant } from '../fuzz/arbitraries.ts';

const tenant: Tenant = {
  email: 'walk@example.com',
  password: 'Passw0rdWalk',
  accountId: 'br_01JZ3N5Q8W0000000000000000',
  userId: 'usr_01JZ3N5Q8W0000000000000000',
  token: 't',
  refreshToken: 'r',
  ingestKey: `brk_${'A'.repeat(43)}`,
  ingestKeyId: 'ik_01JZ3N5Q8W0000000000000000',
  keyHash: 'a'.repeat(64),
  budgetId: 'bud_01JZ3N5Q8W0000000000000000',
  ruleId: 'rul_01JZ3N5Q8W0000000000000000',
  alertId: 'alt_01JZ3N5Q8W0000000000000000',
  invitationId: 'inv_01JZ3N5Q8W0000000000000000',
  exportId: 'exp_01JZ3N5Q8W0000000000000000',
  connectionId: 'con_01JD8X5ZQ4M7N2P3R6S9T0V1W3',
};

/** Generic wordings: zod's defaults and the like, which say neither the field nor what it must be. */
const GENERIC = [/^invalid input/i, /^invalid$/i, /^required\.?$/i, /^unknown field\.?$/i, /^too (small|big)/i, /^invalid (option|type|value)/i, /^expected /i];
const isGeneric = (message: string) => message.trim() === '' || GENERIC.some((re) => re.test(message.trim()));

/** The messages a schema gives for `value` (none when it is valid). */
function messagesOf(schema: $ZodType, value: unknown): { path: string; message: string }[] {
  const result = safeParse(schema, value);
  return result.success ? [] : issuesToFieldErrors(result.error.issues);
}

/** A few hand-picked bad values for every field a schema names: wrong types, empty, too long, null, nesting. */
const BAD_VALUES: unknown[] = [123, -1, 1.5, 'x', '', 'y'.repeat(5000), true, null, [], [1], {}, { a: 1 }];

function badInputs(valid: Record<string, unknown>): unknown[] {
  const out: unknown[] = [{}, [], 'text', null, { ...valid, unexpected: 1 }];
  for (const key of Object.keys(valid)) {
    const { [key]: _dropped, ...rest } = valid;
    out.push(rest);
    for (const bad of BAD_VALUES) out.push({ ...valid, [key]: bad });
  }
  return out;
}

const specs = Object.entries(ROUTE_SPECS);

describe('no bare generic validation message', () => {
  it.each(specs.filter(([, s]) => s.body).map(([k, s]) => [k, s] as const))('%s: bodies', (_key, spec) => {
    const body = spec.body!;
    const names = fieldNames(body.schema, ...(body.nested ?? []));
    const valid = fc.sample(body.valid(tenant), { numRuns: 5, seed: 7 }).map((v) => JSON.parse(toJsonText(v)) as Record<string, unknown>);
    const inputs = [
      ...valid.flatMap((v) => (v && typeof v === 'object' && !Array.isArray(v) ? badInputs(v) : [])),
      ...fc.sample(mutated(body.valid(tenant), names), { numRuns: 200, seed: 11 }).map((v: Json) => JSON.parse(toJsonText(v)) as unknown),
    ];
    let seen = 0;
    for (const input of inputs) {
      const schemas = [body.schema, ...(body.nested ?? [])];
      const events = (input as { events?: unknown } | null)?.events;
      const values = [input, ...(body.nested && Array.isArray(events) ? events : [])];
      for (const schema of schemas) {
        for (const value of schema === body.schema ? [input] : values.slice(1)) {
          for (const error of messagesOf(schema, value)) {
            seen++;
            expect(isGeneric(error.message), `${error.path}: ${error.message} (input ${JSON.stringify(value)?.slice(0, 200)})`).toBe(false);
          }
        }
      }
    }
    expect(seen).toBeGreaterThan(0);
  });

  it.each(specs.filter(([, s]) => s.query).map(([k, s]) => [k, s] as const))('%s: query strings', (_key, spec) => {
    const query = spec.query!;
    const fields = Object.keys(query.fields(tenant));
    let seen = 0;
    for (const field of fields) {
      for (const bad of ['', 'x', '-1', '0', '101', '9999-12-31', '1999-12-31', 'a'.repeat(3000), '1.5']) {
        for (const error of messagesOf(query.schema, { [field]: bad })) {
          seen++;
          expect(isGeneric(error.message), `${field}=${bad.slice(0, 20)} → ${error.path}: ${error.message}`).toBe(false);
        }
      }
      for (const error of messagesOf(query.schema, { [field]: 7 })) expect(isGeneric(error.message), error.message).toBe(false);
    }
    for (const error of messagesOf(query.schema, { nope: '1' })) {
      seen++;
      expect(isGeneric(error.message), error.message).toBe(false);
    }
    expect(seen).toBeGreaterThan(0);
  });
});

describe('messages say what was expected', () => {
  const only = (schema: $ZodType, value: unknown) => {
    try {
      validate(schema, value, 'body');
    } catch (error) {
      return (error as HttpError).errors ?? [];
    }
    return [];
  };

  it('firstName must be a string of 1–100 characters', () => {
    const valid = { email: 'a@example.com', password: 'Passw0rdX', firstName: 'A', lastName: 'B', companyName: 'C' };
    for (const firstName of [7, '', 'x'.repeat(101), null]) {
      expect(only(RegisterBody, { ...valid, firstName })).toEqual([{ path: 'firstName', message: 'firstName must be a string of 1–100 characters.' }]);
    }
    expect(only(RegisterBody, { ...valid, firstName: undefined })).toEqual([{ path: 'firstName', message: 'firstName must be a string of 1–100 characters.' }]);
  });

  it('events must be an array of 1–1000 events', () => {
    for (const events of ['x', [], Array(1001).fill({})]) {
      expect(only(IngestBody, { events })).toEqual([{ path: 'events', message: 'events must be an array of 1–1000 events.' }]);
    }
  });

  it('an unknown field says which and that it is not accepted', () => {
    expect(only(z.strictObject({ a: z.string() }), { a: 'x', b: 1 })).toEqual([{ path: 'b', message: 'b is not a field of this request; leave it out.' }]);
  });

  it('an event’s fields are described from their schema', () => {
    const errors = messagesOf(IngestEvent, { requestId: 5, keyHash: 'a'.repeat(64), provider: 'openai', model: 'm', inputTokens: 1.5, outputTokens: 'x', keyHint: 3 });
    expect(errors).toEqual(
      expect.arrayContaining([
        { path: 'requestId', message: 'requestId must be a string.' },
        { path: 'keyHint', message: 'keyHint must be a string of 1–32 characters.' },
        { path: 'outputTokens', message: 'outputTokens must be a number.' },
      ]),
    );
    for (const e of errors) expect(isGeneric(e.message), e.message).toBe(false);
  });
});
