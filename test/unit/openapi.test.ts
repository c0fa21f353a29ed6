/**
 * The OpenAPI document: its OpenAPI 3.1 shape, one operation per route of the route table (method, security, path
 * parameters), the request schemas it carries are the handlers' own (read from each handler file) and accept or
 * refuse bodies as the handlers do, and the response schemas agree with the view mappers at compile time.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import { API_PREFIX, routes, type AuthKind } from '#shared/routes.ts';
import { API_TITLE, API_VERSION, buildOpenApi, errorStatuses, operations, pathParams, type JsonSchema } from '#shared/openapi/document.ts';
import * as R from '#shared/openapi/responses.ts';
import type { JsonDecimal } from '#shared/http/json.ts';
import { ChangePasswordBody, ForgotPasswordBody, LoginBody, PatchMeBody, RegisterBody, ResetPasswordBody, VerifyEmailBody } from '#shared/auth/schemas.ts';
import { CreateBudgetBody, PatchBudgetBody } from '#shared/budgets/schemas.ts';
import { CreateRuleBody, PatchRuleBody } from '#shared/rules/schemas.ts';
import { IngestBody, IngestEvent } from '#shared/ingest/schemas.ts';
import { LabelBody } from '#shared/keys/schemas.ts';
import type { getSpend } from '#shared/spend/service.ts';
import type { listPrices, PriceView } from '#shared/prices/service.ts';
import { CheckoutBody } from '#shared/billing/schemas.ts';
import { CreateIngestKeyBody } from '#shared/ingest-keys/schemas.ts';
import type { me, updateMe } from '#shared/auth/me.ts';
import type { verifyEmail } from '#shared/auth/verification.ts';
import type { login, refresh, register } from '#shared/auth/service.ts';
import type { CreatedIngestKey, IngestKeyView, listIngestKeys } from '#shared/ingest-keys/service.ts';
import type { IngestResult } from '#shared/ingest/service.ts';
import type { getKey, listKeys, toKeyView } from '#shared/keys/service.ts';
import type { alertView, budgetView, ruleView } from '#shared/alerting/model.ts';
import type { listBudgets } from '#shared/budgets/service.ts';
import type { listRules } from '#shared/rules/service.ts';
import type { acknowledgeMany, listAlertsView } from '#shared/alerts/service.ts';
import type { webhookSecretView } from '#shared/notify/webhook-secret.ts';
import type { billingStatus } from '#shared/billing/status.ts';
import type { openPortal, startCheckout } from '#shared/billing/checkout.ts';
import type { ExportView } from '#shared/spend/exports.ts';
import type { WebhookReply } from '#shared/billing/webhook.ts';
import { newId } from '#shared/ids.ts';
import { handler as openapiHandler } from '#functions/openapi/get.ts';
import { apiEvent, lambdaContext } from './helpers.ts';

// ajv-formats is CommonJS with a default export: under NodeNext the import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

const doc = buildOpenApi() as any;
const ROOT = new URL('../../', import.meta.url);

/** Every object in `value`, depth first, with its JSON pointer. */
function* walk(value: unknown, pointer = ''): Generator<[string, Record<string, unknown>]> {
  if (value === null || typeof value !== 'object') return;
  if (!Array.isArray(value)) yield [pointer, value as Record<string, unknown>];
  for (const [key, child] of Object.entries(value)) yield* walk(child, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
}

function resolvePointer(pointer: string): unknown {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<any>((node, part) => node?.[part], doc);
}

describe('the document', () => {
  it('is OpenAPI 3.1.0 with its title, the package version and both security schemes', () => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'Burnrate API', version: pkg.version });
    expect(API_TITLE).toBe('Burnrate API');
    expect(API_VERSION).toBe(pkg.version);
    expect(doc.components.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
      ingestKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
    });
    // No `jsonSchemaDialect` (Prism validates no body when it is there); paths are relative to the server `/api`.
    expect(Object.keys(doc).sort()).toEqual(['components', 'info', 'openapi', 'paths', 'servers', 'tags']);
    expect(doc.servers).toEqual([expect.objectContaining({ url: API_PREFIX })]);
  });

  it('has an operation spec for every handler of the route table, and none for a handler it lacks', () => {
    const handlers = routes.map((r) => r.handler);
    expect(handlers.filter((h) => !operations[h])).toEqual([]);
    expect(Object.keys(operations).filter((h) => !handlers.includes(h))).toEqual([]);
    expect(routes.some((r) => r.handler === 'openapi/get' && r.method === 'GET' && r.path === '/openapi.json' && r.auth === 'none')).toBe(true);
  });

  it('has one operation per route (and no other), with unique operation ids', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    const ids = documented.map((key) => {
      const [method, path] = key.split(' ');
      return doc.paths[path!][method!.toLowerCase()].operationId as string;
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  const SECURITY: Record<AuthKind, unknown[]> = { jwt: [{ bearerAuth: [] }], ingestKey: [{ ingestKey: [] }], none: [], stripe: [] };

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: security, path parameters, success and error responses', (_name, route) => {
    const op = doc.paths[route.path][route.method.toLowerCase()];
    const spec = operations[route.handler]!;
    expect(op.security).toEqual(SECURITY[route.auth]);
    // Every {param} of the path is a required path parameter, and no other path parameter is declared.
    const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path');
    expect(declared.map((p: any) => p.name).sort()).toEqual(pathParams(route.path).sort());
    for (const p of declared) expect(p).toMatchObject({ required: true, schema: { type: 'string' } });
    if (route.auth === 'stripe') {
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'stripe-signature', in: 'header', required: true }));
    }
    // The success status, with its response component (204, and 202 without one: no content).
    const success = op.responses[String(spec.status)];
    if (spec.status === 204 || (spec.status === 202 && spec.response === undefined)) expect(success.content).toBeUndefined();
    else expect(success.content[spec.mediaType ?? 'application/json'].schema).toEqual({ $ref: `#/components/schemas/${spec.response}` });
    // Errors: problem+json components, those of the route's kind included.
    const errors = Object.keys(op.responses).filter((s) => s !== String(spec.status));
    expect(errors).toEqual(errorStatuses(route, spec).map(String));
    for (const status of errors) {
      const response = resolvePointer(op.responses[status].$ref) as any;
      expect(response.content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
    }
    expect(errors).toContain('500');
    if (route.auth === 'jwt' || route.auth === 'ingestKey') expect(errors).toContain('401');
    if (spec.body) {
      expect(errors).toEqual(expect.arrayContaining(['400', '413']));
      expect(op.requestBody.required).toBe(!spec.bodyOptional);
    }
    if (pathParams(route.path).length) expect(errors).toContain('404');
  });

  it('resolves every $ref, and carries no $schema, $id or OpenAPI 3.0 `nullable`', () => {
    for (const [pointer, node] of walk(doc)) {
      if (typeof node.$ref === 'string') expect(resolvePointer(node.$ref), `${pointer} → ${node.$ref}`).toBeDefined();
      for (const key of ['$schema', '$id', 'nullable']) expect(Object.hasOwn(node, key), `${pointer} has ${key}`).toBe(false);
    }
  });

  it('documents query parameters from the handlers’ query schemas', () => {
    const params = (path: string) => doc.paths[path].get.parameters.filter((p: any) => p.in === 'query');
    expect(params('/alerts').map((p: any) => p.name)).toEqual(['status', 'type', 'keyHash', 'limit', 'cursor']);
    expect(params('/alerts')[0]).toMatchObject({ required: false, schema: { enum: ['triggered', 'acknowledged'] } });
    expect(params('/keys').map((p: any) => p.name)).toEqual(['q', 'provider', 'source', 'tracked', 'projectId', 'tag', 'month', 'sort', 'order', 'limit', 'cursor']);
    expect(params('/spend').map((p: any) => p.name)).toEqual(['from', 'to', 'groupBy', 'tag', 'shared', 'tagFilter', 'customer', 'feature', 'provider', 'model', 'keyHash', 'projectId', 'compare']);
    expect(params('/keys/{hash}').map((p: any) => p.name)).toEqual(['from', 'to']);
  });

  it('is pure and JSON: two builds are equal and survive a JSON round trip', () => {
    expect(buildOpenApi()).toEqual(doc);
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('the request schemas are the handlers’ own', () => {
  /** `body: X`, `query: Y`, `params: Z` and `optionalBody: true` in the handler's `httpHandler({...})`, X resolved through its imports. */
  async function declared(handler: string) {
    const source = readFileSync(new URL(`functions/${handler}.ts`, ROOT), 'utf8');
    const spec = /httpHandler\(\s*\{([^}]*)\}/.exec(source)?.[1] ?? '';
    const imports = new Map<string, string>();
    for (const m of source.matchAll(/import\s*\{([^}]+)\}\s*from\s*'([^']+)'/g)) {
      for (const name of m[1]!.split(',').map((s) => s.trim()).filter(Boolean)) imports.set(name, m[2]!);
    }
    const schemaOf = async (key: string): Promise<$ZodType | undefined> => {
      const name = new RegExp(`\\b${key}:\\s*(\\w+)`).exec(spec)?.[1];
      if (!name) return undefined;
      const from = imports.get(name);
      if (!from) throw new Error(`${handler}: ${key} schema ${name} is not imported`);
      return ((await import(from)) as Record<string, $ZodType>)[name];
    };
    return {
      body: await schemaOf('body'),
      query: await schemaOf('query'),
      params: await schemaOf('params'),
      optionalBody: /\boptionalBody:\s*true\b/.test(spec),
    };
  }

  it.each(routes.map((r) => [r.handler] as const))('%s', async (handler) => {
    const spec = operations[handler]!;
    const found = await declared(handler);
    expect(found.body, 'body').toBe(spec.body);
    expect(found.query, 'query').toBe(spec.query);
    expect(found.params, 'params').toBe(spec.params);
    expect(found.optionalBody).toBe(spec.bodyOptional === true);
  });
});

// ---------------------------------------------------------------------------------------------------------------

/** The document's components compiled with Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect). */
function componentValidators() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  addFormats(ajv);
  const rewrite = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', '"urn:burnrate:components#/$defs/'));
  ajv.addSchema({ $id: 'urn:burnrate:components', $defs: rewrite(doc.components.schemas) as JsonSchema });
  const cache = new Map<string, ValidateFunction>();
  return (name: string) => {
    let validate = cache.get(name);
    if (!validate) {
      validate = ajv.compile({ $ref: `urn:burnrate:components#/$defs/${name}` });
      cache.set(name, validate);
    }
    return (value: unknown) => validate(value);
  };
}

describe('request bodies: the document accepts and refuses what the handlers do', () => {
  const component = componentValidators();
  const hash = 'a'.repeat(64);
  const event = { requestId: 'r1', keyHash: hash, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 5 };
  const rule = { type: 'cost_threshold', name: 'Daily', config: { threshold: 5, period: 'daily' }, channels: ['email'], isActive: true };
  const register = { email: 'ada@example.com', password: 'Passw0rdX', firstName: 'Ada', lastName: 'L', companyName: 'Acme' };

  const cases: [string, $ZodType, unknown, boolean][] = [
    ['RegisterRequest', RegisterBody, register, true],
    ['RegisterRequest', RegisterBody, { ...register, accountId: 'br_x' }, false],
    ['RegisterRequest', RegisterBody, { ...register, password: 'password' }, false],
    ['RegisterRequest', RegisterBody, { ...register, companyName: undefined }, false],
    ['LoginRequest', LoginBody, { email: 'a@b.co', password: 'x' }, true],
    ['LoginRequest', LoginBody, { email: 'a@b.co' }, false],
    ['CreateIngestKeyRequest', CreateIngestKeyBody, {}, true],
    ['CreateIngestKeyRequest', CreateIngestKeyBody, { name: 'ci', scope: 'all' }, false],
    ['IngestRequest', IngestBody, { events: [event] }, true],
    ['IngestRequest', IngestBody, { events: [] }, false],
    ['IngestRequest', IngestBody, { events: [event], accountId: 'br_x' }, false],
    ['IngestEvent', IngestEvent, event, true],
    ['IngestEvent', IngestEvent, { ...event, cachedInputTokens: 2, costUsd: 0.5, keyHint: 'sk-…abcd', timestamp: '2026-11-21T22:34:24.000Z' }, true],
    ['IngestEvent', IngestEvent, { ...event, inputTokens: -1 }, false],
    ['IngestEvent', IngestEvent, { ...event, inputTokens: 1.5 }, false],
    ['IngestEvent', IngestEvent, { ...event, keyHash: 'ABC' }, false],
    ['IngestEvent', IngestEvent, { ...event, spend: 1 }, false],
    ['LabelRequest', LabelBody, { label: 'prod' }, true],
    ['LabelRequest', LabelBody, { label: null }, true],
    ['LabelRequest', LabelBody, { label: '' }, false],
    ['LabelRequest', LabelBody, {}, false],
    ['CreateBudgetRequest', CreateBudgetBody, { monthlyLimit: 100, alertThreshold: 80, scope: 'ACCOUNT' }, true],
    ['CreateBudgetRequest', CreateBudgetBody, { name: null, monthlyLimit: 100, alertThreshold: 80, scope: 'KEY', keyHash: hash }, true],
    ['CreateBudgetRequest', CreateBudgetBody, { monthlyLimit: 0, alertThreshold: 80, scope: 'ACCOUNT' }, false],
    ['CreateBudgetRequest', CreateBudgetBody, { monthlyLimit: 100, alertThreshold: 101, scope: 'ACCOUNT' }, false],
    ['CreateBudgetRequest', CreateBudgetBody, { monthlyLimit: 100, alertThreshold: 80, scope: 'TEAM' }, false],
    ['CreateBudgetRequest', CreateBudgetBody, { monthlyLimit: '100', alertThreshold: 80, scope: 'ACCOUNT' }, false],
    ['CreateBudgetRequest', CreateBudgetBody, { monthlyLimit: 100, alertThreshold: 80, scope: 'ACCOUNT', spend: 0 }, false],
    ['PatchBudgetRequest', PatchBudgetBody, { name: null }, true],
    ['PatchBudgetRequest', PatchBudgetBody, { monthlyLimit: 5 }, true],
    ['PatchBudgetRequest', PatchBudgetBody, {}, false],
    ['PatchBudgetRequest', PatchBudgetBody, { id: 'bud_x' }, false],
    ['CreateRuleRequest', CreateRuleBody, rule, true],
    ['CreateRuleRequest', CreateRuleBody, { type: 'new_key', name: 'New keys', channels: ['email'] }, true],
    ['CreateRuleRequest', CreateRuleBody, { type: 'spend_spike', name: 'Spike', config: { multiplier: 2, minSpend: 1 }, channels: ['email'] }, true],
    ['CreateRuleRequest', CreateRuleBody, { ...rule, type: 'budget' }, false],
    ['CreateRuleRequest', CreateRuleBody, { ...rule, config: { threshold: 5, period: 'hourly' } }, false],
    ['CreateRuleRequest', CreateRuleBody, { ...rule, config: { threshold: 5, period: 'daily', multiplier: 2 } }, false],
    ['CreateRuleRequest', CreateRuleBody, { ...rule, type: 'spend_spike', config: { multiplier: 1, minSpend: 1 } }, false],
    ['CreateRuleRequest', CreateRuleBody, { ...rule, channels: [] }, false],
    ['CreateRuleRequest', CreateRuleBody, { ...rule, channels: ['sms'] }, false],
    ['PatchRuleRequest', PatchRuleBody, { isActive: false }, true],
    ['PatchRuleRequest', PatchRuleBody, { config: { anything: 1 } }, true],
    ['PatchRuleRequest', PatchRuleBody, {}, false],
    ['PatchRuleRequest', PatchRuleBody, { lastTriggeredAt: null }, false],
    ['CheckoutRequest', CheckoutBody, { plan: 'GROWTH' }, true],
    ['CheckoutRequest', CheckoutBody, { plan: 'FREE' }, false],
    ['CheckoutRequest', CheckoutBody, { plan: 'GROWTH', price: 'price_1' }, false],
    ['PatchMeRequest', PatchMeBody, { alertEmails: false }, true],
    ['PatchMeRequest', PatchMeBody, { firstName: 'Ada', lastName: 'King' }, true],
    ['PatchMeRequest', PatchMeBody, {}, false],
    ['PatchMeRequest', PatchMeBody, { role: 'admin' }, false],
    ['PatchMeRequest', PatchMeBody, { emailVerified: true }, false],
    ['PatchMeRequest', PatchMeBody, { alertEmails: 'yes' }, false],
    ['VerifyEmailRequest', VerifyEmailBody, { token: 'a'.repeat(43) }, true],
    ['VerifyEmailRequest', VerifyEmailBody, {}, false],
    ['ForgotPasswordRequest', ForgotPasswordBody, { email: 'ada@example.com' }, true],
    ['ResetPasswordRequest', ResetPasswordBody, { token: 'a'.repeat(43), password: 'Passw0rdX' }, true],
    ['ResetPasswordRequest', ResetPasswordBody, { token: 'a'.repeat(43), password: 'password' }, false],
    ['ChangePasswordRequest', ChangePasswordBody, { currentPassword: 'x', newPassword: 'Passw0rdX' }, true],
    ['ChangePasswordRequest', ChangePasswordBody, { currentPassword: 'x', newPassword: 'short' }, false],
    ['ChangePasswordRequest', ChangePasswordBody, { currentPassword: '', newPassword: 'Passw0rdX' }, false],
  ];

  it.each(cases.map(([name, schema, body, ok], i) => [`${name} #${i}: ${ok ? 'accepts' : 'refuses'} ${JSON.stringify(body)}`, name, schema, body, ok] as const))(
    '%s',
    (_title, name, schema, body, ok) => {
      expect(z.safeParse(schema, body).success, 'the handler’s schema').toBe(ok);
      expect(component(name)(body), 'the document').toBe(ok);
    },
  );

  it('names the same components as the operations use', () => {
    expect(doc.paths['/auth/register'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/RegisterRequest' });
    expect(doc.components.schemas.IngestRequest.properties.events.items).toEqual({ $ref: '#/components/schemas/IngestEvent' });
    expect(doc.paths['/ingest-keys'].post.requestBody.required).toBe(false);
  });
});

describe('response schemas', () => {
  const component = componentValidators();
  const t = '2026-11-21T22:34:24.000Z';

  it('accept what the mappers return, and are open to added fields in the document', () => {
    const budget = {
      id: newId('budget'),
      name: null,
      monthlyLimit: 10,
      alertThreshold: 80,
      scope: 'ACCOUNT',
      keyHash: null,
      action: 'notify',
      spend: { monthToDate: 11 },
      percentUsed: 110,
      status: 'exceeded',
      alertOnForecast: false,
      forecast: { monthEnd: 12, percentOfLimit: 120 },
      createdAt: t,
      updatedAt: t,
    };
    expect(component('Budget')(budget)).toBe(true);
    expect(component('Budget')({ ...budget, later: 1 })).toBe(true);
    expect(component('Budget')({ ...budget, status: 'fine' })).toBe(false);
    expect(component('Budget')({ ...budget, createdAt: '2026-11-21' })).toBe(false);
    expect(component('Problem')({ type: '/problems/not-found', title: 'Not found.', status: 404, detail: 'x', instance: '/requests/1' })).toBe(true);
    expect(component('Problem')({ type: '/problems/validation-error', title: 'x', status: 400, errors: [{ path: 'a' }] })).toBe(false);
    expect(component('Health')({ status: 'ok' })).toBe(true);
  });

  it('match the view mappers’ types (compile time)', () => {
    type Out<S extends z.ZodMiniType> = z.output<S>;
    // On the wire a JsonDecimal IS a JSON number (shared/http/json.ts): compare the shapes as written.
    type Wire<T> = T extends JsonDecimal ? number : T extends readonly unknown[] | Record<string, unknown> ? { [K in keyof T]: Wire<T[K]> } : T;
    expectTypeOf<Wire<Awaited<ReturnType<typeof me>>>>().toEqualTypeOf<Out<typeof R.Me>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof updateMe>>>>().toEqualTypeOf<Out<typeof R.Me>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof verifyEmail>>>>().toEqualTypeOf<Out<typeof R.EmailVerified>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof register>>>>().toEqualTypeOf<Out<typeof R.AuthSession>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof login>>>>().toEqualTypeOf<Out<typeof R.AuthSession>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof refresh>>>>().toEqualTypeOf<Out<typeof R.RefreshedToken>>();
    expectTypeOf<Wire<IngestKeyView>>().toEqualTypeOf<Out<typeof R.IngestKey>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof listIngestKeys>>>>().toExtend<Out<typeof R.responseComponents.IngestKeyList>>();
    // The mapper says `lastUsedAt: null` exactly; the document says `Timestamp | null` (see responses.ts).
    expectTypeOf<Wire<CreatedIngestKey>>().toExtend<Out<typeof R.CreatedIngestKey>>();
    expectTypeOf<Wire<CreatedIngestKey['lastUsedAt']>>().toEqualTypeOf<null>();
    expectTypeOf<Wire<IngestResult>>().toEqualTypeOf<Out<typeof R.IngestResult>>();
    expectTypeOf<Wire<ReturnType<typeof toKeyView>>>().toEqualTypeOf<Out<typeof R.Key>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof listKeys>>>>().toEqualTypeOf<Out<typeof R.responseComponents.KeyList>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof getKey>>>>().toEqualTypeOf<Out<typeof R.KeyDetail>>();
    // A union of group shapes: plain assignability (expectTypeOf's toExtend distributes over it).
    const spend = (): Out<typeof R.Spend> => ({}) as Wire<Awaited<ReturnType<typeof getSpend>>>;
    expect(typeof spend).toBe('function');
    expectTypeOf<Wire<PriceView>>().toEqualTypeOf<Out<typeof R.Price>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof listPrices>>>>().toEqualTypeOf<Out<typeof R.responseComponents.PriceList>>();
    expectTypeOf<Wire<ReturnType<typeof budgetView>>>().toEqualTypeOf<Out<typeof R.Budget>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof listBudgets>>>>().toExtend<Out<typeof R.responseComponents.BudgetList>>();
    expectTypeOf<Wire<ReturnType<typeof alertView>>>().toEqualTypeOf<Out<typeof R.Alert>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof listAlertsView>>>>().toEqualTypeOf<Out<typeof R.responseComponents.AlertList>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof acknowledgeMany>>>>().toEqualTypeOf<Out<typeof R.responseComponents.AcknowledgeResult>>();
    // A rule's config is typed as a union apart from its type; the document ties each config to its type.
    type RuleView = ReturnType<typeof ruleView>;
    expectTypeOf<Wire<Out<typeof R.Rule>>>().toExtend<RuleView>();
    expectTypeOf<Wire<keyof Out<typeof R.Rule>>>().toEqualTypeOf<keyof RuleView>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof listRules>>['items'][number]>>().toEqualTypeOf<RuleView>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof webhookSecretView>>>>().toEqualTypeOf<Out<typeof R.WebhookSecret>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof billingStatus>>>>().toEqualTypeOf<Out<typeof R.BillingStatus>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof startCheckout>>>>().toEqualTypeOf<Out<typeof R.Checkout>>();
    expectTypeOf<Wire<Awaited<ReturnType<typeof openPortal>>>>().toEqualTypeOf<Out<typeof R.Portal>>();
    expectTypeOf<Wire<WebhookReply>>().toEqualTypeOf<Out<typeof R.WebhookReceipt>>();
    expectTypeOf<Wire<ExportView>>().toEqualTypeOf<Out<typeof R.SpendExport>>();
  });
});

describe('GET /openapi.json', () => {
  it('serves the document with no-store, like every response', async () => {
    const res = (await openapiHandler(
      apiEvent({ routeKey: 'GET /api/openapi.json', rawPath: '/api/openapi.json', headers: {} }),
      lambdaContext,
    )) as { statusCode: number; headers: Record<string, string>; body: string };
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(res.body)).toEqual(doc);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('what client tools need (Prism, openapi-typescript, hey-api, Spectral)', () => {
  const component = componentValidators();
  const ops = routes.map((route) => ({ route, spec: operations[route.handler]!, op: doc.paths[route.path][route.method.toLowerCase()] }));

  it('the password rule is ONE pattern (an allOf of patterns is impossible in Prism), and no schema has an allOf of patterns', () => {
    const password = doc.components.schemas.RegisterRequest.properties.password;
    expect(password).toEqual({ type: 'string', minLength: 8, maxLength: 256, pattern: expect.any(String) });
    expect(doc.components.schemas.AcceptInvitationRequest.properties.password).toEqual(password);
    for (const [pointer, node] of walk(doc)) {
      if (Array.isArray(node.allOf)) expect((node.allOf as JsonSchema[]).filter((s) => 'pattern' in s), pointer).toEqual([]);
    }
    const body = { email: 'a@example.com', firstName: 'A', lastName: 'B', companyName: 'C' };
    for (const [pw, ok] of [['Analytical1843', true], ['x\nY1zzzzzz', true], ['analytical1843', false], ['ANALYTICAL1843', false], ['Analytical', false], ['Ab1', false]] as const) {
      expect(component('RegisterRequest')({ ...body, password: pw }), pw).toBe(ok);
      expect(z.safeParse(RegisterBody, { ...body, password: pw }).success, pw).toBe(ok);
    }
  });

  it.each(ops.map((o) => [`${o.route.method} ${o.route.path}`, o] as const))('%s: every 4xx it can answer, a description, x-request-id', (_n, { route, spec, op }) => {
    const statuses = Object.keys(op.responses).map(Number);
    // Every operation refuses an unknown query parameter or an unwanted body (400) and a body past the limit (413).
    expect(statuses).toEqual(expect.arrayContaining([400, 413, 429, 500]));
    if (spec.body) expect(statuses).toContain(415);
    else expect(statuses).not.toContain(415);
    if (pathParams(route.path).length) expect(statuses).toContain(404);
    if (route.auth === 'jwt' && route.role !== 'viewer') expect(statuses).toContain(403);
    if (route.stripe) expect(statuses).toContain(503);
    expect(typeof op.description).toBe('string');
    // What it does (its spec), then who may call it (from the route table).
    expect(op.description).toMatch(/\. (Public: no credentials|Needs the bearer token of .+|Authenticated by an ingest key .+|Called by Stripe only.+)\.$/);
    for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
      const resolved = response.$ref ? (resolvePointer(response.$ref) as any) : response;
      expect(resolved.headers?.['x-request-id'], status).toEqual({ $ref: '#/components/headers/RequestId' });
    }
    // Path parameters: the pattern of the ids they take.
    for (const p of (op.parameters ?? []).filter((x: any) => x.in === 'path')) expect(p.schema.pattern, p.name).toMatch(/^\^.*\$$/);
  });

  it('`limit` is an integer 1–100 (default 50) in every list, as a client sends it', () => {
    const limits = ops.flatMap(({ op }) => (op.parameters ?? []).filter((p: any) => p.name === 'limit'));
    expect(limits.length).toBeGreaterThanOrEqual(4);
    for (const p of limits) expect(p.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
  });

  it('channels never repeat: uniqueItems, in requests and responses', () => {
    expect(doc.components.schemas.CostThresholdRuleRequest.properties.channels.uniqueItems).toBe(true);
    expect(doc.components.schemas.CostThresholdRule.properties.channels.uniqueItems).toBe(true);
    expect(component('CostThresholdRuleRequest')({ type: 'cost_threshold', name: 'x', config: { threshold: 1, period: 'daily' }, channels: ['email', 'email'] })).toBe(false);
  });

  it('each rule type and its config is a named component', () => {
    const refs = (name: string) => (doc.components.schemas[name].oneOf as any[]).map((s) => s.$ref.replace('#/components/schemas/', ''));
    expect(refs('CreateRuleRequest')).toEqual(['CostThresholdRuleRequest', 'NewKeyRuleRequest', 'SpendSpikeRuleRequest', 'SpendAnomalyRuleRequest']);
    expect(refs('Rule')).toEqual(['CostThresholdRule', 'NewKeyRule', 'SpendSpikeRule', 'SpendAnomalyRule']);
    expect(doc.components.schemas.SpendAnomalyRuleRequest.properties.config).toEqual({ $ref: '#/components/schemas/SpendAnomalyConfigRequest' });
    expect(doc.components.schemas.CostThresholdRule.properties.config).toEqual({ $ref: '#/components/schemas/CostThresholdConfig' });
    expect(doc.components.schemas.SpendSpikeRuleRequest.properties.config).toEqual({ $ref: '#/components/schemas/SpendSpikeConfigRequest' });
  });

  it('an example on every request and response body, valid against its schema (objects closed)', () => {
    const closed = componentValidatorsClosed();
    let count = 0;
    for (const { route, op } of ops) {
      const bodies: [string, any][] = [];
      if (op.requestBody) bodies.push(['request', op.requestBody.content['application/json']]);
      for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
        const resolved = response.$ref ? (resolvePointer(response.$ref) as any) : response;
        for (const [type, media] of Object.entries(resolved.content ?? {}) as [string, any][]) bodies.push([`${status} ${type}`, media]);
      }
      for (const [where, media] of bodies) {
        const label = `${route.method} ${route.path} ${where}`;
        expect(media.example, label).toBeDefined();
        const name = media.schema.$ref.replace('#/components/schemas/', '');
        const valid = closed(name);
        expect(valid(media.example), `${label}: ${JSON.stringify(valid.errors)}`).toBe(true);
        count++;
      }
    }
    expect(count).toBeGreaterThan(routes.length * 5);
  });
});

/** Like componentValidators, with every object closed (`additionalProperties: false` where none is said). */
function componentValidatorsClosed() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const close = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(close);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, close(v)]));
    if (out.type === 'object' && out.properties && !('additionalProperties' in out) && !('oneOf' in out)) out.additionalProperties = false;
    return out;
  };
  const schemas = JSON.parse(JSON.stringify(close(doc.components.schemas)).replaceAll('"#/components/schemas/', '"urn:burnrate:closed#/$defs/'));
  // The document and Stripe's event are open by nature.
  for (const open of ['OpenApiDocument', 'StripeEvent']) schemas[open] = JSON.parse(JSON.stringify(doc.components.schemas[open]));
  ajv.addSchema({ $id: 'urn:burnrate:closed', $defs: schemas });
  const cache = new Map<string, ValidateFunction>();
  return (name: string) => {
    if (!cache.has(name)) cache.set(name, ajv.compile({ $ref: `urn:burnrate:closed#/$defs/${name}` }));
    return cache.get(name)!;
  };
}
