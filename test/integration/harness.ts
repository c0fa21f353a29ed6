/**
 * Helpers for integration tests against the local stack started by global-setup.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { resetConfig } from '#shared/config.ts';
import { inject } from 'vitest';
import type { LocalStackInfo } from '#local/stack.ts';
import type { SyncOptions, SyncResult } from '#shared/connections/sync.ts';
import { startEvaluationQueue, type EvaluationQueue } from '#local/evaluation-queue.ts';

/**
 * A test file whose expectations are dated "today" (stand-in clocks frozen when the file starts, ranges counted back
 * from today) must not run across UTC midnight: its dates would change between its first and last test. Called first
 * in such a file's `beforeAll`, this waits for the new UTC day when fewer than `fileMs` remain of this one (a run that
 * starts at 23:57 waits three minutes; any other run waits nothing). Returns the milliseconds waited.
 */
export async function clearOfUtcMidnight(fileMs: number, now: () => number = Date.now, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))): Promise<number> {
  const left = DAY_MS - (now() % DAY_MS);
  if (left >= fileMs) return 0;
  const wait = left + 1_000;
  await sleep(wait);
  return wait;
}
const DAY_MS = 86_400_000;
/** The longest a dated file is allowed to take; its `beforeAll` timeout is this plus its own setup time. */
export const DATED_FILE_MS = 5 * 60_000;

/** The running stack's endpoints and ids. */
export function stack(): LocalStackInfo {
  return inject('stack');
}

export interface ApiOptions {
  method?: string;
  /** Sent as JSON (with `content-type: application/json` unless `headers` says otherwise). */
  body?: unknown;
  /** Sent as is, instead of `body` (a JSON content type unless `headers` says otherwise). */
  rawBody?: string | Uint8Array;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string | undefined;
  headers?: Record<string, string>;
  /** Another base URL than the stack's API (a proxy in front of it). */
  baseUrl?: string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON for a JSON content type (problem+json included), the text otherwise, undefined when empty. */
  body: T;
}

/** One request to the stack's API; `path` is relative to the `/api` prefix (`/auth/me`). */
export async function api<T = any>(path: string, options: ApiOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  let body: string | Uint8Array | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  Object.assign(headers, options.headers);

  const res = await fetch(`${options.baseUrl ?? stack().apiUrl}${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: body as RequestInit['body'],
  });
  const text = await res.text();
  let parsed: unknown = text === '' ? undefined : text;
  if (text !== '' && /[/+]json\b/.test(res.headers.get('content-type') ?? '')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      // leave the text: the test will show it
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/** An e-mail address no other test uses. */
export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}@example.com`;
}

export interface RegisterInput {
  email: string;
  password: string;
  firstName: string;
  lastName: string;
  companyName: string;
}

export interface RegisteredUser extends RegisterInput {
  accountId: string;
  userId: string;
  token: string;
  refreshToken: string;
  expiresIn: number;
  /** The whole 201 body. */
  body: Record<string, unknown>;
}

/** Registers a fresh user through `POST /auth/register`; throws unless it answers 201. */
export async function registerUser(overrides: Partial<RegisterInput> = {}): Promise<RegisteredUser> {
  const input: RegisterInput = {
    email: uniqueEmail(),
    password: `Pw${randomBytes(6).toString('hex')}9`,
    firstName: 'Ada',
    lastName: 'Lovelace',
    companyName: `Company ${randomUUID().slice(0, 8)}`,
    ...overrides,
  };
  const res = await api('/auth/register', { method: 'POST', body: input });
  if (res.status !== 201) {
    throw new Error(`registerUser: POST /auth/register answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return { ...input, ...res.body, body: res.body };
}

let documentClient: DynamoDBDocumentClient | undefined;

/** A document client on the stack's DynamoDB Local, to plant or read items directly. Table: `stack().tableName`. */
export function dynamo(): DynamoDBDocumentClient {
  if (!documentClient) {
    const s = stack();
    documentClient = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: s.dynamodbEndpoint,
        region: s.region,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
  }
  return documentClient;
}

/** Puts an account on a plan directly (tests that need more than FREE's 5 keys; billing itself is tested elsewhere). */
export async function setPlan(accountId: string, plan: 'FREE' | 'GROWTH' | 'SCALE'): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: stack().tableName,
      Key: keys.account(accountId),
      UpdateExpression: 'SET #plan = :plan',
      ExpressionAttributeNames: { '#plan': 'plan' },
      ExpressionAttributeValues: { ':plan': plan },
    }),
  );
}

/**
 * Marks a user's address verified straight in the table (tests of alert delivery; the verification flow itself is
 * tested with the link from the outbox).
 */
export async function markEmailVerified(accountId: string, userId: string, verified = true): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: stack().tableName,
      Key: keys.user(accountId, userId),
      UpdateExpression: 'SET emailVerified = :v',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':v': verified },
    }),
  );
}

/**
 * Points this test process's own clients (shared/config) at the running stack, for tests that call domain code
 * directly (fault injection, repository races). Returns the undo.
 */
export function pointAtStack(extra: Record<string, string> = {}): () => void {
  const saved = { ...process.env };
  const s = stack();
  Object.assign(process.env, {
    TABLE_NAME: s.tableName,
    AWS_REGION: s.region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: s.dynamodbEndpoint,
    COGNITO_ENDPOINT: s.cognitoEndpoint,
    USER_POOL_ID: s.userPoolId,
    USER_POOL_CLIENT_ID: s.userPoolClientId,
    ...extra,
  });
  resetConfig();
  return () => {
    process.env = saved;
    resetConfig();
  };
}

/** The evaluation queue of the syncs this process runs (`pointConnectorsAtStack`), drained by `syncHere`. */
let evaluations: EvaluationQueue | undefined;

/**
 * For tests that run connector syncs in this process: points it at the stack (as pointAtStack) with the connections'
 * local sealing key and the provider stand-ins (`extra` adds or overrides), starts the evaluation queue of its syncs
 * (their alerts: functions/connections/evaluate.ts, in this process), and counts the DynamoDB commands it sends by
 * name into `sent`. Returns the undo of the environment.
 */
export async function pointConnectorsAtStack(sent: Map<string, number>, extra: Record<string, string> = {}): Promise<() => void> {
  const s = stack();
  const restore = pointAtStack({
    CONNECTIONS_LOCAL_KEY: (await readFile(s.connectionsKeyFile, 'utf8')).trim(),
    OPENAI_ADMIN_URL: s.openaiAdmin.url,
    ANTHROPIC_ADMIN_URL: s.anthropicAdmin.url,
    ...extra,
  });
  const { db } = await import('#shared/db/client.ts');
  const name = `countCommands${randomUUID()}`;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context as { commandName?: string }).commandName ?? 'unknown';
      sent.set(command, (sent.get(command) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name },
  );
  const queue = startEvaluationQueue({ region: s.region });
  evaluations = queue;
  return () => {
    if (evaluations === queue) evaluations = undefined;
    void queue.stop();
    restore();
  };
}

/** Resolves once the alerts of the syncs this process ran are raised (their evaluation queue is empty). */
export async function evaluationsDone(): Promise<void> {
  await evaluations?.drain();
}

/**
 * Runs one connector sync in this process, waiting while the stack's own worker holds the lease (asked again every
 * 25 ms, for up to 20 s: a busy attempt is one conditional write), and then for the alerts it calls for (its
 * evaluation): a 10-minute time budget and 20 ms retry backoff unless `options` says otherwise.
 */
export async function syncHere(accountId: string, connectionId: string, options: Partial<SyncOptions> = {}): Promise<SyncResult> {
  const { syncConnection } = await import('#shared/sync/all.ts');
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    const result = await syncConnection(accountId, connectionId, { budgetMs: 600_000, whenBusy: 'skip', ...options, http: { backoffMs: 20, ...options.http } });
    if (result.status !== 'busy') {
      await evaluationsDone();
      return result;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the lease was never free');
}
