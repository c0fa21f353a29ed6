/**
 * `npm run bench:load` — autocannon against the local gateway at a fixed rate: GET /keys, GET /alerts and
 * POST /ingest (batches of fresh events), then the floor they stand on: raw DynamoDB Local round trips (GetItem of
 * one item, and the Query GET /keys makes) from a client of their own in this same process.
 *
 * Options (env or argv, `DURATION=10` / `--duration=10` / `--duration 10`):
 *   DURATION 60       seconds per scenario
 *   RATE 200          requests per second, all connections together (autocannon's `overallRate`)
 *   CONNECTIONS 10    connections autocannon keeps open; also the concurrency of the concurrent raw GetItems
 *   BATCH 100         events per POST /ingest
 *   KEYS 20           provider keys the seeded events (and the ingest scenario's) are spread over
 *   RAW 2000          raw GetItems (and raw Queries) per phase
 *
 * How autocannon holds a rate: each connection may send `RATE / CONNECTIONS` requests a second, back to back (one in
 * flight per connection), then waits for the next second. So the load arrives as bursts of up to CONNECTIONS
 * concurrent requests at the top of each second — the raw GetItems are measured at that concurrency too. Latencies
 * here are taken from every response (float ms), not from autocannon's integer histogram.
 *
 * The stack runs IN this process (as in bench/ingest.ts): the handlers use this process's `db()` client, on which
 * a middleware times every DynamoDB call, so each scenario shows how much of a request's time was DynamoDB Local.
 * autocannon, the gateway and the handlers share this Node process; DynamoDB Local is its own JVM.
 * Exit code: 0 unless a request failed (non-2xx, a connection error or timeout, a rejected event, a raw call error).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { benchSession, benchTenant, call, expectStatus, startBenchStack, heading, intOption, machine, ms, num, pool, summarize, table, type Summary } from './lib.ts';

// Before any SDK client or logger exists (the stack's modules are imported below, after this).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
// The request counter of the integration tests has no place in a latency measurement.
delete process.env.COUNT_DB_REQUESTS;

const { db } = await import('#shared/db/client.ts');
const { keys, queries } = await import('#shared/db/keys.ts');

const DURATION = intOption('duration', 60);
const RATE = intOption('rate', 200);
const CONNECTIONS = intOption('connections', 10);
const BATCH = intOption('batch', 100);
const KEYS = intOption('keys', 20);
const RAW = intOption('raw', 2000);
if (BATCH > 1000) throw new Error('BATCH must be at most 1000 (the API takes 1–1000 events per request).');
if (CONNECTIONS > RATE) throw new Error('CONNECTIONS must be at most RATE (autocannon gives each connection RATE / CONNECTIONS a second).');

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const randInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
const MODELS = [
  { provider: 'openai', model: 'gpt-4o-mini' },
  { provider: 'openai', model: 'gpt-4o' },
  { provider: 'anthropic', model: 'claude-3-5-haiku' },
] as const;

/** One event, priced by the service's own price table (no costUsd). */
function makeEvent(keyHash: string, timestamp?: string): Record<string, unknown> {
  const { provider, model } = MODELS[keyHash.charCodeAt(1) % MODELS.length]!;
  const inputTokens = randInt(100, 4000);
  return {
    requestId: randomUUID(),
    keyHash,
    keyHint: `sk-...${keyHash.slice(0, 4)}`,
    provider,
    model,
    inputTokens,
    cachedInputTokens: randInt(0, Math.floor(inputTokens / 2)),
    outputTokens: randInt(10, 1000),
    ...(timestamp ? { timestamp } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Time spent in DynamoDB by the handlers (this process's db() client)

let dbCalls = 0;
let dbMs = 0;
let dbInFlight = 0;
/** Per command (`Query`): calls, ms inside them, SDK attempts (retries included) and retry delay, since the start. */
interface CommandTotals {
  calls: number;
  ms: number;
  attempts: number;
  retryDelayMs: number;
}
const dbByCommand = new Map<string, CommandTotals>();
const noTotals = (): CommandTotals => ({ calls: 0, ms: 0, attempts: 0, retryDelayMs: 0 });
type Metadata = { $metadata?: { attempts?: number; totalRetryDelay?: number } };

function installDbTimer(): void {
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const started = performance.now();
      dbInFlight += 1;
      let metadata: Metadata['$metadata'];
      try {
        const out = await next(args);
        metadata = (out.output as Metadata).$metadata;
        return out;
      } catch (error) {
        metadata = (error as Metadata).$metadata;
        throw error;
      } finally {
        const elapsed = performance.now() - started;
        dbInFlight -= 1;
        dbCalls += 1;
        dbMs += elapsed;
        const command = (context.commandName ?? 'unknown').replace(/Command$/, '');
        const c = dbByCommand.get(command) ?? noTotals();
        c.calls += 1;
        c.ms += elapsed;
        c.attempts += metadata?.attempts ?? 1;
        c.retryDelayMs += metadata?.totalRetryDelay ?? 0;
        dbByCommand.set(command, c);
      }
    },
    { step: 'initialize', name: 'loadBenchDbTimer', override: true },
  );
}

/**
 * When autocannon stops, the requests it had in flight go on in the handlers (their connections are closed, the
 * work is not): wait until no DynamoDB call has been running for 500 ms (at most 30 s), so the next phase starts
 * on a quiet stack.
 */
async function drained(): Promise<void> {
  const deadline = Date.now() + 30_000;
  let quietSince = Date.now();
  let seen = dbCalls;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (dbInFlight > 0 || dbCalls !== seen) {
      seen = dbCalls;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= 500) {
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// CPU of DynamoDB Local's JVM (Linux /proc; undefined elsewhere)

async function jvmPid(port: number): Promise<number | undefined> {
  try {
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
      const args = cmdline.split('\0');
      if (args.some((a) => a.includes('DynamoDBLocal')) && args.includes(String(port))) return Number(entry);
    }
  } catch {
    // no /proc
  }
  return undefined;
}

/** Seconds of CPU (user + system) a process has used; ticks at 100 Hz. */
async function cpuSecondsOf(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP for the seeding



// ---------------------------------------------------------------------------------------------------------------
// One autocannon scenario

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** POST: a fresh body for every request. */
  body?: () => string;
  /** POST /ingest: counts what the answer says was accepted. */
  ingest?: boolean;
}

/** How a scenario loads the API: at a fixed rate for a time, or as fast as it answers for a number of requests. */
interface Load {
  connections: number;
  rate?: number;
  duration?: number;
  amount?: number;
}

interface ScenarioResult {
  name: string;
  load: Load;
  sent: number;
  completed: number;
  seconds: number;
  latency: Summary & { p90: number };
  non2xx: number;
  statusCodes: string;
  errors: number;
  timeouts: number;
  /** POST /ingest only. */
  events?: { accepted: number; duplicates: number; rejected: number };
  cpuPercent: number;
  /** CPU of this process per answered request (autocannon's share included). */
  cpuMsPerRequest: number;
  jvmCpuPercent: number | undefined;
  loopDelayP99: number;
  dbCallsPerRequest: number;
  /** `TransactWriteItems 2.00 × 480 ms`: per request, calls of each command and the mean ms of one. */
  dbCommands: string;
  dbMsPerRequest: number;
  failures: string[];
}

const percentileOf = (sorted: number[], p: number) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] ?? Number.NaN;

async function runScenario(baseUrl: string, scenario: Scenario, load: Load, jvm: number | undefined): Promise<ScenarioResult> {
  const latencies: number[] = [];
  let sent = 0;
  let secondLatencies: number[] = [];
  let secondResponses = 0;
  let non2xx = 0;
  let errors = 0;
  const failures: string[] = [];
  const events = { accepted: 0, duplicates: 0, rejected: 0 };
  const fail = (message: string) => {
    if (failures.length < 5) failures.push(message);
  };

  const request: autocannon.Request = {
    method: scenario.method,
    path: scenario.path,
    headers: scenario.headers,
    ...(scenario.body ? { setupRequest: (req: autocannon.Request) => ({ ...req, body: scenario.body!() }) } : {}),
    onResponse: (status: number, body: string) => {
      if (status < 200 || status > 299) {
        fail(`${scenario.name} answered ${status}: ${String(body).slice(0, 200)}`);
        return;
      }
      if (scenario.ingest) {
        try {
          const parsed = JSON.parse(body) as { accepted: number; duplicates: number; rejected: { code: string }[] };
          events.accepted += parsed.accepted;
          events.duplicates += parsed.duplicates;
          events.rejected += parsed.rejected.length;
          if (parsed.rejected.length > 0) fail(`${scenario.name} rejected events: ${JSON.stringify(parsed.rejected.slice(0, 2))}`);
        } catch {
          fail(`${scenario.name}: an answer that is not JSON: ${String(body).slice(0, 200)}`);
        }
      }
    },
  };

  const loop = monitorEventLoopDelay({ resolution: 10 });
  const dbCallsBefore = dbCalls;
  const dbMsBefore = dbMs;
  const byCommandBefore = new Map([...dbByCommand].map(([name, c]) => [name, { ...c }]));
  const cpuBefore = process.cpuUsage();
  const jvmBefore = await cpuSecondsOf(jvm);
  const started = performance.now();
  loop.enable();

  let finished!: (value: autocannon.Result) => void;
  let failed!: (error: unknown) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  const instance = autocannon(
    {
      url: baseUrl,
      connections: load.connections,
      ...(load.rate ? { overallRate: load.rate } : {}),
      ...(load.duration ? { duration: load.duration } : {}),
      ...(load.amount ? { amount: load.amount } : {}),
      requests: [request],
      // autocannon's own `requests.sent` adds a guess per connection at start: count what the clients really send.
      setupClient: (client) => {
        (client as unknown as NodeJS.EventEmitter).on('request', () => (sent += 1));
      },
      // Raw latencies: autocannon's correction would add made-up samples at a 1 ms "expected interval".
      ...(load.rate ? { ignoreCoordinatedOmission: true } : {}),
      timeout: 30,
    },
    (error, result) => (error ? failed(error) : finished(result)),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    latencies.push(responseTime);
    secondLatencies.push(responseTime);
    secondResponses += 1;
    if (statusCode < 200 || statusCode > 299) non2xx += 1;
  });
  instance.on('reqError', (error: unknown) => {
    errors += 1;
    fail(`${scenario.name}: ${error instanceof Error ? error.message : String(error)}`);
  });

  // One line a second on stderr: the last second's rate and p50, errors so far.
  let second = 0;
  const ticker = setInterval(() => {
    second += 1;
    const sorted = secondLatencies.sort((a, b) => a - b);
    const line =
      `  ${scenario.name.padEnd(12)} ${String(second).padStart(3)}${load.duration ? `/${load.duration}` : ''} s  ${String(secondResponses).padStart(4)} req/s` +
      `  p50 ${ms(percentileOf(sorted, 50)).padStart(5)} ms  p99 ${ms(percentileOf(sorted, 99)).padStart(5)} ms` +
      `  non-2xx ${non2xx}  errors ${errors}` +
      (scenario.ingest ? `  ${num(events.accepted)} events accepted` : '');
    process.stderr.write(`${line}\n`);
    secondLatencies = [];
    secondResponses = 0;
  }, 1000);

  const result = await done.finally(() => clearInterval(ticker));
  loop.disable();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const jvmAfter = await cpuSecondsOf(jvm);
  const dbCallsDuring = dbCalls - dbCallsBefore;
  const dbMsDuring = dbMs - dbMsBefore;
  const dbCommands = [...dbByCommand]
    .map(([name, c]) => {
      const before = byCommandBefore.get(name) ?? noTotals();
      return {
        name,
        calls: c.calls - before.calls,
        ms: c.ms - before.ms,
        retries: c.attempts - before.attempts - (c.calls - before.calls),
        retryDelayMs: c.retryDelayMs - before.retryDelayMs,
      };
    })
    .filter((c) => c.calls > 0)
    .sort((a, b) => b.ms - a.ms)
    .map(
      (c) =>
        `${c.name} ${num(c.calls / Math.max(1, latencies.length), 2)} × ${ms(c.ms / c.calls)} ms` +
        (c.retries > 0 ? ` (${num(c.retries)} retries, ${ms(c.retryDelayMs / c.calls)} ms backoff a call)` : ''),
    )
    .join(', ');
  await drained();
  const lat = summarize(latencies);
  const sorted = [...latencies].sort((a, b) => a - b);
  const statusCodes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, s]) => `${code}×${s.count ?? 0}`)
    .join(' ');
  return {
    name: scenario.name,
    load,
    sent,
    completed: latencies.length,
    seconds,
    latency: { ...lat, p90: percentileOf(sorted, 90) },
    non2xx: Math.max(non2xx, result.non2xx),
    statusCodes,
    errors: Math.max(errors, result.errors),
    timeouts: result.timeouts,
    ...(scenario.ingest ? { events } : {}),
    cpuPercent: ((cpu.user + cpu.system) / 1e6 / seconds) * 100,
    cpuMsPerRequest: (cpu.user + cpu.system) / 1e3 / Math.max(1, latencies.length),
    jvmCpuPercent: jvmBefore !== undefined && jvmAfter !== undefined ? ((jvmAfter - jvmBefore) / seconds) * 100 : undefined,
    loopDelayP99: loop.percentile(99) / 1e6,
    dbCallsPerRequest: dbCallsDuring / Math.max(1, latencies.length),
    dbCommands,
    dbMsPerRequest: dbMsDuring / Math.max(1, latencies.length),
    failures,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Main

const session = await benchSession('burnrate-bench-load-');
process.exit(await session.run(run));

async function run(): Promise<number> {
  console.log(heading('Load benchmark: autocannon against the local gateway'));
  console.log(`  ${RATE} requests/s (overallRate) over ${CONNECTIONS} connections, ${DURATION} s per scenario; ingest batches of ${BATCH}; ${KEYS} keys`);
  console.log(`  machine: ${machine()}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on it skews the figures)`);

  // --- the stack, in this process --------------------------------------------------------------------------------
  const { stack, dynamodbPort } = await startBenchStack(session);
  let started = performance.now();
  installDbTimer();
  const api = stack.apiUrl;
  const jvm = await jvmPid(dynamodbPort);

  // --- a tenant with data ----------------------------------------------------------------------------------------
  started = performance.now();
  const tenant = await benchTenant(stack, 'load');

  const bearer = { authorization: `Bearer ${tenant.token}` };
  for (const rule of [
    { type: 'new_key', name: 'New key', config: {} },
    { type: 'cost_threshold', name: 'Daily $1', config: { threshold: 1, period: 'daily' } },
  ]) {
    expectStatus('POST /alert-rules', await call(`${api}/alert-rules`, { method: 'POST', headers: bearer, json: { ...rule, channels: ['email'], isActive: true } }), 201);
  }
  // KEYS keys discovered (a new_key alert each), two weeks of history, then today's spend past the daily $1.
  const keyHashes = Array.from({ length: KEYS }, () => sha256(`sk-load-${randomBytes(16).toString('hex')}`));
  const seedEvents = keyHashes.flatMap((hash) =>
    Array.from({ length: 15 }, (_, day) => makeEvent(hash, new Date(Date.now() - day * 86_400_000 - 60_000).toISOString())),
  );
  for (let i = 0; i < seedEvents.length; i += 100) {
    const res = await call<{ accepted: number }>(`${api}/ingest`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.ingestKey },
      json: { events: seedEvents.slice(i, i + 100) },
    });
    expectStatus('POST /ingest (seed)', res, 200);
  }
  const alertList = await call<{ items: unknown[] }>(`${api}/alerts?limit=100`, { headers: bearer });
  expectStatus('GET /alerts', alertList, 200);
  const keyList = await call<{ items: unknown[] }>(`${api}/keys`, { headers: bearer });
  expectStatus('GET /keys', keyList, 200);
  console.log(
    `  seeded in ${ms(performance.now() - started)} ms: ${keyList.body.items.length} keys, ${num(seedEvents.length)} events over 15 days, ` +
      `2 rules, ${alertList.body.items.length} alerts`,
  );

  // --- the scenarios ---------------------------------------------------------------------------------------------
  const base = `http://127.0.0.1:${new URL(stack.apiUrl).port}`;
  const ingestBody = () => JSON.stringify({ events: Array.from({ length: BATCH }, () => makeEvent(keyHashes[randInt(0, KEYS - 1)]!)) });
  const health: Scenario = { name: 'GET /health', method: 'GET', path: '/api/health', headers: {} };
  const scenarios: Scenario[] = [
    { name: 'GET /keys', method: 'GET', path: '/api/keys', headers: bearer },
    { name: 'GET /alerts', method: 'GET', path: '/api/alerts', headers: bearer },
    {
      name: 'POST /ingest',
      method: 'POST',
      path: '/api/ingest',
      headers: { 'x-api-key': tenant.ingestKey, 'content-type': 'application/json' },
      body: ingestBody,
      ingest: true,
    },
  ];
  // Warm-up, not measured: the handlers' code paths and the JVM's JIT for these requests.
  for (const s of [...scenarios, health]) {
    await pool(50, 5, async () => {
      const res = await call(`${base}${s.path}`, { method: s.method, headers: s.headers, ...(s.body ? { body: s.body() } : {}) });
      expectStatus(`${s.name} (warm-up)`, res, 200);
    });
  }

  const results: ScenarioResult[] = [];
  const paced: Load = { connections: CONNECTIONS, rate: RATE, duration: DURATION };
  for (const scenario of scenarios) {
    process.stderr.write(`\n${scenario.name}: ${RATE} req/s for ${DURATION} s over ${CONNECTIONS} connections\n`);
    const result = await runScenario(base, scenario, paced, jvm);
    results.push(result);
    printScenario(result);
  }
  // Baselines of the same path without the work: the gateway and autocannon alone (GET /health touches nothing),
  // at the same rate; and GET /keys one request at a time (no queueing behind other requests).
  process.stderr.write(`\nbaseline GET /health: ${RATE} req/s for ${DURATION} s over ${CONNECTIONS} connections\n`);
  const healthResult = await runScenario(base, health, paced, jvm);
  printScenario(healthResult);
  process.stderr.write(`\nbaseline GET /keys: ${num(RAW)} requests, one at a time\n`);
  const keysSequential = await runScenario(base, { ...scenarios[0]!, name: 'GET /keys 1x' }, { connections: 1, amount: RAW }, jvm);
  printScenario(keysSequential);

  // --- the floor: raw DynamoDB Local round trips ---------------------------------------------------------------------
  const rawClient = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: stack.dynamodbEndpoint, region: stack.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
  session.onCleanup('destroying the raw client', () => rawClient.destroy());
  let rawErrors = 0;
  const timed = async (latencies: number[], send: () => Promise<unknown>) => {
    const t0 = performance.now();
    try {
      await send();
      latencies.push(performance.now() - t0);
    } catch (error) {
      rawErrors += 1;
      if (rawErrors <= 3) console.error(`raw call failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const getItem = () => rawClient.send(new GetCommand({ TableName: stack.tableName, Key: keys.providerKey(tenant.accountId, keyHashes[0]!) }));
  const listKeys = () =>
    rawClient.send(
      new QueryCommand({
        TableName: stack.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': queries.providerKeys(tenant.accountId).gsi1pk },
      }),
    );
  const raw: { name: string; concurrency: number; latency: Summary & { p90: number }; rate: number; cpuMs: number }[] = [];
  for (const [name, send] of [
    ['GetItem', getItem],
    ['Query (GET /keys)', listKeys],
  ] as const) {
    await pool(200, CONNECTIONS, () => timed([], send)); // warm-up
    for (const concurrency of [1, CONNECTIONS]) {
      const latencies: number[] = [];
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await pool(RAW, concurrency, () => timed(latencies, send));
      const cpu = process.cpuUsage(cpu0);
      const seconds = (performance.now() - t0) / 1000;
      const sorted = [...latencies].sort((a, b) => a - b);
      raw.push({
        name,
        concurrency,
        latency: { ...summarize(latencies), p90: percentileOf(sorted, 90) },
        rate: latencies.length / seconds,
        cpuMs: (cpu.user + cpu.system) / 1e3 / Math.max(1, latencies.length),
      });
    }
  }
  console.log(heading(`Raw DynamoDB Local round trips: ${num(RAW)} each, DocumentClient in this process`));
  console.log(
    table([
      ['call', 'concurrency', 'calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'client CPU ms/call'],
      ...raw.map((r) => [
        r.name,
        String(r.concurrency),
        num(r.rate),
        ms(r.latency.p50),
        ms(r.latency.p90),
        ms(r.latency.p99),
        ms(r.latency.max),
        ms(r.cpuMs),
      ]),
    ]),
  );
  console.log(`  errors ${rawErrors}`);

  // --- the comparison ------------------------------------------------------------------------------------------------
  const keysResult = results[0]!;
  const rawAt = (name: string, concurrency: number) => raw.find((r) => r.name === name && r.concurrency === concurrency)!;
  console.log(heading(`GET /keys vs raw DynamoDB Local (autocannon: ${CONNECTIONS} connections, bursts of up to ${CONNECTIONS} in flight)`));
  const rows = [['', 'p50 ms', 'p99 ms', 'p50 ratio', 'p99 ratio']];
  const ratio = (api: ScenarioResult, r: (typeof raw)[number]) => [
    `${num(api.latency.p50 / r.latency.p50, 1)}×`,
    `${num(api.latency.p99 / r.latency.p99, 1)}×`,
  ];
  for (const concurrency of [CONNECTIONS, 1]) {
    const api = concurrency === 1 ? keysSequential : keysResult;
    rows.push([
      concurrency === 1 ? `GET /keys, one request at a time` : `GET /keys at ${RATE} req/s, ${CONNECTIONS} connections`,
      ms(api.latency.p50),
      ms(api.latency.p99),
      '',
      '',
    ]);
    for (const name of ['GetItem', 'Query (GET /keys)']) {
      const r = rawAt(name, concurrency);
      rows.push([`  raw ${name}, concurrency ${concurrency}`, ms(r.latency.p50), ms(r.latency.p99), ...ratio(api, r)]);
    }
  }
  rows.push([`GET /health at ${RATE} req/s (gateway + autocannon only)`, ms(healthResult.latency.p50), ms(healthResult.latency.p99), '', '']);
  console.log(table(rows));

  // --- summary -------------------------------------------------------------------------------------------------------
  console.log(heading('Summary'));
  console.log(
    table([
      ['scenario', 'sent', 'rps', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'events/s'],
      ...[...results, healthResult, keysSequential].map((r) => [
        r.name,
        num(r.sent),
        num(r.completed / r.seconds, 1),
        ms(r.latency.p50),
        ms(r.latency.p90),
        ms(r.latency.p99),
        ms(r.latency.max),
        num(r.non2xx),
        num(r.errors),
        r.events ? num(r.events.accepted / r.seconds) : '',
      ]),
    ]),
  );
  const missed = [...results, healthResult].filter((r) => r.completed / r.seconds < RATE * 0.95);
  const failed = [...results, healthResult, keysSequential].reduce((s, r) => s + r.non2xx + r.errors + (r.events?.rejected ?? 0), 0) + rawErrors;
  const missedText = missed.map((r) => `${r.name} ${num(r.completed / r.seconds, 1)} req/s`).join(', ');
  console.log(`  target ${RATE} req/s (≥ 95%): ${missed.length === 0 ? 'kept in every paced scenario' : `NOT kept by ${missedText}`}`);
  console.log(`  errors (target 0): ${failed}`);
  console.log(`  machine: ${machine()}; load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  return failed > 0 ? 1 : 0;
}

function printScenario(r: ScenarioResult): void {
  const how = r.load.rate ? `${r.load.rate} req/s target, ${r.load.duration} s` : `${num(r.load.amount ?? 0)} requests as fast as answered`;
  console.log(heading(`${r.name}: ${how}, ${r.load.connections} connection${r.load.connections === 1 ? '' : 's'}`));
  console.log(`  requests          ${num(r.sent)} sent, ${num(r.completed)} answered in ${num(r.seconds, 1)} s = ${num(r.completed / r.seconds, 1)} req/s`);
  console.log(
    `  latency ms        p50 ${ms(r.latency.p50)}  p90 ${ms(r.latency.p90)}  p99 ${ms(r.latency.p99)}  max ${ms(r.latency.max)}  (mean ${ms(r.latency.mean)})`,
  );
  console.log(`  status codes      ${r.statusCodes || '–'}`);
  console.log(`  non-2xx ${r.non2xx}, errors ${r.errors} (timeouts ${r.timeouts})`);
  if (r.events) {
    console.log(
      `  events            ${num(r.events.accepted)} accepted = ${num(r.events.accepted / r.seconds)} events/s, ${num(r.events.duplicates)} duplicates, ${num(r.events.rejected)} rejected`,
    );
  }
  console.log(
    `  where time goes   ${num(r.dbCallsPerRequest, 2)} DynamoDB calls and ${ms(r.dbMsPerRequest)} ms inside them per request (summed; they may overlap) ` +
      `of ${ms(r.latency.mean)} ms mean latency`,
  );
  if (r.dbCommands) console.log(`  DynamoDB calls    per request: ${r.dbCommands} (× mean ms of one call, SDK retries included)`);
  console.log(
    `  CPU               this process (autocannon + gateway + handlers) ${num(r.cpuPercent)}% of one core = ${ms(r.cpuMsPerRequest)} ms a request` +
      (r.jvmCpuPercent !== undefined ? `, DynamoDB Local's JVM ${num(r.jvmCpuPercent)}%` : '') +
      `; event-loop delay p99 ${ms(r.loopDelayP99)} ms`,
  );
  for (const failure of r.failures) console.log(`    ${failure}`);
}
