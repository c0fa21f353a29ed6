/**
 * The whole local stack in one call: DynamoDB Local and cognito-local as children, the environment the
 * handlers read, and the gateway — which listens last, so `GET /api/health` answering means ready.
 */
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { rmSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { resetConfig } from '#shared/config.ts';
import { assertPortFree, describeExit, type SupervisedChild } from '#local/child.ts';
import { startCognitoLocal, type CognitoLocal } from '#local/cognito.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal, type DynamoDbLocal } from '#local/dynamodb.ts';
import { createGateway } from '#local/gateway.ts';
import { LOCAL_STRIPE_PRICES, LOCAL_STRIPE_SECRET_KEY, startStripeMock } from '#local/stripe-mock.ts';
import { startOpenAiAdmin } from '#local/openai-admin.ts';
import { startAnthropicAdmin } from '#local/anthropic-admin.ts';
import { startOpenRouterAdmin } from '#local/openrouter-admin.ts';
import { startAlertQueue } from '#local/alert-queue.ts';
import { startEvaluationQueue } from '#local/evaluation-queue.ts';
import { localExportFiles } from '#local/export-files.ts';
import { startLocalQueue, type QueueHandler } from '#local/queue.ts';
import { setLocalExportFiles } from '#shared/spend/export-files.ts';
import { setLocalExportQueue, type ExportMessage } from '#shared/spend/export-queue.ts';
import { setLocalAlertSink } from '#shared/alerting/queue.ts';
import { sweepUndelivered } from '#shared/notify/sweep.ts';
import { setLocalSyncSink, type SyncMessage } from '#shared/connections/queue.ts';
import { dispatchDue } from '#shared/connections/dispatch.ts';

export const LOCAL_TABLE_NAME = 'burnrate';
export const STACK_INFO_FILE = 'local-stack.json';
const CURSOR_SECRET_FILE = 'cursor-secret';
const STRIPE_WEBHOOK_SECRET_FILE = 'stripe-webhook-secret';
/**
 * The random 32-byte key that seals connections' admin keys locally (AES-256-GCM; AWS: a KMS key). It lives outside
 * the data folder, so a copy of the data folder alone (DynamoDB Local's file included) opens no sealed admin key: in
 * `CONNECTIONS_KEY_DIR`, else `$XDG_CONFIG_HOME/burnrate` or `~/.config/burnrate` (a folder of mode 0700), one file
 * per data folder (`connections-key-<first 16 hex of SHA-256 of its absolute path>`, mode 0600). A key left in the
 * data folder by an older version is moved there on start.
 */
const CONNECTIONS_KEY_FILE = 'connections-key';
/** Held while a stack runs on the data directory: `{"pid": …}`. */
export const LOCK_FILE = 'local-stack.lock';

/** What `<dataDir>/local-stack.json` holds: everything a test or script needs to reach the stack. */
export interface LocalStackInfo {
  apiUrl: string;
  dynamodbEndpoint: string;
  cognitoEndpoint: string;
  userPoolId: string;
  userPoolClientId: string;
  tableName: string;
  region: string;
  /** The local Stripe stand-in (local/stripe-mock.ts): API base of the SDK and origin of its checkout pages. */
  stripeUrl: string;
  /** The webhook signing secret the stand-in signs with and the API verifies with (tests sign events with it). */
  stripeWebhookSecret: string;
  /** Where alert e-mail lands, one `.eml` file per message. */
  outboxDir: string;
  /**
   * The stand-ins of the providers' admin APIs (local/openai-admin.ts, local/anthropic-admin.ts): `url` is the
   * base URL without `/v1` (what `OPENAI_ADMIN_URL` / `ANTHROPIC_ADMIN_URL` hold for the connections unless the
   * environment of `npm start` set them elsewhere), `adminKey` the admin key they accept (at start: the control
   * API can rotate or revoke it, `GET <url>/_burnrate/state` has the current one). The control API is at
   * `<url>/_burnrate/…` (local/provider-org.ts).
   */
  openaiAdmin: { url: string; adminKey: string };
  anthropicAdmin: { url: string; adminKey: string };
  /** The OpenRouter stand-in (local/openrouter-admin.ts): `url` without `/api/v1`, `adminKey` its management key. */
  openrouter: { url: string; adminKey: string };
  /** The processes of the stack (for tools and tests): this one, DynamoDB Local's jar, cognito-local. */
  pids: { stack: number; dynamodb?: number; cognito?: number };
  /** Where the key that seals connections' admin keys is kept (outside the data folder; see CONNECTIONS_KEY_FILE). */
  connectionsKeyFile: string;
}

export interface LocalStackOptions {
  port: number;
  dataDir: string;
  dynamodbPort: number;
  cognitoPort: number;
  /** Interface the gateway listens on (default 127.0.0.1; `0.0.0.0` exposes it). */
  host?: string;
  /** No request log lines. */
  quiet?: boolean;
  /** Copy the children's output to stderr (for debugging them). */
  echoChildren?: boolean;
  /** Port of the Stripe stand-in. @default env STRIPE_PORT, else any free port */
  stripePort?: number;
  /** Ports of the admin API stand-ins. @default env OPENAI_ADMIN_PORT / ANTHROPIC_ADMIN_PORT, else any free port */
  openaiAdminPort?: number;
  anthropicAdminPort?: number;
  /** Port of the OpenRouter stand-in. @default env OPENROUTER_PORT, else any free port */
  openrouterPort?: number;
  /** DynamoDB Local keeps the table in memory: nothing persists (local/dynamodb.ts `inMemory`). */
  dynamodbInMemory?: boolean;
  /** The built dashboard to serve at `/` (local/web.ts); none: only the API answers. */
  webDir?: string;
  /** The folder of the connections' sealing key. @default env CONNECTIONS_KEY_DIR, else ~/.config/burnrate */
  keyDir?: string;
}

export interface LocalStack extends LocalStackInfo {
  dataDir: string;
  /**
   * Resolves when DynamoDB Local or cognito-local exits without `stop()` having been called — the stack is
   * then broken. Never rejects.
   */
  unexpectedExit: Promise<string>;
  stop(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const dataDir = resolve(options.dataDir);
  const host = options.host ?? '127.0.0.1';
  checkHost(host, process.env);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // The data folder holds the database and the key that opens the admin keys sealed in it: its owner's only.
  await chmod(dataDir, 0o700);
  const releaseLock = await lockDataDir(dataDir);
  try {
    return await startOnLockedDir(options, dataDir, host, releaseLock);
  } catch (error) {
    await releaseLock();
    throw error;
  }
}

async function startOnLockedDir(options: LocalStackOptions, dataDir: string, host: string, releaseLock: () => Promise<void>): Promise<LocalStack> {
  // Before the first SDK client is made: the SDK's notices about Node versions are noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
  const echo = options.echoChildren ?? false;
  // Fail in a moment, not after the children started, when the API's own port is taken.
  await assertPortFree(options.port, 'the API', 'PORT');
  const stripePort = options.stripePort ?? Number(process.env.STRIPE_PORT || 0);
  if (stripePort) await assertPortFree(stripePort, 'the Stripe stand-in', 'STRIPE_PORT');

  const [dynamo, cognito] = await Promise.allSettled([
    startDynamoDbLocal({ port: options.dynamodbPort, dir: join(dataDir, 'dynamodb'), tableName: LOCAL_TABLE_NAME, echo, inMemory: options.dynamodbInMemory ?? false }),
    startCognitoLocal({ port: options.cognitoPort, dir: join(dataDir, 'cognito'), echo }),
  ]);
  if (dynamo.status === 'rejected' || cognito.status === 'rejected') {
    await Promise.all([dynamo, cognito].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    const reasons = [dynamo, cognito].flatMap((r) => (r.status === 'rejected' ? [errorText(r.reason)] : []));
    throw new Error(reasons.join('\n'));
  }
  const children: Array<DynamoDbLocal | CognitoLocal> = [dynamo.value, cognito.value];
  const stopChildren = () => Promise.all(children.map((c) => c.stop())).then(() => undefined);

  // The Stripe stand-in: the handlers' real Stripe SDK talks to it; its Pay/Cancel pages send signed webhooks here.
  const stripeMock = await startStripeMock({
    port: stripePort,
    host,
    dataDir: join(dataDir, 'stripe'),
    // Random per data directory, kept under it: a webhook secret in the source would let anyone who reaches the
    // API sign Stripe events.
    webhookSecret: await localSecret(join(dataDir, STRIPE_WEBHOOK_SECRET_FILE), 'whsec_'),
    webhookUrl: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${options.port}/api/billing/webhook`,
    // Its success / cancel / portal-return pages lead back to the dashboard's Billing screen (served by the gateway).
    dashboardUrl: process.env.DASHBOARD_URL || `http://${host === '0.0.0.0' || host === '127.0.0.1' ? 'localhost' : host}:${options.port}`,
  }).catch(async (error: unknown) => {
    await stopChildren();
    throw error;
  });
  // The providers' admin APIs, each with a made-up organization kept under the data folder (its admin key too).
  // Loopback whatever HOST says: their control API has no authentication and hands out admin keys.
  const [openaiAdmin, anthropicAdmin, openrouter] = await Promise.allSettled([
    startOpenAiAdmin({ port: options.openaiAdminPort ?? Number(process.env.OPENAI_ADMIN_PORT || 0), host: '127.0.0.1', dataDir: join(dataDir, 'openai-admin') }),
    startAnthropicAdmin({ port: options.anthropicAdminPort ?? Number(process.env.ANTHROPIC_ADMIN_PORT || 0), host: '127.0.0.1', dataDir: join(dataDir, 'anthropic-admin') }),
    startOpenRouterAdmin({ port: options.openrouterPort ?? Number(process.env.OPENROUTER_PORT || 0), host: '127.0.0.1', dataDir: join(dataDir, 'openrouter') }),
  ]);
  if (openaiAdmin.status === 'rejected' || anthropicAdmin.status === 'rejected' || openrouter.status === 'rejected') {
    await Promise.all([openaiAdmin, anthropicAdmin, openrouter].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    await stripeMock.stop();
    await stopChildren();
    throw [openaiAdmin, anthropicAdmin, openrouter].flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))[0];
  }
  const standIns = [openaiAdmin.value, anthropicAdmin.value, openrouter.value];
  const stopStandIns = () => Promise.all(standIns.map((s) => s.stop())).then(() => undefined);
  const info: LocalStackInfo = {
    apiUrl: `http://${host === '0.0.0.0' || host === '127.0.0.1' ? 'localhost' : host}:${options.port}/api`,
    dynamodbEndpoint: dynamo.value.endpoint,
    cognitoEndpoint: cognito.value.endpoint,
    userPoolId: cognito.value.userPoolId,
    userPoolClientId: cognito.value.userPoolClientId,
    tableName: LOCAL_TABLE_NAME,
    region: LOCAL_REGION,
    stripeUrl: stripeMock.url,
    stripeWebhookSecret: stripeMock.webhookSecret,
    outboxDir: join(dataDir, 'outbox'),
    openaiAdmin: { url: openaiAdmin.value.url, adminKey: openaiAdmin.value.adminKey() },
    anthropicAdmin: { url: anthropicAdmin.value.url, adminKey: anthropicAdmin.value.adminKey() },
    openrouter: { url: openrouter.value.url, adminKey: openrouter.value.adminKey() },
    pids: { stack: process.pid, dynamodb: dynamo.value.child.pid, cognito: cognito.value.child.pid },
    connectionsKeyFile: await connectionsKeyFile(dataDir, options.keyDir),
  };

  // The handlers read these at module scope: set them before the gateway imports any handler.
  Object.assign(process.env, {
    TABLE_NAME: info.tableName,
    AWS_REGION: info.region,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    DYNAMODB_ENDPOINT: info.dynamodbEndpoint,
    COGNITO_ENDPOINT: info.cognitoEndpoint,
    USER_POOL_ID: info.userPoolId,
    USER_POOL_CLIENT_ID: info.userPoolClientId,
    // One given in the environment wins (the test setup passes the test project's), else the kept one.
    CURSOR_SECRET: process.env.CURSOR_SECRET || (await localSecret(join(dataDir, CURSOR_SECRET_FILE))),
    // Alerts: e-mail to .eml files in the outbox, webhooks to http:// receivers on this machine allowed.
    OUTBOX_DIR: info.outboxDir,
    // appUrl: the dashboard is served by the same server, so every e-mailed link points at it.
    DASHBOARD_URL: process.env.DASHBOARD_URL || info.apiUrl.replace(/\/api$/, ''),
    ALLOW_INSECURE_WEBHOOKS: 'true',
    ALERT_EMAIL_FROM: process.env.ALERT_EMAIL_FROM || 'alerts@burnrate.localhost',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    // Billing: the real Stripe SDK against the stand-in; the redirect URLs at its local pages.
    STRIPE_API_BASE: stripeMock.url,
    STRIPE_SECRET_KEY: LOCAL_STRIPE_SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: stripeMock.webhookSecret,
    STRIPE_PRICE_GROWTH: LOCAL_STRIPE_PRICES.GROWTH,
    STRIPE_PRICE_SCALE: LOCAL_STRIPE_PRICES.SCALE,
    BILLING_SUCCESS_URL: stripeMock.pages.success,
    BILLING_CANCEL_URL: stripeMock.pages.cancel,
    BILLING_PORTAL_RETURN_URL: stripeMock.pages.portalReturn,
    // Connections: the providers' admin APIs, base URLs without /v1. Set in the environment of `npm start` they
    // point elsewhere; else at the stand-ins (shared/config.ts reads them; in AWS they are never set).
    OPENAI_ADMIN_URL: process.env.OPENAI_ADMIN_URL || openaiAdmin.value.url,
    ANTHROPIC_ADMIN_URL: process.env.ANTHROPIC_ADMIN_URL || anthropicAdmin.value.url,
    // OpenRouter: a base URL with or without /api/v1.
    OPENROUTER_URL: process.env.OPENROUTER_URL || openrouter.value.url,
    // Admin keys of connections are sealed under a key made once and kept outside the data folder (never in the source).
    CONNECTIONS_LOCAL_KEY: await localSecret(info.connectionsKeyFile),
  });
  resetConfig();
  await mkdir(join(dataDir, 'outbox'), { recursive: true });
  // The alerts queue and its notifier, in-process (AWS: SQS + the notifier Lambda).
  const alertQueue = startAlertQueue({ region: info.region });
  setLocalAlertSink((messages) => alertQueue.publish(messages));
  // The AWS stack's 5-minute schedule of the alert sweeper, here once a minute (ALERT_SWEEP_INTERVAL_MS; 0 = off,
  // as in the integration tests, which run the sweeper themselves).
  const sweepEvery = Number(process.env.ALERT_SWEEP_INTERVAL_MS ?? 60_000);
  const sweeper = sweepEvery > 0
    ? setInterval(() => sweepUndelivered().catch((error: unknown) => console.error('[local] alert sweep failed:', error)), sweepEvery)
    : undefined;
  sweeper?.unref();
  // Asynchronous spend exports: their queue and worker in-process (AWS: SQS + the export worker Lambda), the files
  // under the data folder with one-time download links the gateway serves (AWS: S3 and pre-signed URLs).
  const exportFiles = localExportFiles(dataDir, info.apiUrl.replace(/\/api$/, ''));
  setLocalExportFiles(exportFiles);
  const exportQueue = startLocalQueue<ExportMessage>(
    {
      label: 'export-queue',
      queueName: 'burnrate-local-exports',
      functionName: 'burnrate-local-ExportWorker',
      timeoutMs: 15 * 60_000,
      workerFile: 'functions/spend/export-worker.ts',
      loadHandler: () => import('#functions/spend/export-worker.ts').then((m) => m.handler as QueueHandler),
      toBody: (m) => JSON.stringify({ accountId: m.accountId, exportId: m.exportId }),
      droppedNote: 'their exports fail when their lease ends',
    },
    { region: info.region, batchSize: 1, maxReceiveCount: 2 },
  );
  setLocalExportQueue((message) => exportQueue.publish([message]));
  const stopExports = async () => {
    setLocalExportQueue(undefined);
    await exportQueue.stop();
    setLocalExportFiles(undefined);
  };
  // Connections: the sync queue and its worker in-process (AWS: SQS + the worker Lambda), and the dispatcher on a timer
  // (AWS: EventBridge every 15 minutes; here CONNECTOR_SYNC_INTERVAL_MS, default 60 s, which is also the interval the
  // sync schedules its next run at; 0 = the timer off).
  const syncEvery = Number(process.env.CONNECTOR_SYNC_INTERVAL_MS ?? 60_000);
  process.env.CONNECTOR_SYNC_INTERVAL_MS = String(syncEvery > 0 ? syncEvery : 60_000);
  // An account with a spend-anomaly rule that stops keys: every minute here (AWS: every 5 minutes).
  process.env.ANOMALY_SYNC_INTERVAL_MS ??= '60000';
  const syncQueue = startLocalQueue<SyncMessage>(
    {
      label: 'sync-queue',
      queueName: 'burnrate-local-connection-syncs',
      functionName: 'burnrate-local-ConnectionSyncWorker',
      timeoutMs: 5 * 60_000,
      workerFile: 'functions/connections/worker.ts',
      loadHandler: () => import('#functions/connections/worker.ts').then((m) => m.handler as QueueHandler),
      toBody: (m) => JSON.stringify({ accountId: m.accountId, connectionId: m.connectionId, provider: m.provider }),
      droppedNote: 'their connections sync at the next dispatch',
    },
    // One record per invocation, as the AWS event source (infra: batch size 1), and up to 10 syncs at once, as many
    // Lambda containers would run them.
    { region: info.region, batchSize: 1, concurrency: 10 },
  );
  setLocalSyncSink((messages) => syncQueue.publish(messages));
  // What each sync calls for in alerts: its own queue and function (AWS: SQS + the evaluator Lambda).
  const evaluationQueue = startEvaluationQueue({ region: info.region });
  const dispatcher = syncEvery > 0
    ? setInterval(() => dispatchDue().catch((error: unknown) => console.error('[local] connection dispatch failed:', error)), syncEvery)
    : undefined;
  dispatcher?.unref();

  const gateway = createGateway({ logRequests: options.quiet ? false : undefined, webDir: options.webDir, downloads: exportFiles.serve });
  try {
    await gateway.preload();
    gateway.server.listen({ port: options.port, host });
    await once(gateway.server, 'listening');
  } catch (error) {
    clearInterval(sweeper);
    clearInterval(dispatcher);
    setLocalAlertSink(undefined);
    setLocalSyncSink(undefined);
    await syncQueue.stop();
    await evaluationQueue.stop();
    await alertQueue.stop();
    await stopExports();
    await stripeMock.stop();
    await stopStandIns();
    await stopChildren();
    const code = (error as NodeJS.ErrnoException).code;
    throw code === 'EADDRINUSE'
      ? new Error(`Port ${options.port} (the API) is already in use. Stop whatever holds it, or set PORT to another port.`)
      : error;
  }
  // Whole or not at all (a reader that found the API answering may read it at once): written aside, then renamed.
  const infoFile = join(dataDir, STACK_INFO_FILE);
  await writeFile(`${infoFile}.${process.pid}.tmp`, `${JSON.stringify(info, null, 2)}\n`);
  await rename(`${infoFile}.${process.pid}.tmp`, infoFile);

  let stopping = false;
  const unexpectedExit = new Promise<string>((resolveExit) => {
    for (const { child } of children) {
      void child.exited.then((exit) => {
        if (!stopping && !child.stopping) resolveExit(describeExit(child as SupervisedChild, exit));
      });
    }
  });

  return {
    ...info,
    dataDir,
    unexpectedExit,
    async stop() {
      if (stopping) return;
      stopping = true;
      const closed = new Promise<void>((done) => gateway.server.close(() => done()));
      gateway.server.closeAllConnections();
      clearInterval(sweeper);
      clearInterval(dispatcher);
      setLocalAlertSink(undefined);
      setLocalSyncSink(undefined);
      await closed;
      await syncQueue.stop();
      await evaluationQueue.stop();
      await alertQueue.stop();
      await stopExports();
      await stripeMock.stop();
      await stopStandIns();
      await stopChildren();
      await releaseLock();
    },
  };
}

/** A random secret made on first start and kept under the data folder (so cursors, signatures survive a restart). */
async function localSecret(file: string, prefix = ''): Promise<string> {
  try {
    const kept = (await readFile(file, 'utf8')).trim();
    if (kept) return kept;
    throw new Error('empty');
  } catch {
    const secret = `${prefix}${randomBytes(32).toString('hex')}`;
    await writeFile(file, `${secret}\n`, { mode: 0o600 });
    return secret;
  }
}

/**
 * The file of the data folder's sealing key, outside it (see CONNECTIONS_KEY_FILE): its folder is made (0700) if
 * missing, and a key an older version kept in the data folder is moved into it (its sealed admin keys still open).
 */
async function connectionsKeyFile(dataDir: string, keyDir?: string): Promise<string> {
  const configHome = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  const dir = resolve(keyDir ?? (process.env.CONNECTIONS_KEY_DIR || join(configHome, 'burnrate')));
  const inside = relative(dataDir, dir);
  if (inside === '' || !inside.startsWith('..')) throw new Error(`CONNECTIONS_KEY_DIR (${dir}) is inside the data folder ${dataDir}: the key that opens its sealed admin keys must live elsewhere.`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const file = join(dir, `${CONNECTIONS_KEY_FILE}-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
  const old = join(dataDir, CONNECTIONS_KEY_FILE);
  const kept = await readFile(old, 'utf8').catch(() => '');
  if (kept.trim()) {
    const already = await readFile(file, 'utf8').catch(() => '');
    if (!already.trim()) await writeFile(file, `${kept.trim()}\n`, { mode: 0o600 });
    await unlink(old);
  }
  return file;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------------------------
// Safety: who may reach the stack, and one stack per data directory

const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * The local identity (cognito-local) signs tokens with a key published in its source code: whoever reaches an API
 * listening beyond this machine can mint a token for any account. So HOST must be loopback unless the developer
 * says ALLOW_REMOTE=1 — and then hears the warning.
 */
export function checkHost(host: string, env: NodeJS.ProcessEnv): void {
  if (isLoopbackHost(host)) return;
  const why =
    'the local identity service (cognito-local) signs tokens with a key that is published in its source code, so anyone ' +
    'who can reach the API could sign in to any account';
  if (env.ALLOW_REMOTE !== '1') {
    throw new Error(`HOST=${host} would open the local stack to other machines, and ${why}. Use HOST=127.0.0.1 (the default), or set ALLOW_REMOTE=1 to do it anyway.`);
  }
  console.warn(`WARNING: the API listens on ${host} (ALLOW_REMOTE=1): ${why}. Never do this on a network you do not trust.`);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dataDir>/local-stack.lock` (created exclusively, holding our pid) or fails with a clear message when a
 * live process holds it; a lock left by a process that is gone is taken over. Returns its release.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, LOCK_FILE);
  const content = `${JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() })}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, content, { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw error;
    }
    let holder: number | undefined;
    try {
      holder = Number((JSON.parse(await readFile(file, 'utf8')) as { pid?: unknown }).pid) || undefined;
    } catch {
      // unreadable or half written: treated as stale below
    }
    if (holder !== undefined && pidAlive(holder)) {
      throw new Error(
        `Another local stack (pid ${holder}) is running on the data directory ${dataDir}. Stop it first, or set DATA_DIR to another directory.`,
      );
    }
    // A stale lock (its process is gone): take it over.
    await rm(file, { force: true });
  }
  let released = false;
  const releaseSync = () => {
    if (released) return;
    released = true;
    try {
      rmSync(file, { force: true });
    } catch {
      // nothing to do on the way out
    }
  };
  process.once('exit', releaseSync);
  return async () => {
    process.off('exit', releaseSync);
    if (released) return;
    released = true;
    await rm(file, { force: true });
  };
}
