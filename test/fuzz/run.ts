/**
 * Property-based fuzzing of every route of shared/routes.ts (fast-check), shared by `npm test`
 * (test/integration/fuzz.test.ts, a few hundred cases against the test stack) and `npm run fuzz` (this file run
 * directly: its own in-process local stack, ≥ 10,000 cases, a progress bar and a summary table).
 *
 * Per route, against a fresh account that owns one resource of every kind (so path parameters can name real ones):
 *  1. INVALID phase: only inputs the oracle (arbitraries.ts `classify`) calls invalid or ignored. Each must answer
 *     4xx problem+json (never 5xx, never 2xx — except an ingest batch whose every event is refused: 200 with
 *     nothing accepted), and the account's partitions (ACCOUNT#, USAGE#, ALERTS#, its keys' KEY# partitions),
 *     plus the partitions the input names (an event's EVENT#, a key's KEY#, an e-mail's EMAIL#), must be exactly
 *     as before. A write is traced back to the input that made it by replaying the phase case by case.
 *  2. ROBUST phase: anything (valid inputs included, which may write): never 5xx, 4xx as problem+json.
 * A 5xx is replayed from its fast-check path and shrunk to a small reproduction.
 *
 * Env: FUZZ_CASES (total for `npm run fuzz`, default 10000), FUZZ_SEED, FUZZ_CONCURRENCY (routes at once, default 4),
 * FUZZ_ROUTES (comma-separated words: only the routes whose `METHOD /path` contains one).
 */
import { createHmac, randomBytes, randomUUID, createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { routes as routeTable, type Route } from '#shared/routes.ts';
import type { LocalStackInfo } from '#local/stack.ts';
import {
  classify,
  fillPath,
  inputArbitrary,
  routeKey,
  specOf,
  paramKinds,
  touchedPartitions,
  type Expectation,
  type FuzzInput,
  type Mode,
  type Tenant,
} from './arbitraries.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

// ------------------------------------------------------------------------------------------------------------
// The stack, over HTTP and DynamoDB

export interface FuzzEnv {
  info: LocalStackInfo;
}

interface Clients {
  base: string;
  dynamo: DynamoDBDocumentClient;
}

const clients = new WeakMap<FuzzEnv, Clients>();

function clientsOf(env: FuzzEnv): Clients {
  let c = clients.get(env);
  if (!c) {
    c = {
      // 127.0.0.1, not localhost: no resolver round and no IPv6 attempt per request.
      base: env.info.apiUrl.replace('//localhost:', '//127.0.0.1:'),
      dynamo: DynamoDBDocumentClient.from(
        new DynamoDBClient({
          endpoint: env.info.dynamodbEndpoint,
          region: env.info.region,
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }),
      ),
    };
    clients.set(env, c);
  }
  return c;
}

export interface HttpResult {
  status: number;
  contentType: string;
  text: string;
  ms: number;
  /** A transport failure (status 0): the server closed the connection, timed out, ... */
  error?: string;
}

async function request(
  env: FuzzEnv,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<HttpResult> {
  const started = performance.now();
  try {
    const res = await fetch(`${clientsOf(env).base}${path}`, {
      method,
      headers: init.headers ?? {},
      body: init.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(40_000),
    });
    const text = await res.text();
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, ms: performance.now() - started };
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    return { status: 0, contentType: '', text: '', ms: performance.now() - started, error: `${String(error)}${cause ? ` (${String(cause)})` : ''}` };
  }
}

async function json<T = any>(env: FuzzEnv, method: string, path: string, body: unknown, headers: Record<string, string>, expected: number): Promise<T> {
  const res = await request(env, method, path, {
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status !== expected) throw new Error(`fuzz setup: ${method} ${path} answered ${res.status} (expected ${expected}): ${res.text || res.error}`);
  return (res.text ? JSON.parse(res.text) : undefined) as T;
}

/** A fresh account with an ingest key, a discovered key, a rule that fired (an alert) and a budget. */
export async function createTenant(env: FuzzEnv): Promise<Tenant> {
  const email = `fuzz-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}@example.com`;
  const password = `Pw${randomBytes(6).toString('hex')}9`;
  const reg = await json(env, 'POST', '/auth/register', { email, password, firstName: 'Fuzz', lastName: 'Tester', companyName: 'Fuzz Inc' }, {}, 201);
  const auth = { authorization: `Bearer ${reg.token}` };
  const ik = await json(env, 'POST', '/ingest-keys', { name: 'fuzz' }, auth, 201);
  const invitation = await json(env, 'POST', '/invitations', { email: `invitee-${randomBytes(6).toString('hex')}@example.com`, role: 'viewer' }, auth, 201);
  const rule = await json(
    env,
    'POST',
    '/alert-rules',
    { type: 'cost_threshold', name: 'fuzz daily $1', config: { threshold: 1, period: 'daily' }, channels: ['email'], isActive: true },
    auth,
    201,
  );
  const keyHash = createHash('sha256').update(`sk-fuzz-${randomUUID()}`).digest('hex');
  const ingested = await json(
    env,
    'POST',
    '/ingest',
    { events: [{ requestId: randomUUID(), keyHash, keyHint: 'sk-…fuzz', provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd: 2 }] },
    { 'x-api-key': ik.key },
    200,
  );
  if (ingested.accepted !== 1) throw new Error(`fuzz setup: the first event was not accepted: ${JSON.stringify(ingested)}`);
  const budget = await json(env, 'POST', '/budgets', { monthlyLimit: 100, alertThreshold: 80, scope: 'ACCOUNT' }, auth, 201);
  // The alert is e-mailed after the response: wait until its delivery settled, so the snapshot is taken at rest.
  let alertId: string | undefined;
  for (let attempt = 0; ; attempt++) {
    const alerts = await json(env, 'GET', '/alerts', undefined, auth, 200);
    const alert = alerts.items?.[0] as { id: string; deliveries: { status: string }[] } | undefined;
    if (alert && alert.deliveries.every((d) => d.status !== 'pending')) {
      alertId = alert.id;
      break;
    }
    if (attempt >= 100) throw new Error(`fuzz setup: no alert with settled deliveries after crossing the rule’s threshold: ${JSON.stringify(alert)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // An export, settled before the snapshots (its worker writes after the 202).
  const started = await json(env, 'POST', '/spend/exports', {}, auth, 202);
  for (let attempt = 0; ; attempt++) {
    const status = await json(env, 'GET', `/spend/exports/${started.id}`, undefined, auth, 200);
    if (status.status !== 'running') break;
    if (attempt >= 100) throw new Error(`fuzz setup: the export did not settle: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // A connection to an Anthropic stand-in organization of its own (3 keys × 2 models × 3 days: enough for keys,
  // spend and a reconciliation; a first sync of about a second): that sync done, then paused, so nothing writes meanwhile.
  const standIn = env.info.anthropicAdmin.url;
  const org = await fetch(`${standIn}/_burnrate/orgs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ big: { keys: 3, models: 2, days: 3 }, late: null }),
  });
  if (org.status !== 201) throw new Error(`fuzz setup: POST /_burnrate/orgs answered ${org.status}: ${await org.text()}`);
  const { adminKey } = (await org.json()) as { adminKey: string };
  const connection = await json(env, 'POST', '/connections', { provider: 'anthropic', adminKey }, auth, 201);
  for (let attempt = 0; ; attempt++) {
    const state = await json(env, 'GET', `/connections/${connection.id}`, undefined, auth, 200);
    if (state.lastSyncAt) break;
    if (attempt >= 600) throw new Error(`fuzz setup: the connection's first sync did not finish: ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await json(env, 'PATCH', `/connections/${connection.id}`, { status: 'paused' }, auth, 200);
  // The imported spend crosses the budget: wait until the alerts it raises exist and their deliveries settled (the
  // same ids with nothing pending on two reads half a second apart).
  let seen = '';
  for (let attempt = 0; ; attempt++) {
    const alerts = await json(env, 'GET', '/alerts?limit=100', undefined, auth, 200);
    const items = (alerts.items ?? []) as { id: string; deliveries: { status: string }[] }[];
    const settled = items.every((a) => a.deliveries.every((d) => d.status !== 'pending' && d.status !== 'sending'));
    const ids = items.map((a) => a.id).join(',');
    if (settled && ids === seen) break;
    seen = settled ? ids : '';
    if (attempt >= 120) throw new Error(`fuzz setup: alerts after the connection's sync did not settle: ${JSON.stringify(items)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return {
    email,
    password,
    accountId: reg.accountId,
    userId: reg.userId,
    token: reg.token,
    refreshToken: reg.refreshToken,
    ingestKey: ik.key,
    ingestKeyId: ik.id,
    keyHash,
    budgetId: budget.id,
    ruleId: rule.id,
    alertId,
    invitationId: invitation.id,
    exportId: started.id,
    connectionId: connection.id,
  };
}

// ------------------------------------------------------------------------------------------------------------
// Sending one input

/** `t=…,v1=…`: Stripe's signature scheme (HMAC-SHA256 of `<t>.<payload>`). */
function stripeSignature(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/** A header value fetch can send: what a client could put in a header line (no CR/LF/NUL, bytes ≤ 0xFF). */
function headerSafe(value: string): string {
  return value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?').trim();
}

function headersFor(route: Route, input: FuzzInput, t: Tenant, env: FuzzEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  if (input.body !== undefined && input.contentType) headers['content-type'] = input.contentType;
  const name = route.auth === 'ingestKey' ? 'x-api-key' : route.auth === 'stripe' ? 'stripe-signature' : 'authorization';
  const auth = input.auth;
  let value: string | undefined;
  if (auth.mode === 'replace') value = auth.value;
  else if (route.auth === 'jwt' && auth.mode === 'valid') value = `Bearer ${t.token}`;
  else if (route.auth === 'ingestKey' && auth.mode === 'valid') value = t.ingestKey;
  else if (route.auth === 'stripe') {
    const body = input.body ?? '';
    const secret = env.info.stripeWebhookSecret;
    if (auth.mode === 'valid') value = stripeSignature(body, secret);
    else if (auth.mode === 'wrong-secret') value = stripeSignature(body, 'whsec_not_the_real_one');
    else if (auth.mode === 'stale') value = stripeSignature(body, secret, Math.floor(Date.now() / 1000) - 600);
    else if (auth.mode === 'tampered') value = stripeSignature(`${body} `, secret);
  }
  if (value !== undefined) headers[name] = headerSafe(value);
  return headers;
}

function urlOf(route: Route, input: FuzzInput): string {
  return `${fillPath(route.path, input.params)}${input.query ? `?${input.query}` : ''}`;
}

/** Sends one input (a GET goes without its body: fetch, like most clients, cannot send one). */
export function sendInput(env: FuzzEnv, route: Route, input: FuzzInput, t: Tenant): Promise<HttpResult> {
  const sent = route.method === 'GET' ? { ...input, body: undefined } : input;
  return request(env, route.method, urlOf(route, sent), {
    headers: headersFor(route, sent, t, env),
    ...(sent.body === undefined ? {} : { body: sent.body }),
  });
}

// ------------------------------------------------------------------------------------------------------------
// Judging a response

export type ViolationKind = '5xx' | 'transport-error' | 'not-problem-json' | 'bad-2xx' | 'accepted-invalid' | 'wrote-on-invalid';

/**
 * Refusals by the HTTP server itself, before any route runs: a request line + headers past 16 KB is answered 431
 * by the gateway's clientError handler (problem+json), as API Gateway answers its own limits with its own bodies.
 * Counted as notes (the request was refused, nothing ran), not as contract violations of the API.
 */
const TRANSPORT_LIMIT_STATUSES = new Set([414, 431]);

export interface Violation {
  kind: ViolationKind;
  route: string;
  phase: Mode;
  detail: string;
  input: FuzzInput;
  status: number;
  response: string;
  /** Index of the case in its phase's fast-check run (its `path`, to replay it). */
  runIndex: number;
  /** A smaller input that fails the same way (fast-check shrinking), when found. */
  shrunk?: FuzzInput;
}

/** What is wrong with a response, or undefined. */
export function judge(res: HttpResult, expectation: Expectation): { kind: ViolationKind; detail: string } | undefined {
  if (res.status === 0) return { kind: 'transport-error', detail: res.error ?? 'no response' };
  if (res.status >= 500) return { kind: '5xx', detail: `answered ${res.status}` };
  if (res.status >= 400) {
    if (TRANSPORT_LIMIT_STATUSES.has(res.status) && res.contentType === '' && res.text === '') return undefined;
    if (res.contentType !== PROBLEM_CONTENT_TYPE) return { kind: 'not-problem-json', detail: `${res.status} with content-type "${res.contentType}"` };
    try {
      const problem = JSON.parse(res.text) as { type?: unknown; status?: unknown; title?: unknown };
      if (typeof problem.type !== 'string' || !problem.type.startsWith('/problems/') || problem.status !== res.status || typeof problem.title !== 'string') {
        return { kind: 'not-problem-json', detail: `${res.status} with a body that is no problem: ${res.text.slice(0, 200)}` };
      }
    } catch {
      return { kind: 'not-problem-json', detail: `${res.status} with a body that is not JSON` };
    }
    return undefined;
  }
  if (res.status >= 200 && res.status < 300) {
    // The export answers CSV (RFC 4180: CRLF line ends, its header first); every other 2xx answers JSON.
    const csv = res.contentType.startsWith('text/csv') && res.text.startsWith('date,key_hash,') && res.text.endsWith('\r\n');
    if (res.text !== '' && !csv) {
      if (!res.contentType.startsWith('application/json')) return { kind: 'bad-2xx', detail: `${res.status} with content-type "${res.contentType}"` };
      try {
        JSON.parse(res.text);
      } catch {
        return { kind: 'bad-2xx', detail: `${res.status} with a body that is not JSON` };
      }
    }
    if (expectation.kind === 'invalid') {
      const nothingAccepted = (() => {
        try {
          const body = JSON.parse(res.text) as { accepted?: unknown; duplicates?: unknown };
          return body.accepted === 0 && body.duplicates === 0;
        } catch {
          return false;
        }
      })();
      if (!(expectation.allowNothingAccepted && res.status === 200 && nothingAccepted)) {
        return { kind: 'accepted-invalid', detail: `${res.status} for an invalid input (${expectation.why})` };
      }
    }
    return undefined;
  }
  return { kind: 'bad-2xx', detail: `unexpected status ${res.status}` };
}

// ------------------------------------------------------------------------------------------------------------
// "Nothing written": the account's items before and after

type Snapshot = Map<string, string>;

/** JSON with sorted keys: equal items give equal text. */
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    if (value instanceof Set) return `Set(${[...value].map(stable).sort().join(',')})`;
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

async function queryAll(env: FuzzEnv, input: Omit<QueryCommandInput, 'TableName'>): Promise<Record<string, unknown>[]> {
  const { dynamo } = clientsOf(env);
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(new QueryCommand({ TableName: env.info.tableName, ConsistentRead: !input.IndexName, ...input, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

const partitionItems = (env: FuzzEnv, pk: string) =>
  queryAll(env, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } });

/**
 * The account's items: ACCOUNT#, USAGE#, ALERTS#, and the KEY# partition of each key it has (from gsi1), plus the
 * `extra` partitions. An ingest key's `lastUsedAt` is left out: authenticating with it records the use (at most once
 * a minute) before the body is read, by design; so is an alert's sweeper index entry (removed after delivery).
 */
export async function snapshot(env: FuzzEnv, accountId: string, extra: readonly string[] = []): Promise<Snapshot> {
  const keyItems = await queryAll(env, {
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': `ACCOUNT#${accountId}#KEYS` },
  });
  const pks = new Set([
    `ACCOUNT#${accountId}`,
    `USAGE#${accountId}`,
    `ALERTS#${accountId}`,
    ...keyItems.map((item) => item.pk as string),
    ...extra,
  ]);
  const snap: Snapshot = new Map();
  for (const items of await Promise.all([...pks].map((pk) => partitionItems(env, pk)))) {
    for (const item of items) {
      const copy = { ...item };
      if (String(copy.sk).startsWith('INGESTKEY#')) delete copy.lastUsedAt;
      // The sweeper's index entry of an alert is removed by a write of its own after the delivery settled (the
      // setup waits for the delivery, not for that write): bookkeeping of the delivery, not a change by an input.
      if (String(copy.sk).startsWith('ALERT#')) {
        delete copy.gsi2pk;
        delete copy.gsi2sk;
      }
      // An export accepted earlier is settled by its worker after the 202 (its status, figures and slot): the
      // worker's bookkeeping, not a change by an input. A new export by an input still shows as a new EXPORT# item.
      if (String(copy.sk).startsWith('EXPORTSLOT#')) continue;
      if (String(copy.sk).startsWith('EXPORT#')) {
        for (const field of ['status', 'rows', 'bytes', 'objectKey', 'availableUntil', 'completedAt', 'expiresAt']) delete copy[field];
      }
      snap.set(`${String(item.pk)} | ${String(item.sk)}`, stable(copy));
    }
  }
  return snap;
}

export function diffSnapshots(before: Snapshot, after: Snapshot): string[] {
  const changes: string[] = [];
  for (const [key, value] of after) {
    if (!before.has(key)) changes.push(`+ ${key}`);
    else if (before.get(key) !== value) changes.push(`~ ${key}: ${before.get(key)} → ${value}`);
  }
  for (const key of before.keys()) if (!after.has(key)) changes.push(`- ${key}`);
  return changes;
}

async function extrasSnapshot(env: FuzzEnv, pks: readonly string[]): Promise<Snapshot> {
  const snap: Snapshot = new Map();
  for (const items of await Promise.all(pks.map((pk) => partitionItems(env, pk).catch(() => [])))) {
    for (const item of items) snap.set(`${String(item.pk)} | ${String(item.sk)}`, stable(item));
  }
  return snap;
}

// ------------------------------------------------------------------------------------------------------------
// One route

export interface CaseEvent {
  route: string;
  phase: Mode;
  status: number;
  ms: number;
}

export interface RouteReport {
  route: string;
  cases: number;
  invalidCases: number;
  /** Count per HTTP status (0: no response). */
  statuses: Record<number, number>;
  slowest?: { ms: number; status: number; input: FuzzInput };
  violations: Violation[];
  seed: number;
  ms: number;
}

export interface FuzzOptions {
  /** Cases for this route (split between the invalid and the robust phase). */
  runs: number;
  seed: number;
  /** Shrink the first 5xx of the route to a small reproduction (costs more requests). */
  shrink?: boolean;
  tenant?: Tenant;
  onCase?: (event: CaseEvent) => void;
}

/** Fuzzes one route; never throws for what the server answers (violations are in the report). */
export async function fuzzRoute(env: FuzzEnv, route: Route, options: FuzzOptions): Promise<RouteReport> {
  specOf(route);
  paramKinds(route);
  const started = performance.now();
  const key = routeKey(route);
  const t = options.tenant ?? (await createTenant(env));
  const report: RouteReport = { route: key, cases: 0, invalidCases: 0, statuses: {}, violations: [], seed: options.seed, ms: 0 };
  const invalidRuns = Math.max(1, Math.ceil(options.runs / 2));
  const robustRuns = Math.max(1, options.runs - invalidRuns);

  const runIndex: Record<Mode, number> = { invalid: 0, any: 0 };
  const record = (phase: Mode, input: FuzzInput, res: HttpResult, expectation: Expectation) => {
    const index = runIndex[phase]++;
    report.cases += 1;
    if (phase === 'invalid') report.invalidCases += 1;
    report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
    if (!report.slowest || res.ms > report.slowest.ms) report.slowest = { ms: res.ms, status: res.status, input };
    const problem = judge(res, expectation);
    if (problem) {
      report.violations.push({ ...problem, route: key, phase, input, status: res.status, response: res.text.slice(0, 500), runIndex: index });
    }
    options.onCase?.({ route: key, phase, status: res.status, ms: res.ms });
  };

  // A GET that sets something up on first use (the webhook secret) does it now, before the snapshot.
  if (route.method === 'GET' && Object.keys(paramKinds(route)).length === 0) {
    await sendInput(env, route, { params: {}, query: '', body: undefined, contentType: undefined, auth: { mode: 'valid' }, gen: 'warm-up' }, t);
  }

  // 1. Invalid inputs: 4xx and nothing written.
  const before = await snapshot(env, t.accountId);
  const invalidInputs: FuzzInput[] = [];
  const invalidRun = await fc.check(
    fc.asyncProperty(inputArbitrary(route, t, 'invalid'), async (input) => {
      const expectation = classify(route, input, t);
      const extra = expectation.kind === 'invalid' ? touchedPartitions(route, input, t) : [];
      const extraBefore = extra.length ? await extrasSnapshot(env, extra) : undefined;
      const res = await sendInput(env, route, input, t);
      invalidInputs.push(input);
      record('invalid', input, res, expectation);
      if (extraBefore) {
        const changes = diffSnapshots(extraBefore, await extrasSnapshot(env, extra));
        if (changes.length) {
          report.violations.push({
            kind: 'wrote-on-invalid',
            route: key,
            phase: 'invalid',
            detail: changes.slice(0, 5).join('\n'),
            input,
            status: res.status,
            response: res.text.slice(0, 500),
            runIndex: runIndex.invalid - 1,
          });
        }
      }
      return true;
    }),
    // The property only fails when the harness itself throws: then stop, don't shrink.
    { seed: options.seed, numRuns: invalidRuns, endOnFailure: true },
  );
  if (invalidRun.failed) throw new Error(`fuzz harness error on ${key}: ${String(invalidRun.errorInstance)}`);
  const changes = diffSnapshots(before, await snapshot(env, t.accountId));
  if (changes.length) report.violations.push(await traceWrite(env, route, t, invalidInputs, changes));

  // 2. Anything: never 5xx.
  const robustRun = await fc.check(
    fc.asyncProperty(inputArbitrary(route, t, 'any'), async (input) => {
      record('any', input, await sendInput(env, route, input, t), classify(route, input, t));
      return true;
    }),
    { seed: options.seed + 1, numRuns: robustRuns, endOnFailure: true },
  );
  if (robustRun.failed) throw new Error(`fuzz harness error on ${key}: ${String(robustRun.errorInstance)}`);

  if (options.shrink) await shrinkFirst5xx(env, route, t, report, { invalid: invalidRuns, any: robustRuns });
  report.ms = performance.now() - started;
  return report;
}

/** Replays the invalid inputs one by one, each between two snapshots, to name the one that wrote. */
async function traceWrite(env: FuzzEnv, route: Route, t: Tenant, inputs: FuzzInput[], changes: string[]): Promise<Violation> {
  for (const [index, input] of inputs.entries()) {
    const before = await snapshot(env, t.accountId);
    const res = await sendInput(env, route, input, t);
    const diff = diffSnapshots(before, await snapshot(env, t.accountId));
    if (diff.length) {
      return {
        kind: 'wrote-on-invalid',
        route: routeKey(route),
        phase: 'invalid',
        detail: diff.slice(0, 5).join('\n'),
        input,
        status: res.status,
        response: res.text.slice(0, 500),
        runIndex: index,
      };
    }
  }
  return {
    kind: 'wrote-on-invalid',
    route: routeKey(route),
    phase: 'invalid',
    detail: `the invalid phase changed the account, but no single input did again on replay:\n${changes.slice(0, 5).join('\n')}`,
    input: inputs[0]!,
    status: 0,
    response: '',
    runIndex: 0,
  };
}

/** Re-runs the route's first 5xx from its fast-check path and lets fast-check shrink it (20 s at most). */
async function shrinkFirst5xx(env: FuzzEnv, route: Route, t: Tenant, report: RouteReport, runs: Record<Mode, number>): Promise<void> {
  const violation = report.violations.find((v) => v.kind === '5xx');
  if (!violation) return;
  const phase = violation.phase;
  const seed = phase === 'invalid' ? report.seed : report.seed + 1;
  const property = fc.asyncProperty(inputArbitrary(route, t, phase), async (input) => {
    const res = await sendInput(env, route, input, t);
    return res.status < 500 && res.status !== 0;
  });
  // `path` replays exactly the failing run (same seed, same index), then fast-check shrinks it.
  const details = await fc.check(property, { seed, numRuns: runs[phase], path: String(violation.runIndex), interruptAfterTimeLimit: 20_000 });
  if (details.failed && details.counterexample) violation.shrunk = details.counterexample[0];
}

// ------------------------------------------------------------------------------------------------------------
// Reporting

/** A request as a curl-like line (for the report). */
export function describeInput(route: Route | string, input: FuzzInput): string {
  const r = typeof route === 'string' ? routeTable.find((x) => routeKey(x) === route)! : route;
  const auth =
    input.auth.mode === 'valid'
      ? r.auth === 'none'
        ? ''
        : ` [${r.auth}: the tenant's valid credential]`
      : input.auth.mode === 'replace'
        ? ` [${r.auth === 'ingestKey' ? 'x-api-key' : r.auth === 'stripe' ? 'stripe-signature' : 'authorization'}: ${input.auth.value === undefined ? '(none)' : JSON.stringify(input.auth.value.slice(0, 120))}]`
        : ` [stripe-signature: ${input.auth.mode}]`;
  const body = input.body === undefined ? '' : ` body(${input.body.length} chars, ${input.contentType ?? 'no content-type'})=${JSON.stringify(input.body.length > 400 ? `${input.body.slice(0, 400)}…` : input.body)}`;
  return `${r.method} /api${urlOf(r, input).slice(0, 300)}${auth}${body}  <${input.gen}>`;
}

export function formatViolations(violations: readonly Violation[]): string {
  return violations
    .map((v, i) => {
      const lines = [
        `#${i + 1} ${v.kind} on ${v.route} (${v.phase} phase): ${v.detail}`,
        `   input:    ${describeInput(v.route, v.input)}`,
        `   response: ${v.status} ${v.response.slice(0, 300)}`,
      ];
      if (v.shrunk) lines.push(`   shrunk:   ${describeInput(v.route, v.shrunk)}`);
      return lines.join('\n');
    })
    .join('\n');
}

// ------------------------------------------------------------------------------------------------------------
// `npm run fuzz`

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

class Progress {
  private done = 0;
  private last = 0;
  private readonly started = performance.now();
  private lastPercent = -1;
  constructor(
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  tick(fiveXx: number): void {
    this.done += 1;
    const now = performance.now();
    if (this.stream.isTTY) {
      if (now - this.last < 100 && this.done < this.total) return;
      this.last = now;
      this.stream.write(`\r${this.line(fiveXx)}\x1b[K`);
    } else {
      const percent = Math.floor((this.done / this.total) * 10) * 10;
      if (percent !== this.lastPercent) {
        this.lastPercent = percent;
        this.stream.write(`${this.line(fiveXx)}\n`);
      }
    }
  }

  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }

  private line(fiveXx: number): string {
    const width = 30;
    const ratio = Math.min(1, this.done / this.total);
    const filled = Math.round(ratio * width);
    const seconds = (performance.now() - this.started) / 1000;
    const rate = this.done / Math.max(seconds, 0.001);
    const eta = rate > 0 ? Math.max(0, (this.total - this.done) / rate) : 0;
    return `fuzz [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} ${(ratio * 100).toFixed(0)}% ${rate.toFixed(0)}/s eta ${eta.toFixed(0)}s 5xx: ${fiveXx}`;
  }
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

export function summaryTable(reports: readonly RouteReport[]): string {
  const rows = reports.map((r) => {
    const count = (predicate: (s: number) => boolean) => Object.entries(r.statuses).reduce((n, [s, c]) => (predicate(Number(s)) ? n + c : n), 0);
    const fourXx = Object.entries(r.statuses)
      .filter(([s]) => Number(s) >= 400 && Number(s) < 500)
      .map(([s, c]) => `${s}:${c}`)
      .join(' ');
    const slow = r.slowest ? `${r.slowest.ms.toFixed(0)} ms (${r.slowest.status}, ${r.slowest.input.gen})` : '';
    return [
      r.route,
      String(r.cases),
      String(count((s) => s >= 200 && s < 300)),
      fourXx || '-',
      String(count((s) => s >= 500 || s === 0)),
      String(r.violations.length),
      slow,
    ];
  });
  const header = ['route', 'cases', '2xx', '4xx by status', '5xx', 'violations', 'slowest case'];
  const total = ['TOTAL', String(reports.reduce((n, r) => n + r.cases, 0)), '', '', String(rows.reduce((n, r) => n + Number(r[4]), 0)), String(rows.reduce((n, r) => n + Number(r[5]), 0)), ''];
  const all = [header, ...rows, total];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => pad(cell, widths[i]!)).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line), rule, line(total)].join('\n');
}

async function pool<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

async function main(): Promise<number> {
  const total = Number(process.env.FUZZ_CASES || 10_000);
  const seed = Number(process.env.FUZZ_SEED || Math.floor(Math.random() * 2 ** 31));
  const concurrency = Number(process.env.FUZZ_CONCURRENCY || 4);
  // FUZZ_ROUTES=ingest,budgets: only the routes whose `METHOD /path` contains one of the words.
  const only = (process.env.FUZZ_ROUTES ?? '').split(',').map((w) => w.trim()).filter(Boolean);
  const selected = only.length ? routeTable.filter((r) => only.some((w) => routeKey(r).includes(w))) : routeTable;
  if (selected.length === 0) throw new Error(`FUZZ_ROUTES=${process.env.FUZZ_ROUTES} matches no route`);
  const perRoute = Math.ceil(total / selected.length);
  routeTable.forEach((route) => {
    specOf(route);
    paramKinds(route);
  });
  Object.assign(process.env, {
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL || 'SILENT',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
  });

  const { startLocalStack } = await import('#local/stack.ts');
  const dataDir = await mkdtemp(join(tmpdir(), 'burnrate-fuzz-'));
  const ports = new Set<number>();
  while (ports.size < 3) ports.add(await freePort());
  const [port, dynamodbPort, cognitoPort] = [...ports] as [number, number, number];
  process.stderr.write(`fuzz: starting a local stack in ${dataDir} ...\n`);
  const stack = await startLocalStack({ port, dataDir, dynamodbPort, cognitoPort, quiet: true, keyDir: join(tmpdir(), 'burnrate-it-keys') });
  // Ctrl-C: stop the stack (DynamoDB Local and cognito-local are children) and its data, then leave.
  const interrupted = () => {
    process.stderr.write('\nfuzz: interrupted, stopping the local stack ...\n');
    void stack
      .stop()
      .then(() => rm(dataDir, { recursive: true, force: true }))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  // The gateway logs each 5xx with its error: keep those lines for the report instead of breaking the progress bar.
  const serverErrors: string[] = [];
  const originalError = console.error;
  console.error = (...args: unknown[]) => {
    if (serverErrors.length < 200) serverErrors.push(args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(' '));
  };

  const env: FuzzEnv = { info: stack };
  const started = performance.now();
  let fiveXx = 0;
  const progress = new Progress(perRoute * selected.length);
  process.stderr.write(`fuzz: ${selected.length} routes × ${perRoute} cases, seed ${seed}, ${concurrency} routes at a time\n`);
  let reports: RouteReport[];
  try {
    reports = await pool(selected, concurrency, (route) =>
      fuzzRoute(env, route, {
        runs: perRoute,
        seed,
        shrink: true,
        onCase: (event) => {
          if (event.status >= 500 || event.status === 0) fiveXx += 1;
          progress.tick(fiveXx);
        },
      }),
    );
  } finally {
    progress.finish();
    console.error = originalError;
    await stack.stop();
    await rm(dataDir, { recursive: true, force: true });
  }

  const seconds = (performance.now() - started) / 1000;
  const cases = reports.reduce((n, r) => n + r.cases, 0);
  process.stdout.write(`\n${summaryTable(reports)}\n\n`);
  process.stdout.write(`${cases} cases in ${seconds.toFixed(1)} s (${(cases / seconds).toFixed(0)}/s), seed ${seed} (FUZZ_SEED=${seed} replays the inputs)\n`);
  const slowest = reports
    .filter((r) => r.slowest)
    .sort((a, b) => b.slowest!.ms - a.slowest!.ms)
    .slice(0, 5)
    .map((r) => `  ${r.slowest!.ms.toFixed(0)} ms → ${r.slowest!.status}  ${describeInput(r.route, r.slowest!.input).slice(0, 400)}`);
  process.stdout.write(`slowest cases:\n${slowest.join('\n')}\n`);
  const refusedByServer = reports.reduce((n, r) => n + [...TRANSPORT_LIMIT_STATUSES].reduce((m, s) => m + (r.statuses[s] ?? 0), 0), 0);
  if (refusedByServer) {
    process.stdout.write(`note: ${refusedByServer} request(s) past 16 KB of request line + headers were refused by the HTTP server before any route ran (431)\n`);
  }
  const violations = reports.flatMap((r) => r.violations);
  if (violations.length) {
    process.stdout.write(`\n${violations.length} violation(s):\n${formatViolations(violations)}\n`);
    if (serverErrors.length) process.stdout.write(`\nserver log (first lines):\n${serverErrors.slice(0, 10).join('\n').slice(0, 6000)}\n`);
  } else {
    process.stdout.write('no 5xx, every 4xx problem+json, nothing written by an invalid input\n');
  }
  return violations.length ? 1 : 0;
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(2);
    },
  );
}
