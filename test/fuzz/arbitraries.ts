/**
 * fast-check arbitraries for fuzzing every route of shared/routes.ts, and the oracle that says which inputs are
 * INVALID (must answer 4xx and write nothing).
 *
 * Each route has a spec (`ROUTE_SPECS`, keyed `METHOD /path`) naming the zod schemas its handler validates with
 * (the same objects: field names and validity come from them, not from a copy) and a generator of VALID bodies
 * and queries. From those, `inputArbitrary` builds requests of every kind: valid ones, valid ones with one to
 * three mutations (a field dropped, replaced by junk, retyped, duplicated; an unknown, mass-assignment or
 * prototype key added, at any depth), objects of the route's real field names holding junk, any JSON value at
 * all, text that is not JSON, huge and deeply nested bodies, junk query strings and path parameters, and wrong
 * credentials. Bodies are built as a small JSON tree (`Json`) serialized by hand, so they can hold what
 * `JSON.stringify` cannot make: `__proto__` as an own key, a key twice, `1e999`.
 */
import { HANDLED_EVENTS } from '#shared/billing/webhook.ts';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { safeParse, strictObject } from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import type { Route } from '#shared/routes.ts';
import { ID_PREFIX, isId, type IdKind } from '#shared/ids.ts';
import { encodeCursor } from '#shared/http/cursor.ts';
import { malformedStrings } from '#shared/http/validate.ts';
import {
  ChangePasswordBody,
  ForgotPasswordBody,
  LoginBody,
  PatchMeBody,
  RefreshBody,
  RegisterBody,
  ResetPasswordBody,
  VerifyEmailBody,
} from '#shared/auth/schemas.ts';
import { CreateIngestKeyBody } from '#shared/ingest-keys/schemas.ts';
import { IngestBody, IngestEvent } from '#shared/ingest/schemas.ts';
import { priceEvent } from '#shared/ingest/events.ts';
import { KeyBreakdownQuery, LabelBody, ListKeysQuery } from '#shared/keys/schemas.ts';
import { CreateExportBody, CustomersQuery, ExportQuery, SpendQuery } from '#shared/spend/schemas.ts';
import { ProjectParams, ProjectTagsBody } from '#shared/tags/schemas.ts';
import { CloseMonthBody, MonthParams, MonthsQuery } from '#shared/months/schemas.ts';
import { CreateConnectionBody, PatchConnectionBody, ReconciliationQuery } from '#shared/connections/schemas.ts';
import { PriceParams, PutPriceBody } from '#shared/prices/schemas.ts';
import { CreateBudgetBody, PatchBudgetBody } from '#shared/budgets/schemas.ts';
import { CreateRuleBody, PatchRuleBody } from '#shared/rules/schemas.ts';
import { AcknowledgeBody, ListAlertsQuery } from '#shared/alerts/schemas.ts';
import { ListActionsQuery } from '#shared/enforcement/api.ts';
import { ALERT_TYPES } from '#shared/alerting/model.ts';
import { CheckoutBody } from '#shared/billing/schemas.ts';
import { ListUsersQuery, PatchUserBody } from '#shared/users/schemas.ts';
import { AcceptInvitationBody, InvitationQuery, CreateInvitationBody, ListInvitationsQuery } from '#shared/invitations/schemas.ts';
import { LOCAL_STRIPE_PRICES } from '#local/stripe-mock.ts';

// ------------------------------------------------------------------------------------------------------------
// The fuzzed account

/** A registered account with one resource of every kind, so that path parameters can name real ones. */
export interface Tenant {
  email: string;
  password: string;
  accountId: string;
  userId: string;
  token: string;
  refreshToken: string;
  /** An ingest key's secret and id. */
  ingestKey: string;
  ingestKeyId: string;
  /** A discovered provider key. */
  keyHash: string;
  budgetId: string;
  ruleId: string;
  alertId: string;
  /** A pending invitation of the account. */
  invitationId: string;
  /** An asynchronous spend export of the account (settled). */
  exportId: string;
  /** A connection of the account to the local Anthropic stand-in (first sync done, then paused: at rest). */
  connectionId: string;
}

/** The resource kind a path parameter names, from the path (`/budgets/{id}` → budget; `{hash}` → a key). */
/** `name`: a free-form name validated by the route's params schema (an own price's provider and model), not an id. */
export type ParamKind = IdKind | 'key' | 'name';

const RESOURCE_OF_SEGMENT: Record<string, IdKind> = {
  budgets: 'budget',
  'alert-rules': 'rule',
  alerts: 'alert',
  'ingest-keys': 'ingestKey',
  users: 'user',
  invitations: 'invitation',
  exports: 'export',
  connections: 'connection',
};

/** The kind of each `{param}` of a route's path; throws for a parameter nobody taught this file. */
export function paramKinds(route: Route): Record<string, ParamKind> {
  const kinds: Record<string, ParamKind> = {};
  const segments = route.path.split('/').filter(Boolean);
  segments.forEach((segment, i) => {
    const param = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (!param) return;
    if (param === 'hash') kinds[param] = 'key';
    // Free-form path parameters, validated by the route's params schema: an own price's provider and model, a month,
    // a project's connection and id (a project id is the provider's own).
    else if (segments[0] === 'prices' || segments[0] === 'months' || segments[0] === 'projects') kinds[param] = 'name';
    else {
      const kind = RESOURCE_OF_SEGMENT[segments[i - 1] ?? ''];
      if (!kind) throw new Error(`test/fuzz/arbitraries.ts: no resource kind known for {${param}} in ${route.path}`);
      kinds[param] = kind;
    }
  });
  return kinds;
}

/** The tenant's own resource of a kind. */
export function ownId(tenant: Tenant, kind: ParamKind): string {
  switch (kind) {
    case 'key':
      return tenant.keyHash;
    case 'name':
      return 'fuzz-model';
    case 'budget':
      return tenant.budgetId;
    case 'rule':
      return tenant.ruleId;
    case 'alert':
      return tenant.alertId;
    case 'ingestKey':
      return tenant.ingestKeyId;
    case 'user':
      return tenant.userId;
    case 'invitation':
      return tenant.invitationId;
    case 'export':
      return tenant.exportId;
    case 'connection':
      return tenant.connectionId;
    default:
      return tenant.accountId;
  }
}

/** `/budgets/{id}` with each parameter replaced (percent-encoded byte by byte). */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeComponent(params[name] ?? ''));
}

/** Percent-encodes the UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD, as any UTF-8 encoder does). */
export function encodeComponent(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------------------
// JSON with the corners JSON.stringify cannot make

/** A literal token written as is: `1e999`, `-0`, 30 digits. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object as its entries: a key may repeat and `__proto__` is an ordinary key. */
export class JsonObject {
  constructor(readonly entries: ReadonlyArray<readonly [string, Json]>) {}
}

export type Json = null | boolean | number | string | RawJson | JsonObject | readonly Json[];

export function toJsonText(value: Json): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonObject) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${(value as readonly Json[]).map(toJsonText).join(',')}]`;
  return JSON.stringify(value) ?? 'null';
}

/** A JsonObject from a record; undefined values are left out. */
export function obj(record: Record<string, Json | undefined>): JsonObject {
  return new JsonObject(Object.entries(record).filter((entry): entry is [string, Json] => entry[1] !== undefined));
}

/** Every field name a zod schema knows, at any depth (objects, unions, arrays, wrappers). */
export function fieldNames(...schemas: unknown[]): string[] {
  const names = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (schema: unknown): void => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const def = (schema as { _zod?: { def?: Record<string, any> } })._zod?.def;
    if (!def) return;
    switch (def.type) {
      case 'object':
        for (const [key, value] of Object.entries(def.shape as Record<string, unknown>)) {
          names.add(key);
          walk(value);
        }
        break;
      case 'union':
        for (const option of def.options as unknown[]) walk(option);
        break;
      case 'pipe':
        walk(def.in);
        walk(def.out);
        break;
      case 'array':
        walk(def.element);
        break;
      default:
        walk(def.innerType);
    }
  };
  schemas.forEach(walk);
  return [...names];
}

// ------------------------------------------------------------------------------------------------------------
// Junk

/** Keys no request schema has: mass assignment, prototype pollution, storage attributes. */
export const MASS_ASSIGNMENT_KEYS = ['accountId', 'spend', 'id', 'createdAt', 'updatedAt', 'userId', 'plan', 'keyCount', 'pk', 'sk', 'gsi1pk', 'lastTriggeredAt', 'acknowledgedBy'];
export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

const EXTREME_STRINGS = [
  '', ' ', '   ', '\t\r\n', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '\ufeff', '\u202eevil', '\u200b',
  '💸', '👨‍👩‍👧‍👦', 'Ω≈ç√∫', '𝕏𝕐ℤ', 'ﷺ', 'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇', '日本語テキスト',
  'null', 'undefined', 'NaN', 'Infinity', 'true', '0', '-1', '1e999', '0x10', '[]', '{}', '__proto__', 'constructor',
  '<script>alert(1)</script>', "' OR '1'='1", '"; DROP TABLE accounts; --', '${jndi:ldap://127.0.0.1/x}', '{{7*7}}', '../../etc/passwd',
  '%00', '%2F', '%', '#', '##', 'ACCOUNT#br_01JZ3N5Q8W0000000000000000', 'CFG#BUDGET#', 'KEY#', 'EVENT#', 'USER#', 'ALERT#',
  'br_01JZ3N5Q8W0000000000000000', 'bud_01JZ3N5Q8W0000000000000000', 'rul_', 'alt_01jz3n5q8w0000000000000000',
  '2026-13-45', '2026-02-30', '0000-01-01', '9999-12-31', '2026-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '1970-01-01T00:00:00+14:00',
  'GROWTH ', 'growth', 'FREE', 'ENTERPRISE', 'ACCOUNT', 'KEY', 'daily', 'hourly', 'email', 'sms', 'webhook', 'cost_threshold',
  'http://169.254.169.254/latest/meta-data/', 'file:///etc/passwd', 'javascript:alert(1)', 'https://user:pass@127.0.0.1/x',
  'a'.repeat(101), 'A'.repeat(129), 'b'.repeat(257), 'é'.repeat(101), '💸'.repeat(60),
];

export const junkString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...EXTREME_STRINGS), weight: 4 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ minLength: 90, maxLength: 300 }), weight: 1 },
  { arbitrary: fc.constantFrom(2_000, 10_000, 100_000).map((n) => 'x'.repeat(n)), weight: 1 },
);

const RAW_NUMBERS = ['1e999', '-1e999', '1e-999', '-0', '0.0', '1E2', '123456789012345678901234567890', '0.1234567', '1.0000000000000002', '99999999999999999999.5', '1000000000.0000001'];

export const junkNumber: fc.Arbitrary<Json> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    0, -0, -1, 0.5, 1e-7, 1e-6, 0.1 + 0.2, 1e9, 1e9 + 0.000001, 1e9 + 1, 2 ** 31, 2 ** 53, 2 ** 53 + 2,
    Number.MAX_VALUE, Number.MIN_VALUE, -Number.MAX_VALUE, 100.001, 33.333, 1.4999, 1.5, 1000.0001, 1e21,
  ),
  fc.constantFrom(...RAW_NUMBERS).map((text): Json => new RawJson(text)),
);

const junkPrimitive: fc.Arbitrary<Json> = fc.oneof(fc.constant(null), fc.boolean(), junkNumber, junkString);

const junkKey = (realNames: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: realNames.length ? fc.constantFrom(...realNames) : fc.string({ maxLength: 8 }), weight: 4 },
    { arbitrary: fc.constantFrom(...MASS_ASSIGNMENT_KEYS, ...PROTOTYPE_KEYS), weight: 2 },
    { arbitrary: fc.string({ maxLength: 10 }), weight: 1 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 8 }), weight: 1 },
  );

/** Any JSON value, its object keys mostly the route's real field names. */
export function junkValue(realNames: readonly string[] = []): fc.Arbitrary<Json> {
  const keys = junkKey(realNames);
  return fc.letrec<{ value: Json; array: Json; object: Json }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, junkPrimitive, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.array(fc.tuple(keys, tie('value')), { maxLength: 5 }).map((entries): Json => new JsonObject(entries)),
  })).value;
}

/** Text that is not a JSON object body: broken JSON, other JSON values, BOM, deep nesting, more than 1 MB. */
export const junkText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '', ' ', '{', '}', '[1,2', "{'a':1}", '\ufeff{}', 'null', 'true', '0', '""', '[]', '[{}]', '{"a":1}garbage', '{"a":1,}', '{"a" 1}',
      'NaN', '{"a":NaN}', '{"a":undefined}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}',
      '{"a":"\\ud800"}', '{"a":"\\u0000"}', '{"a":"\\x41"}', '\u0000', '{}'.repeat(3), '{"":""}', '{"a":1}\n{"b":2}',
    ),
    weight: 3,
  },
  {
    arbitrary: fc.constantFrom(10, 1_000, 100_000).chain((n) =>
      fc.constantFrom('['.repeat(n) + ']'.repeat(n), '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
    ),
    weight: 1,
  },
  { arbitrary: fc.constant(`{"name":"${'x'.repeat(1024 * 1024)}"}`), weight: 1 },
);

// ------------------------------------------------------------------------------------------------------------
// Mutations of a valid body

type MutationOp = 'replace' | 'drop' | 'add' | 'duplicate' | 'null' | 'retype' | 'wrap';

interface Mutation {
  op: MutationOp;
  /** Which container (object or array, pre-order, root = 0) and which member of it; taken modulo their counts. */
  container: number;
  member: number;
  key: string;
  junk: Json;
}

const mutationArb = (realNames: readonly string[]): fc.Arbitrary<Mutation> =>
  fc.record({
    op: fc.constantFrom<MutationOp>('replace', 'replace', 'drop', 'add', 'duplicate', 'null', 'retype', 'wrap'),
    container: fc.nat(),
    member: fc.nat(),
    key: junkKey(realNames),
    junk: junkValue(realNames),
  });

/** `12` → `"12"`, `"12"` → `12`, `true` → `"true"`, ... : the same content in the wrong JSON type. */
function retype(value: Json): Json {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return value.trim() !== '' && !Number.isNaN(Number(value)) ? Number(value) : [value];
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length ? (value as readonly Json[])[0]! : new JsonObject([]);
  return [value];
}

function countContainers(value: Json): number {
  if (value instanceof JsonObject) return 1 + value.entries.reduce((n, [, v]) => n + countContainers(v), 0);
  if (Array.isArray(value)) return 1 + (value as readonly Json[]).reduce((n: number, v) => n + countContainers(v), 0);
  return 0;
}

/** Applies one mutation at the container numbered `target` (pre-order). */
function applyAt(value: Json, target: number, m: Mutation, counter: { n: number }): Json {
  const here = counter.n;
  if (value instanceof JsonObject) {
    counter.n += 1;
    if (here === target) return mutateObject(value, m);
    return new JsonObject(value.entries.map(([k, v]) => [k, applyAt(v, target, m, counter)] as const));
  }
  if (Array.isArray(value)) {
    counter.n += 1;
    const items = value as readonly Json[];
    if (here === target) return mutateArray(items, m);
    return items.map((v) => applyAt(v, target, m, counter));
  }
  return value;
}

function mutateObject(o: JsonObject, m: Mutation): Json {
  const entries = [...o.entries];
  const i = entries.length ? m.member % entries.length : 0;
  const at = entries[i];
  switch (m.op) {
    case 'add':
      return new JsonObject([...entries, [m.key, m.junk]]);
    case 'duplicate':
      return at ? new JsonObject([...entries, [at[0], m.junk]]) : new JsonObject([[m.key, m.junk]]);
    case 'drop':
      return new JsonObject(entries.filter((_, j) => j !== i));
    case 'null':
      return at ? new JsonObject(entries.map((e, j) => (j === i ? [e[0], null] : e))) : o;
    case 'retype':
      return at ? new JsonObject(entries.map((e, j) => (j === i ? [e[0], retype(e[1])] : e))) : o;
    case 'wrap':
      return at ? new JsonObject(entries.map((e, j) => (j === i ? [e[0], [e[1]]] : e))) : [o];
    default:
      return at ? new JsonObject(entries.map((e, j) => (j === i ? [e[0], m.junk] : e))) : new JsonObject([[m.key, m.junk]]);
  }
}

function mutateArray(items: readonly Json[], m: Mutation): Json {
  const i = items.length ? m.member % items.length : 0;
  switch (m.op) {
    case 'add':
    case 'duplicate':
      return [...items, m.op === 'add' ? m.junk : (items[i] ?? m.junk)];
    case 'drop':
      return items.filter((_, j) => j !== i);
    case 'null':
      return items.map((v, j) => (j === i ? null : v));
    case 'retype':
      return items.map((v, j) => (j === i ? retype(v) : v));
    case 'wrap':
      return new JsonObject([['items', items]]);
    default:
      return items.length ? items.map((v, j) => (j === i ? m.junk : v)) : [m.junk];
  }
}

export function mutate(value: Json, mutations: readonly Mutation[]): Json {
  let current = value;
  for (const m of mutations) {
    const count = countContainers(current);
    if (count === 0) return m.junk;
    current = applyAt(current, m.container % count, m, { n: 0 });
  }
  return current;
}

/** A valid value with one to three mutations. */
export function mutated(valid: fc.Arbitrary<Json>, realNames: readonly string[]): fc.Arbitrary<Json> {
  return fc.tuple(valid, fc.array(mutationArb(realNames), { minLength: 1, maxLength: 3 })).map(([v, ms]) => mutate(v, ms));
}

// ------------------------------------------------------------------------------------------------------------
// Valid values

const DAY_MS = 86_400_000;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export const hex64: fc.Arbitrary<string> = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
export const ulid: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...'01234567'), fc.array(fc.constantFrom(...CROCKFORD), { minLength: 25, maxLength: 25 }))
  .map(([first, rest]) => first + rest.join(''));
export const idOf = (kind: IdKind): fc.Arbitrary<string> => ulid.map((u) => `${ID_PREFIX[kind]}_${u}`);

const money = (positive: boolean): fc.Arbitrary<Json> =>
  fc.oneof(
    fc.integer({ min: positive ? 1 : 0, max: 1_000_000_000 }),
    fc.integer({ min: positive ? 1 : 0, max: 100_000_000 }).map((n) => n / 100),
    fc.constantFrom(0.000001, 1_000_000_000, 0.01, 123.456789, 5),
  );
const percentage = fc.integer({ min: 1, max: 10_000 }).map((n) => n / 100);
const displayName: fc.Arbitrary<string> = fc.oneof(
  fc.string({ minLength: 1, maxLength: 100 }).filter((s) => s.trim() !== ''),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 25 }).filter((s) => s.trim() !== ''),
  fc.constantFrom('Production', 'Ünïcödé 💸', ' padded ', 'a'.repeat(100), '日本語', '<b>bold</b>'),
  // Lone surrogates: refused by the Unicode rule (400) wherever they appear.
  fc.constantFrom('Team \ud800', '\udfff', 'a\udc00b', '💸\ud83d'),
);
/** Recent days, and the ends of the accepted range (2000-01-01…2099-12-31) with their neighbours outside it. */
const day: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -800, max: 30 }).map((offset) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('2000-01-01', '2000-01-02', '1999-12-31', '2099-12-31', '2099-12-30', '2100-01-01', '9999-12-31', '0000-01-01', '2099-12-01', '2000-02-29', '2100-02-29'),
  },
);
/** An ISO timestamp within the accepted window (35 days back, 5 minutes ahead), in several notations. */
const timestamp: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: -34 * DAY_MS, max: 4 * 60_000 }), fc.constantFrom('Z', 'ms', '+02:00', '-05:30'))
  .map(([offset, style]) => {
    const at = new Date(Date.now() + offset);
    if (style === 'ms') return at.toISOString();
    if (style === 'Z') return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const sign = style[0] === '+' ? 1 : -1;
    const [h, m] = style.slice(1).split(':').map(Number);
    const local = new Date(at.getTime() + sign * (h! * 60 + m!) * 60_000);
    return local.toISOString().replace('Z', style);
  });
/** Webhook URLs that are valid on the local stack and reach nothing (a closed port on loopback). */
const WEBHOOK_URL = 'http://127.0.0.1:9/burnrate-fuzz';
const channels: fc.Arbitrary<{ channels: string[]; webhookUrl?: string }> = fc.constantFrom(
  { channels: ['email'] },
  { channels: ['webhook'], webhookUrl: WEBHOOK_URL },
  { channels: ['email', 'webhook'], webhookUrl: WEBHOOK_URL },
);

/** A non-empty subset of a valid object's fields (PATCH bodies). */
function someFields(valid: fc.Arbitrary<JsonObject>): fc.Arbitrary<Json> {
  return fc.tuple(valid, fc.nat()).map(([o, bits]) => {
    const kept = o.entries.filter((_, i) => (bits >> i) & 1);
    return new JsonObject(kept.length ? kept : o.entries.slice(0, 1));
  });
}

/** Dollars near the money ceiling's arithmetic: the most one event may cost, and values a micro-dollar off it. */
const nearCeilingUsd = fc.constantFrom(1_000_000_000, 999_999_999.999999, 999_999_999.999998, 999_999_999.5, 0.000001);

/**
 * 8–12 valid events of up to $1,000,000,000 on one key: together past the $9,000,000,000 ceiling of a key's and
 * an account's spend (shared/ingest/ceiling.ts), so the fuzzed account sits at the ceiling and every later batch
 * meets it too.
 */
const ceilingBatch = (t: Tenant): fc.Arbitrary<Json> =>
  fc
    .tuple(fc.array(fc.uuid(), { minLength: 8, maxLength: 12 }), fc.oneof(fc.constant(t.keyHash), hex64), nearCeilingUsd)
    .map(([ids, keyHash, costUsd]) =>
      obj({ events: ids.map((requestId) => obj({ requestId, keyHash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd })) }),
    );

const ingestEvent = (t: Tenant): fc.Arbitrary<JsonObject> =>
  fc
    .record(
      {
        requestId: fc.oneof(
          fc.uuid(),
          fc.string({ minLength: 1, maxLength: 128 }),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
          // Hard for storage: lone surrogates (refused: 400 by the Unicode rule), key separators, the longest allowed.
          fc.uuid().map((u) => `${u}\ud800`),
          fc.uuid().map((u) => `#${u}#EVENT`),
          fc.uuid().map((u) => `${u}${'💸'.repeat(46)}`),
        ),
        keyHash: fc.oneof(fc.constant(t.keyHash), hex64, fc.string().map((s) => sha256(`sk-${s}`))),
        keyHint: fc.oneof(fc.constantFrom('sk-…4f2a', '…abcd', '🔑', 'a\udfffb', ' \u0000 '), fc.string({ minLength: 1, maxLength: 32 })),
        provider: fc.oneof(fc.constantFrom('openai', 'anthropic', 'OpenAI', ' mistral ', 'x.ai', 'a_b-c'), fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,31}$/)),
        model: fc.oneof(
          fc.constantFrom('gpt-4o', 'gpt-4o-mini', 'gpt-4o-2024-08-06', 'gpt-4.1', 'claude-sonnet-4', 'claude-3-5-haiku', 'GPT-4O', 'unknown-model', 'модель', '🤖', 'gpt\ud800', '💸'.repeat(64), 'İ'.repeat(100)),
          fc.string({ minLength: 1, maxLength: 128 }),
        ),
        inputTokens: fc.oneof(fc.nat({ max: 10_000 }), fc.constantFrom(0, 1_000_000_000)),
        outputTokens: fc.oneof(fc.nat({ max: 10_000 }), fc.constantFrom(0, 1_000_000_000)),
        cachedInputTokens: fc.nat({ max: 100 }),
        cacheWriteInputTokens: fc.nat({ max: 100 }),
        cacheWrite1hInputTokens: fc.nat({ max: 100 }),
        costUsd: fc.oneof(fc.integer({ min: 0, max: 100_000_000 }).map((n) => n / 1_000_000), fc.constantFrom(0, 1_000_000_000, 0.000001), nearCeilingUsd),
        timestamp,
      },
      { requiredKeys: ['requestId', 'keyHash', 'provider', 'model', 'inputTokens', 'outputTokens'] },
    )
    .map((e) => obj(e));

/**
 * A signed-looking Stripe event: handled and unhandled types, about the tenant or nobody, with subscription,
 * checkout-session and invoice objects whose fields are right, missing or junk.
 */
const stripeEvent = (t: Tenant): fc.Arbitrary<Json> => {
  const epoch = fc.oneof(fc.integer({ min: 1_600_000_000, max: 2_100_000_000 }), fc.constant(Math.floor(Date.now() / 1000)));
  const accountRef = fc.oneof(fc.constant(t.accountId), idOf('account'), junkString);
  const customer = fc.oneof(fc.constantFrom('cus_fuzz', 'cus_'), fc.string({ maxLength: 12 }).map((s) => `cus_${s}`), fc.constant(null));
  const subscriptionId = fc.oneof(fc.constantFrom('sub_fuzz', 'sub_'), fc.string({ maxLength: 12 }).map((s) => `sub_${s}`));
  const price = fc.oneof(fc.constantFrom(LOCAL_STRIPE_PRICES.GROWTH, LOCAL_STRIPE_PRICES.SCALE, 'price_unknown'), junkString);
  const item = fc.record({ price: price.map((id) => obj({ id, object: 'price' })), current_period_start: epoch, current_period_end: epoch }).map((r) => obj(r));
  const subscription = fc
    .record(
      {
        id: subscriptionId,
        object: fc.constant('subscription'),
        customer,
        status: fc.oneof(fc.constantFrom('active', 'trialing', 'past_due', 'canceled', 'incomplete', 'incomplete_expired', 'unpaid', 'paused'), junkString),
        items: fc.array(item, { maxLength: 2 }).map((data) => obj({ object: 'list', data })),
        metadata: accountRef.map((accountId) => obj({ accountId })),
      },
      { requiredKeys: ['id', 'object'] },
    )
    .map((r) => obj(r));
  const session = fc
    .record(
      {
        id: fc.constant('cs_fuzz'),
        object: fc.constant('checkout.session'),
        mode: fc.constantFrom('subscription', 'payment', 'setup'),
        subscription: fc.oneof(subscriptionId, fc.constant(null)),
        client_reference_id: fc.oneof(accountRef, fc.constant(null)),
        customer,
      },
      { requiredKeys: ['object'] },
    )
    .map((r) => obj(r));
  const line = fc
    .record({
      period: fc.record({ start: epoch, end: epoch }).map((r) => obj(r)),
      parent: fc
        .record({ type: fc.constant('subscription_item_details'), subscription_item_details: fc.record({ subscription: subscriptionId, proration: fc.boolean() }).map((r) => obj(r)) })
        .map((r) => obj(r)),
    })
    .map((r) => obj(r));
  const invoice = fc
    .record(
      {
        id: fc.constant('in_fuzz'),
        object: fc.constant('invoice'),
        customer,
        parent: fc.record({ subscription_details: fc.record({ subscription: subscriptionId, metadata: accountRef.map((accountId) => obj({ accountId })) }).map((r) => obj(r)) }).map((r) => obj(r)),
        lines: fc.array(line, { maxLength: 2 }).map((data) => obj({ object: 'list', data })),
      },
      { requiredKeys: ['object'] },
    )
    .map((r) => obj(r));
  const type = fc.oneof(
    fc.constantFrom(...HANDLED_EVENTS, 'customer.created'),
    junkString,
  );
  return fc
    .record(
      {
        id: fc.oneof(fc.string({ minLength: 1, maxLength: 16 }).map((s) => `evt_${s}`), junkString),
        object: fc.constant('event'),
        api_version: fc.constant('2026-10-28'),
        type,
        created: epoch,
        livemode: fc.boolean(),
        data: fc.oneof(subscription, session, invoice, junkValue(['object', 'id', 'customer'])).map((object) => obj({ object })),
      },
      { requiredKeys: ['id', 'type', 'created', 'data'] },
    )
    .map((r) => obj(r));
};

// ------------------------------------------------------------------------------------------------------------
// Route specs

export interface BodySpec {
  /** The schemas the handler (and its domain, for nested items) validates the body with. */
  schema: $ZodType;
  /** Nested schemas checked item by item by the domain (ingest events). */
  nested?: $ZodType[];
  /** A blank body counts as `{}` (POST /ingest-keys). */
  optional?: boolean;
  valid: (t: Tenant) => fc.Arbitrary<Json>;
  /** How many valid bodies in a hundred the robust phase sends (register: few, each makes a Cognito user). */
  validWeight?: number;
}

export interface QuerySpec {
  schema: $ZodType;
  /** Valid values per field. */
  fields: (t: Tenant) => Record<string, fc.Arbitrary<string>>;
}

export interface RouteSpec {
  body?: BodySpec;
  query?: QuerySpec;
  /** Stripe's webhook: the body is a signed event (no schema: the signature decides). */
  stripeEvent?: (t: Tenant) => fc.Arbitrary<Json>;
  /** The route writes on a request that carries no input at all (a rotation): such a request may write. */
  writesWithoutInput?: true;
  /** The params schema of a route whose path parameters are free-form names (`name` kind), else PriceParams. */
  params?: $ZodType;
}

const limit = fc.oneof(fc.integer({ min: 1, max: 100 }).map(String), fc.constantFrom('1', '50', '100', '001'));
/** Cursors: forged, of other lists, and ones signed with the real secret that hold junk positions. */
const cursor = (t: Tenant, lists: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    junkString.filter((s) => s.length > 0 && s.length <= 2048),
    fc.constantFrom('bm90LWEtY3Vyc29y.AAAA', 'a.b', 'a.b.c', '.', 'e30.', 'e30.e30'),
    fc
      .tuple(fc.constantFrom(...lists, 'keys', 'alerts:all', 'budgets'), fc.oneof(fc.constant(t.accountId), idOf('account')), junkValue(['pk', 'sk', 'c', 'h', 'gsi1pk', 'gsi1sk']))
      .map(([list, account, position]) => {
        try {
          return encodeCursor(account, list, JSON.parse(toJsonText(position)));
        } catch {
          return 'unsignable.cursor';
        }
      }),
  );

export const ROUTE_SPECS: Record<string, RouteSpec> = {
  'GET /health': {},
  'GET /openapi.json': {},
  'POST /auth/register': {
    body: {
      schema: RegisterBody,
      validWeight: 2,
      valid: () =>
        fc
          .record({
            email: fc.uuid().map((u) => `fuzz-${u.slice(0, 13)}@Example.com `),
            password: fc.string({ minLength: 0, maxLength: 20 }).map((s) => `Pw9${s}xxxxx`),
            firstName: displayName,
            lastName: displayName,
            companyName: displayName,
          })
          .map((r) => obj(r)),
    },
  },
  'POST /auth/login': {
    body: {
      schema: LoginBody,
      valid: (t) =>
        fc
          .record({
            email: fc.oneof(fc.constant(t.email), fc.constant(t.email.toUpperCase()), fc.uuid().map((u) => `nobody-${u}@example.com`)),
            password: fc.oneof(fc.constant(t.password), fc.string({ minLength: 1, maxLength: 40 })),
          })
          .map((r) => obj(r)),
    },
  },
  'POST /auth/refresh': {
    body: {
      schema: RefreshBody,
      valid: (t) =>
        fc
          .oneof(fc.constant(t.refreshToken), fc.constant(t.token), fc.string({ minLength: 1, maxLength: 200 }), fc.constant(`${t.refreshToken.slice(0, -4)}AAAA`))
          .map((refreshToken) => obj({ refreshToken })),
    },
  },
  'GET /auth/me': {},
  'PATCH /auth/me': {
    body: {
      schema: PatchMeBody,
      valid: () => someFields(fc.record({ firstName: displayName, lastName: displayName, alertEmails: fc.boolean() }).map((r) => obj(r))),
    },
  },
  // Link tokens no one was sent: a 400 invalid-token (the flows with real links: test/integration/identity.test.ts).
  'POST /auth/verify-email': { body: { schema: VerifyEmailBody, valid: () => fc.stringMatching(/^[A-Za-z0-9_-]{20,60}$/).map((token) => obj({ token })) } },
  'POST /auth/resend-verification': {},
  'POST /auth/forgot-password': {
    body: {
      schema: ForgotPasswordBody,
      validWeight: 2,
      valid: (t) => fc.oneof(fc.constant(t.email), fc.uuid().map((u) => `nobody-${u}@example.com`)).map((email) => obj({ email })),
    },
  },
  'POST /auth/reset-password': {
    body: {
      schema: ResetPasswordBody,
      valid: () =>
        fc
          .record({
            token: fc.stringMatching(/^[A-Za-z0-9_-]{20,60}$/),
            password: fc.string({ minLength: 0, maxLength: 20 }).map((s) => `Pw9${s}xxxxx`),
          })
          .map((r) => obj(r)),
    },
  },
  // Never the tenant's real password: a change would end the sessions the other routes' cases use.
  'POST /auth/change-password': {
    body: {
      schema: ChangePasswordBody,
      valid: (t) =>
        fc
          .record({
            currentPassword: fc.string({ minLength: 1, maxLength: 40 }).filter((p) => p !== t.password),
            newPassword: fc.string({ minLength: 0, maxLength: 20 }).map((s) => `Pw9${s}xxxxx`),
          })
          .map((r) => obj(r)),
    },
  },
  'POST /ingest-keys': {
    body: { schema: CreateIngestKeyBody, optional: true, valid: () => fc.option(displayName, { nil: undefined }).map((name) => obj({ name })) },
  },
  'GET /ingest-keys': {},
  'DELETE /ingest-keys/{id}': {},
  'POST /ingest': {
    body: {
      schema: IngestBody,
      nested: [IngestEvent],
      valid: (t) => fc.oneof({ arbitrary: fc.array(ingestEvent(t), { minLength: 1, maxLength: 5 }).map((events) => obj({ events })), weight: 4 }, { arbitrary: ceilingBatch(t), weight: 1 }),
    },
  },
  'GET /keys': {
    query: {
      schema: ListKeysQuery,
      fields: (t) => ({
        q: fc.oneof(fc.string({ minLength: 1, maxLength: 100 }), fc.constant(t.keyHash.slice(0, 8))),
        provider: fc.constantFrom('openai', 'anthropic', 'OpenAI'),
        source: fc.constantFrom('ingest', 'connection'),
        sort: fc.constantFrom('monthToDate', 'today', 'total', 'forecastMonthEnd', 'lastSeenAt', 'name'),
        order: fc.constantFrom('asc', 'desc'),
        limit,
        cursor: cursor(t, ['keys:monthToDate:desc', 'keys:name:asc', 'keys:lastSeenAt:desc']),
      }),
    },
  },
  'GET /keys/{hash}': { query: { schema: KeyBreakdownQuery, fields: () => ({ from: day, to: day }) } },
  'GET /spend': {
    query: {
      schema: SpendQuery,
      // `model` is left out: it needs `provider` beside it (a 400 alone), which independent fields can't promise.
      fields: (t) => ({
        from: day,
        to: day,
        groupBy: fc.constantFrom('day', 'model', 'provider', 'key'),
        provider: fc.constantFrom('openai', 'anthropic'),
        keyHash: fc.constant(t.keyHash),
        compare: fc.constant('previous'),
      }),
    },
  },
  'GET /spend/export': { query: { schema: ExportQuery, fields: () => ({ from: day, to: day }) } },
  'POST /spend/exports': { body: { schema: CreateExportBody, optional: true, valid: () => fc.record({ from: day, to: day }, { requiredKeys: [] }).map((b) => obj(b)) } },
  'GET /spend/exports/{id}': {},
  // A valid create names a provider and a key of its shape; the stand-ins refuse any key but their own (400, nothing stored).
  'POST /connections': {
    body: {
      schema: CreateConnectionBody,
      valid: () =>
        fc
          .tuple(fc.constantFrom('openai', 'anthropic'), fc.stringMatching(/^[A-Za-z0-9_-]{20,40}$/), fc.option(displayName, { nil: undefined }))
          .map(([provider, tail, name]) => obj({ provider, adminKey: provider === 'openai' ? `sk-admin-${tail}` : `sk-ant-admin01-${tail}`, name })),
    },
  },
  'GET /connections': {},
  'GET /connections/{id}': {},
  // Renames only: a status or key change of the tenant's own connection is a legitimate write of a valid body.
  'PATCH /connections/{id}': { body: { schema: PatchConnectionBody, valid: () => displayName.map((name) => obj({ name })) } },
  'DELETE /connections/{id}': {},
  'POST /connections/{id}/sync': {},
  'GET /connections/{id}/reconciliation': { query: { schema: ReconciliationQuery, fields: () => ({ from: day, to: day }) } },
  'GET /prices': {},
  'PUT /prices/{provider}/{model}': {
    body: {
      schema: PutPriceBody,
      valid: () =>
        fc
          .record(
            {
              input: fc.integer({ min: 0, max: 1000 }),
              cachedInput: fc.integer({ min: 0, max: 1000 }),
              cacheWrite: fc.integer({ min: 0, max: 1000 }),
              cacheWrite1h: fc.integer({ min: 0, max: 1000 }),
              output: fc.integer({ min: 0, max: 1000 }),
            },
            { requiredKeys: ['input', 'output'] },
          )
          .map((r) => obj(r)),
    },
  },
  'DELETE /prices/{provider}/{model}': {},
  'PATCH /keys/{hash}': {
    body: { schema: LabelBody, valid: () => fc.oneof(displayName, fc.constant(null)).map((label) => obj({ label })) },
  },
  'GET /budgets': {},
  'POST /budgets': { body: { schema: CreateBudgetBody, valid: (t) => validBudget(t) } },
  'PATCH /budgets/{id}': { body: { schema: PatchBudgetBody, valid: (t) => someFields(validBudget(t)) } },
  'DELETE /budgets/{id}': {},
  'POST /budgets/{id}/release': {},
  'GET /keys/{hash}/incident': {},
  'POST /keys/{hash}/release': {},
  'GET /projects': {},
  'PATCH /projects/{connectionId}/{projectId}': {
    params: ProjectParams,
    body: {
      schema: ProjectTagsBody,
      valid: () =>
        fc
          .dictionary(fc.stringMatching(/^[a-z0-9_.:/-]{1,64}$/), fc.string({ minLength: 1, maxLength: 256 }).filter((v) => !/\p{Cc}/u.test(v)), { maxKeys: 20 })
          .map((tags) => obj({ tags: obj(tags) })),
    },
  },
  'GET /customers': {
    query: {
      schema: CustomersQuery,
      fields: (t) => ({ from: day, to: day, sort: fc.constantFrom('cost', 'name'), limit, cursor: cursor(t, ['customers:cost', 'customers:name']) }),
    },
  },
  'GET /months': { query: { schema: MonthsQuery, fields: () => ({ from: fc.constantFrom('2026-01', '2025-12', '2026-11'), to: fc.constantFrom('2026-11', '2026-12') }) } },
  'POST /months/{month}/close': {
    params: MonthParams,
    body: { schema: CloseMonthBody, optional: true, valid: () => fc.oneof(fc.constant(obj({})), fc.boolean().map((force) => obj({ force }))) },
  },
  'GET /enforcement-actions': {
    query: {
      schema: ListActionsQuery,
      fields: (t) => ({
        limit,
        provider: fc.constantFrom('openai', 'anthropic', 'OpenAI', 'openrouter', 'x.ai'),
        result: fc.constantFrom('ok', 'failed'),
        cursor: cursor(t, ['actions:all', 'actions:all:provider=openai', 'actions:all:result=failed']),
      }),
    },
  },
  'GET /ingest/blocks': {},
  'GET /alert-rules': {},
  'POST /alert-rules': { body: { schema: CreateRuleBody, valid: (t) => validRule(t) } },
  'PATCH /alert-rules/{id}': { body: { schema: PatchRuleBody, valid: (t) => someFields(validRule(t)) } },
  'DELETE /alert-rules/{id}': {},
  'GET /alerts': {
    query: {
      schema: ListAlertsQuery,
      fields: (t) => ({
        status: fc.constantFrom('triggered', 'acknowledged'),
        type: fc.constantFrom(...ALERT_TYPES),
        keyHash: fc.constant(t.keyHash),
        limit,
        cursor: cursor(t, ['alerts:all', 'alerts:triggered', 'alerts:acknowledged']),
      }),
    },
  },
  'PATCH /alerts/{id}/acknowledge': {},
  'POST /alerts/acknowledge': {
    body: {
      schema: AcknowledgeBody,
      valid: (t) =>
        fc.oneof(
          fc.array(fc.oneof(fc.constant(t.alertId), idOf('alert')), { minLength: 1, maxLength: 100 }).map((ids) => obj({ ids })),
          fc.record({ type: fc.option(fc.constantFrom(...ALERT_TYPES), { nil: undefined }), keyHash: fc.option(fc.constant(t.keyHash), { nil: undefined }) }).map((f) => obj({ all: true, ...f })),
        ),
    },
  },
  'GET /webhook-secret': {},
  'POST /webhook-secret/rotate': { writesWithoutInput: true },
  'GET /billing/status': {},
  'POST /billing/checkout': {
    body: { schema: CheckoutBody, valid: () => fc.constantFrom('GROWTH', 'SCALE').map((plan) => obj({ plan })) },
  },
  'POST /billing/portal': {},
  'GET /users': { query: { schema: ListUsersQuery, fields: (t) => ({ limit, cursor: cursor(t, ['users']) }) } },
  // The tenant is its account's only admin: a demotion or removal of itself is 409 last-admin, nothing written.
  'PATCH /users/{userId}': { body: { schema: PatchUserBody, valid: () => fc.constantFrom('admin', 'member', 'viewer').map((role) => obj({ role })) } },
  'DELETE /users/{userId}': {},
  'POST /invitations': {
    body: {
      schema: CreateInvitationBody,
      validWeight: 5,
      valid: () =>
        fc.record({ email: fc.uuid().map((u) => `invitee-${u.slice(0, 13)}@example.com`), role: fc.constantFrom('admin', 'member', 'viewer') }).map((r) => obj(r)),
    },
  },
  'GET /invitations': { query: { schema: ListInvitationsQuery, fields: (t) => ({ limit, cursor: cursor(t, ['invitations']) }) } },
  'DELETE /invitations/{id}': {},
  'GET /auth/invitation': { query: { schema: InvitationQuery, fields: () => ({ token: fc.stringMatching(/^[A-Za-z0-9_-]{20,60}$/) }) } },
  'POST /auth/accept-invitation': {
    body: {
      schema: AcceptInvitationBody,
      valid: () =>
        fc
          .record({
            token: fc.stringMatching(/^[A-Za-z0-9_-]{20,60}$/),
            password: fc.string({ minLength: 0, maxLength: 20 }).map((s) => `Pw9${s}xxxxx`),
            firstName: displayName,
            lastName: displayName,
          })
          .map((r) => obj(r)),
    },
  },
  'POST /billing/webhook': { stripeEvent },
};

function validBudget(t: Tenant): fc.Arbitrary<JsonObject> {
  return fc
    .record(
      {
        name: fc.oneof(displayName, fc.constant(null)),
        monthlyLimit: money(true),
        alertThreshold: percentage,
        scope: fc.constantFrom('ACCOUNT', 'KEY'),
      },
      { requiredKeys: ['monthlyLimit', 'alertThreshold', 'scope'] },
    )
    .map((b) => obj({ ...b, ...(b.scope === 'KEY' ? { keyHash: t.keyHash } : {}) }));
}

function validRule(t: Tenant): fc.Arbitrary<JsonObject> {
  const common = fc.record({ name: displayName, channels, isActive: fc.option(fc.boolean(), { nil: undefined }) });
  const cost = fc
    .tuple(
      common,
      fc.record(
        { threshold: money(true), period: fc.constantFrom('daily', 'weekly', 'monthly'), keyHash: fc.constant(t.keyHash) },
        { requiredKeys: ['threshold', 'period'] },
      ),
    )
    .map(([c, config]) => obj({ type: 'cost_threshold', name: c.name, channels: c.channels.channels, isActive: c.isActive, config: obj({ ...config, webhookUrl: c.channels.webhookUrl }) }));
  const newKey = common.map((c) =>
    obj({ type: 'new_key', name: c.name, channels: c.channels.channels, isActive: c.isActive, config: obj({ webhookUrl: c.channels.webhookUrl }) }),
  );
  const spike = fc
    .tuple(common, fc.record({ multiplier: fc.oneof(fc.constantFrom(1.5, 1000, 2), fc.double({ min: 1.5, max: 1000, noNaN: true })), minSpend: money(false) }))
    .map(([c, config]) => obj({ type: 'spend_spike', name: c.name, channels: c.channels.channels, isActive: c.isActive, config: obj({ ...config, webhookUrl: c.channels.webhookUrl }) }));
  return fc.oneof(cost, newKey, spike);
}

export function routeKey(route: Pick<Route, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

export function specOf(route: Route): RouteSpec {
  const spec = ROUTE_SPECS[routeKey(route)];
  if (!spec) throw new Error(`test/fuzz/arbitraries.ts has no spec for ${routeKey(route)}: add one to ROUTE_SPECS`);
  return spec;
}

// ------------------------------------------------------------------------------------------------------------
// Inputs

/** How a case authenticates: the tenant's real credential, or one of the ways to get it wrong. */
export type AuthChoice =
  | { mode: 'valid' }
  /** Header value sent instead of the real one (undefined: the header is left out). */
  | { mode: 'replace'; value: string | undefined }
  /** Stripe only: signed with another secret, with a timestamp past the tolerance, or over another body. */
  | { mode: 'wrong-secret' | 'stale' | 'tampered' };

export interface FuzzInput {
  params: Record<string, string>;
  /** The raw query string, without `?`. */
  query: string;
  /** The raw body (undefined: none). */
  body: string | undefined;
  contentType: string | undefined;
  auth: AuthChoice;
  /** Which generator made it (for the report). */
  gen: string;
}

export type Mode = 'invalid' | 'any';

const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 12 },
  { arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/json; charset=utf-16', 'application/vnd.api+json', undefined), weight: 1 },
);

function authArb(route: Route, t: Tenant, mode: Mode): fc.Arbitrary<AuthChoice> {
  const valid = fc.constant<AuthChoice>({ mode: 'valid' });
  const replace = (values: fc.Arbitrary<string | undefined>) => values.map((value): AuthChoice => ({ mode: 'replace', value }));
  const validWeight = mode === 'invalid' ? 6 : 30;
  switch (route.auth) {
    case 'jwt':
      return fc.oneof(
        { arbitrary: valid, weight: validWeight },
        {
          arbitrary: replace(
            fc.oneof(
              fc.constant(undefined),
              junkString,
              junkString.map((s) => `Bearer ${s}`),
              fc.constantFrom(`Bearer ${t.token}x`, `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${t.refreshToken}`, 'Bearer a.b.c', `bearer  ${t.token.split('.').slice(0, 2).join('.')}.`),
            ),
          ),
          weight: 1,
        },
      );
    case 'ingestKey':
      return fc.oneof(
        { arbitrary: valid, weight: validWeight },
        {
          arbitrary: replace(
            fc.oneof(
              fc.constant(undefined),
              junkString,
              fc.constantFrom(`  ${t.ingestKey}\t`, t.token, `${t.ingestKey}x`, t.ingestKey.toUpperCase(), `brk_${'A'.repeat(43)}`),
              fc.string({ minLength: 43, maxLength: 43 }).map((s) => `brk_${s}`),
            ),
          ),
          weight: 1,
        },
      );
    case 'stripe':
    {
      const wrong = fc.oneof(
        replace(fc.oneof(fc.constant(undefined), junkString, fc.constantFrom('t=1,v1=abc', `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`, 't=,v1=', 'v1=x,v1=y'))),
        fc.constantFrom<AuthChoice>({ mode: 'wrong-secret' }, { mode: 'stale' }, { mode: 'tampered' }),
      );
      return mode === 'invalid' ? wrong : fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: wrong, weight: 1 });
    }
    default:
      // A public route ignores credentials: send some anyway.
      return fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: replace(fc.constantFrom(`Bearer ${t.token}`, 'Bearer junk')), weight: 1 });
  }
}

function paramArb(kind: ParamKind, t: Tenant): fc.Arbitrary<string> {
  if (kind === 'name') {
    return fc
      .oneof(
        { arbitrary: fc.constantFrom('openai', 'gpt-4o', 'fuzz-model', 'GPT-4o-2024-08-06', ' mistral ', '2026-10', '2025-13', t.connectionId), weight: 6 },
        { arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/), weight: 3 },
        { arbitrary: fc.constantFrom('a#b', 'x'.repeat(200), '%00', ' ', 'Open AI'), weight: 2 },
        { arbitrary: junkString.filter((s) => s.length <= 2000), weight: 3 },
      )
      .filter((s) => s !== '.' && s !== '..');
  }
  const otherKinds = (Object.keys(ID_PREFIX) as IdKind[]).filter((k) => k !== kind);
  const shaped = kind === 'key' ? hex64 : idOf(kind);
  return fc
    .oneof(
      { arbitrary: fc.constant(ownId(t, kind)), weight: 6 },
      { arbitrary: shaped, weight: 3 },
      { arbitrary: fc.constantFrom(...otherKinds.map((k) => ownId(t, k)), t.keyHash, t.accountId, t.userId), weight: 2 },
      {
        arbitrary: fc.constantFrom(
          ownId(t, kind).toLowerCase(),
          ownId(t, kind).toUpperCase(),
          `${ownId(t, kind)} `,
          `${ownId(t, kind)}/`,
          `${ownId(t, kind)}%00`,
          ownId(t, kind).slice(0, -1),
          `${ownId(t, kind)}0`,
          kind === 'key' ? 'A'.repeat(64) : `${ID_PREFIX[kind as IdKind]}_`,
        ),
        weight: 2,
      },
      { arbitrary: junkString.filter((s) => s.length <= 2000), weight: 3 },
    )
    .filter((s) => s !== '.' && s !== '..');
}

/** A query string: pairs of real and junk names with valid and junk values, repeats; sometimes raw junk. */
function queryArb(spec: RouteSpec, t: Tenant, mode: Mode): fc.Arbitrary<string> {
  const fields = spec.query?.fields(t) ?? {};
  const names = Object.keys(fields);
  const pair = fc.oneof(
    ...names.map((name) => ({ arbitrary: fc.tuple(fc.constant(name), fc.oneof({ arbitrary: fields[name]!, weight: 3 }, { arbitrary: junkString, weight: 1 })), weight: 4 })),
    { arbitrary: fc.tuple(junkKey(names).filter((k) => k.length < 50), junkString.filter((s) => s.length < 3000)), weight: 1 },
  );
  const encoded = fc.array(pair, { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`).join('&'));
  const validOnly = names.length
    ? fc
        .tuple(...names.map((name) => fc.option(fields[name]!, { nil: undefined })))
        .map((values) => names.flatMap((name, i) => (values[i] === undefined ? [] : [`${encodeComponent(name)}=${encodeComponent(values[i]!)}`])).join('&'))
    : fc.constant('');
  return fc.oneof(
    { arbitrary: validOnly, weight: mode === 'invalid' ? 1 : 6 },
    { arbitrary: encoded, weight: 4 },
    { arbitrary: fc.constantFrom('%', '%zz', 'a=%E0%A4%A', '&&&', '=x', 'limit', 'limit=', 'limit=1&limit=2', 'a=1;b=2', '?', '#frag'), weight: 1 },
  );
}

function bodyArb(spec: RouteSpec, t: Tenant, mode: Mode): fc.Arbitrary<{ text: string | undefined; gen: string }> {
  const asText = (gen: string) => (value: Json) => ({ text: toJsonText(value), gen });
  if (spec.stripeEvent) {
    const event = spec.stripeEvent(t);
    const names = ['id', 'type', 'created', 'data', 'object', 'customer', 'subscription', 'client_reference_id', 'metadata', 'status', 'items', 'lines', 'parent'];
    return fc.oneof(
      { arbitrary: event.map(asText('stripe-event')), weight: 5 },
      { arbitrary: mutated(event, names).map(asText('stripe-event-mutated')), weight: 4 },
      { arbitrary: junkValue(names).map(asText('junk-json')), weight: 1 },
      { arbitrary: junkText.map((text) => ({ text, gen: 'junk-text' })), weight: 1 },
    );
  }
  const body = spec.body;
  if (!body) {
    // The handler reads no body: send junk anyway (it must be ignored).
    return fc.oneof(
      { arbitrary: fc.constant({ text: undefined, gen: 'no-body' }), weight: 4 },
      { arbitrary: junkValue().map(asText('ignored-json')), weight: 1 },
      { arbitrary: junkText.filter((s) => s.length < 10_000).map((text) => ({ text, gen: 'ignored-text' })), weight: 1 },
    );
  }
  const names = fieldNames(body.schema, ...(body.nested ?? []));
  const valid = body.valid(t);
  const realKeysObject = fc
    .array(fc.tuple(fc.constantFrom(...names), junkValue(names)), { minLength: 1, maxLength: names.length + 2 })
    .map((entries): Json => new JsonObject(entries));
  return fc.oneof(
    ...(mode === 'invalid' ? [] : [{ arbitrary: valid.map(asText('valid')), weight: body.validWeight ?? 25 }]),
    { arbitrary: mutated(valid, names).map(asText('mutated')), weight: 40 },
    { arbitrary: realKeysObject.map(asText('real-keys-junk-values')), weight: 15 },
    { arbitrary: junkValue(names).map(asText('junk-json')), weight: 10 },
    { arbitrary: junkText.map((text) => ({ text, gen: 'junk-text' })), weight: 6 },
    { arbitrary: fc.constant({ text: undefined, gen: 'no-body' }), weight: 2 },
  );
}

/** Requests for one route and tenant. Mode `invalid` leans to inputs the oracle calls invalid (and is filtered by it). */
export function inputArbitrary(route: Route, t: Tenant, mode: Mode): fc.Arbitrary<FuzzInput> {
  const spec = specOf(route);
  const kinds = paramKinds(route);
  const names = Object.keys(kinds);
  const params = names.length
    ? fc.tuple(...names.map((name) => paramArb(kinds[name]!, t))).map((values) => Object.fromEntries(names.map((n, i) => [n, values[i]!])))
    : fc.constant({} as Record<string, string>);
  const arb = fc
    .record({ params, query: queryArb(spec, t, mode), body: bodyArb(spec, t, mode), contentType, auth: authArb(route, t, mode) })
    .map(({ body, ...rest }): FuzzInput => ({ ...rest, body: body.text, gen: body.gen }));
  return mode === 'invalid' ? arb.filter((input) => classify(route, input, t).kind !== 'any') : arb;
}

// ------------------------------------------------------------------------------------------------------------
// The oracle

export type Expectation =
  /** Must answer 4xx (or, for ingestion whose every event is refused, 200 with nothing accepted) and write nothing. */
  | { kind: 'invalid'; why: string; allowNothingAccepted?: true }
  /** The route reads no input of this kind and writes nothing: any status but 5xx, and nothing written. */
  | { kind: 'ignored' }
  | { kind: 'any' };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Query strings are strict like bodies (shared/http/handler.ts): a route without a query schema takes none. */
const NO_QUERY = strictObject({});

/** The body as the handler would see it: `{ok, value}`, or why it is refused before any schema runs. */
function parseBody(text: string | undefined, optional: boolean): { ok: true; value: unknown } | { ok: false; why: string } {
  const raw = text ?? '';
  if (Buffer.byteLength(raw, 'utf8') > 1024 * 1024) return { ok: false, why: 'body over 1 MB' };
  if (raw.trim() === '') return optional ? { ok: true, value: {} } : { ok: false, why: 'no body' };
  let forbidden = false;
  let value: unknown;
  try {
    value = JSON.parse(raw, (key, v: unknown) => {
      if (FORBIDDEN_KEYS.has(key)) forbidden = true;
      return v;
    });
  } catch {
    return { ok: false, why: 'not JSON' };
  }
  if (forbidden) return { ok: false, why: 'prototype key' };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, why: 'not an object' };
  return { ok: true, value };
}

/** `queryStringParameters` as API Gateway builds it: repeated names joined with commas. */
export function queryParameters(raw: string): Record<string, string> {
  const query: Record<string, string> = {};
  // A client never sends the fragment: `?#frag` is an empty query.
  const sent = raw.split('#')[0]!;
  for (const [name, value] of new URLSearchParams(sent)) query[name] = name in query ? `${query[name]},${value}` : value;
  return query;
}

/** What the contract says about an input: invalid (4xx, no write), ignored (no write), or anything but 5xx. */
export function classify(route: Route, input: FuzzInput, t: Tenant): Expectation {
  const spec = specOf(route);
  const kinds = paramKinds(route);
  if (Object.values(input.params).some((p) => p === '')) return { kind: 'invalid', why: 'empty path segment' };
  if (route.auth === 'stripe') {
    return input.auth.mode === 'valid' ? { kind: 'any' } : { kind: 'invalid', why: `stripe signature ${input.auth.mode}` };
  }
  if (route.auth === 'jwt' && input.auth.mode !== 'valid') return { kind: 'invalid', why: 'bad bearer token' };
  if (route.auth === 'ingestKey' && input.auth.mode !== 'valid') {
    const value = input.auth.mode === 'replace' ? input.auth.value?.trim() : undefined;
    if (value !== t.ingestKey) return { kind: 'invalid', why: 'bad ingest key' };
  }
  let hasInput = false;
  let events: unknown[] | undefined;
  if (spec.body) {
    hasInput = true;
    const parsed = parseBody(input.body, spec.body.optional ?? false);
    if (!parsed.ok) return { kind: 'invalid', why: parsed.why };
    // The one Unicode rule of shared/http/validate.ts, before any schema.
    const unicode = malformedStrings(parsed.value);
    if (unicode.length) return { kind: 'invalid', why: `body: ${unicode[0]?.message}` };
    const result = safeParse(spec.body.schema, parsed.value);
    if (!result.success) return { kind: 'invalid', why: `body: ${result.error.issues[0]?.path.join('.')} ${result.error.issues[0]?.message}` };
    if (route.path === '/ingest') events = (result.data as { events: unknown[] }).events;
  }
  if (spec.query) hasInput = true;
  if (malformedStrings(queryParameters(input.query)).length) return { kind: 'invalid', why: 'query: a lone surrogate' };
  const query = safeParse(spec.query?.schema ?? NO_QUERY, queryParameters(input.query));
  if (!query.success) return { kind: 'invalid', why: `query: ${query.error.issues[0]?.message}` };
  for (const [name, kind] of Object.entries(kinds)) {
    hasInput = true;
    const value = input.params[name] ?? '';
    if (kind === 'name') {
      const field = ((spec.params ?? PriceParams) as unknown as { shape: Record<string, $ZodType> }).shape[name]!;
      if (!safeParse(field, value).success) return { kind: 'invalid', why: `{${name}} is not a valid name` };
      continue;
    }
    const known = kind === 'key' ? value === t.keyHash : isId(kind, value) && value === ownId(t, kind);
    if (!known) return { kind: 'invalid', why: `{${name}} names nothing of the tenant` };
  }
  if (events) {
    const now = new Date();
    const priced = events.map((e, i) => priceEvent(e, i, now));
    // A margin for the clock between here and the handler: timestamps near the window's edges stay "any".
    const nearEdge = events.some((e) => {
      const ts = (e as { timestamp?: unknown })?.timestamp;
      if (typeof ts !== 'string') return false;
      const at = Date.parse(ts);
      return Math.abs(at - (now.getTime() + 5 * 60_000)) < 60_000 || Math.abs(at - (now.getTime() - 35 * DAY_MS)) < 60_000;
    });
    if (!nearEdge && priced.every((p) => 'code' in p)) return { kind: 'invalid', why: 'every event refused', allowNothingAccepted: true };
  }
  return hasInput || route.auth === 'ingestKey' || spec.writesWithoutInput ? { kind: 'any' } : { kind: 'ignored' };
}

/** Storage partitions an input may touch beyond the account's own (checked before and after invalid cases). */
export function touchedPartitions(route: Route, input: FuzzInput, t: Tenant): string[] {
  const pks = new Set<string>();
  if (route.path === '/keys/{hash}' && input.params.hash) pks.add(`KEY#${t.accountId}#${input.params.hash}`);
  if (route.path === '/ingest' || route.path === '/auth/register') {
    let value: unknown;
    try {
      value = JSON.parse(input.body ?? '');
    } catch {
      return [];
    }
    const events = (value as { events?: unknown })?.events;
    if (Array.isArray(events)) {
      for (const e of events.slice(0, 20)) {
        const { requestId, keyHash } = (e ?? {}) as { requestId?: unknown; keyHash?: unknown };
        if (typeof requestId === 'string' && requestId.length <= 200) pks.add(`EVENT#${t.accountId}#${requestId}`);
        if (typeof keyHash === 'string' && keyHash.length <= 200) pks.add(`KEY#${t.accountId}#${keyHash}`);
      }
    }
    const email = (value as { email?: unknown })?.email;
    if (typeof email === 'string' && email.length <= 300) pks.add(`EMAIL#${email.trim().toLowerCase()}`);
  }
  // A key with a lone surrogate cannot even be sent to DynamoDB: such an item cannot exist.
  return [...pks].filter((pk) => Buffer.byteLength(pk) <= 2048 && !/[\uD800-\uDFFF]/u.test(pk));
}

/**
 * One body the route's schema accepts (parsed, as the handler would see it), for tests that need a request that
 * gets past validation; undefined for a route that reads no body. Deterministic for a tenant and seed.
 */
export function sampleValidBody(route: Route, t: Tenant, seed = 1): Record<string, unknown> | undefined {
  const body = specOf(route).body;
  if (!body) return undefined;
  const parsed = body
    .valid(t)
    .map((value) => JSON.parse(toJsonText(value)) as Record<string, unknown>)
    .filter((value) => malformedStrings(value).length === 0 && safeParse(body.schema, value).success);
  return fc.sample(parsed, { numRuns: 1, seed })[0];
}
