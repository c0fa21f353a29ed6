/**
 * `npm run bench:ingest` — POST /ingest throughput against the embedded local stack, next to the floor it is
 * measured against: a raw loop of conditional PutItems (one per event) on the same DynamoDB Local.
 *
 * Options (env or argv, `EVENTS=5000` / `--events=5000` / `--events 5000`):
 *   EVENTS 20000   events sent (and raw puts made)
 *   BATCH 500      events per POST /ingest (1–1000)
 *   KEYS 50        provider key hashes the events are spread over
 *   CONCURRENCY 1  ingest requests in flight, and raw puts in flight
 *   WARMUP 1000    events sent (and puts made) before each timed phase, not timed (0: none)
 *   CUSTOMERS 0    each event names one of this many customers (`customerId`) and one of 8 features: the month ×
 *                  customer and month × feature sums the writer adds in the same transaction (0: none)
 *
 * The stack runs IN this process, so the handlers use this process's `db()` client: a middleware on it counts
 * DynamoDB requests per batch by command. Exit code: 0 unless requests failed or the totals do not match
 * (a ratio below the target is reported, not failed).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { benchSession, benchTenant, call, expectStatus, startBenchStack, heading, intOption, machine, ms, num, pool, Progress, summarize, table } from './lib.ts';

// Before any SDK client or logger exists (the stack's modules are imported below, after this).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';

const { db } = await import('#shared/db/client.ts');
const { keys } = await import('#shared/db/keys.ts');
const { EVENT_TTL_SECONDS } = await import('#shared/db/usage-writes.ts');

const EVENTS = intOption('events', 20_000);
const BATCH = intOption('batch', 500);
const KEYS = intOption('keys', 50);
const CONCURRENCY = intOption('concurrency', 1);
const WARMUP = intOption('warmup', 1000, 0);
const CUSTOMERS = intOption('customers', 0, 0);
const TARGET_RATIO = 0.7;
const MODEL = 'gpt-4o-mini';
if (BATCH > 1000) throw new Error('BATCH must be at most 1000 (the API takes 1–1000 events per request).');

// ---------------------------------------------------------------------------------------------------------------
// Events with exactly known prices

interface BenchEvent {
  requestId: string;
  keyHash: string;
  provider: string;
  model: string;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  customerId?: string;
  feature?: string;
}

const randInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * gpt-4o-mini costs 0.15 / 0.075 / 0.60 $ per 1M input / cached input / output tokens = 0.15 / 0.075 / 0.6 µ$ a
 * token. Token counts in multiples of 40 (input, cached) and 5 (output) make every event's cost a whole number of
 * micro-dollars, so the expected sums are exact whatever rounding the pricing applies.
 */
function makeEvent(keyHash: string): { event: BenchEvent; micros: number } {
  const input = 40 * randInt(1, 100);
  const cached = 40 * randInt(0, input / 80);
  const output = 5 * randInt(1, 200);
  const micros = ((input - cached) / 20) * 3 + (cached / 40) * 3 + (output / 5) * 3;
  const event: BenchEvent = { requestId: randomUUID(), keyHash, provider: 'openai', model: MODEL, inputTokens: input, cachedInputTokens: cached, outputTokens: output };
  if (CUSTOMERS > 0) {
    event.customerId = `cus_${randInt(0, CUSTOMERS - 1)}`;
    event.feature = `feature-${randInt(0, 7)}`;
  }
  return { event, micros };
}

// ---------------------------------------------------------------------------------------------------------------
// Counting DynamoDB requests made by the handlers (this process's db() client)

interface CommandStats {
  calls: number;
  /** SDK attempts (retries included), from the response's or error's $metadata. */
  attempts: number;
  /** Wall time inside the SDK call, summed. */
  ms: number;
  /** TransactWriteItems only: actions sent. */
  actions: number;
  errors: Map<string, number>;
}

const stats = new Map<string, CommandStats>();
let counting = false;

function statsOf(command: string): CommandStats {
  let s = stats.get(command);
  if (!s) stats.set(command, (s = { calls: 0, attempts: 0, ms: 0, actions: 0, errors: new Map() }));
  return s;
}

function installCounter(): void {
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (!counting) return next(args);
      const s = statsOf((context.commandName ?? 'unknown').replace(/Command$/, ''));
      s.calls += 1;
      const items = (args.input as { TransactItems?: unknown[] }).TransactItems;
      if (Array.isArray(items)) s.actions += items.length;
      const started = performance.now();
      try {
        const out = await next(args);
        s.attempts += (out.output as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1;
        return out;
      } catch (error) {
        s.attempts += (error as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1;
        const name = error instanceof Error ? error.name : 'unknown';
        s.errors.set(name, (s.errors.get(name) ?? 0) + 1);
        throw error;
      } finally {
        s.ms += performance.now() - started;
      }
    },
    { step: 'initialize', name: 'benchCounter', override: true },
  );
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP


const cpuSeconds = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1e6;


interface KeyView {
  hash: string;
  spend: { total: number };
  requests: { total: number };
}

// ---------------------------------------------------------------------------------------------------------------
// Main

const errors: string[] = [];
let errorCount = 0;
function recordError(message: string): void {
  errorCount += 1;
  if (errors.length < 10) errors.push(message);
}

const session = await benchSession('burnrate-bench-ingest-');
process.exit(await session.run(run));

async function run(): Promise<number> {
  const batches = Math.ceil(EVENTS / BATCH);
  console.log(heading('POST /ingest benchmark'));
  console.log(`  events ${num(EVENTS)}, batch ${BATCH} (${batches} requests), keys ${KEYS}, concurrency ${CONCURRENCY}, warm-up ${num(WARMUP)}${CUSTOMERS ? `, ${num(CUSTOMERS)} customers and 8 features` : ''}`);
  console.log(`  machine: ${machine()}`);

  // --- the stack, in this process --------------------------------------------------------------------------------
  const { stack } = await startBenchStack(session);
  let started = performance.now();
  installCounter();
  const api = stack.apiUrl;

  // --- a tenant --------------------------------------------------------------------------------------------------
  const tenant = await benchTenant(stack, 'bench');


  // --- the events, prepared before timing --------------------------------------------------------------------------
  const keyHashes = Array.from({ length: KEYS }, () => sha256(`sk-bench-${randomBytes(16).toString('hex')}`));
  const expected = new Map<string, { micros: number; requests: number }>(keyHashes.map((h) => [h, { micros: 0, requests: 0 }]));
  const makeBodies = (count: number): { body: string; size: number }[] => {
    const bodies: { body: string; size: number }[] = [];
    for (let sent = 0; sent < count; sent += BATCH) {
      const events: BenchEvent[] = [];
      for (let i = 0; i < Math.min(BATCH, count - sent); i++) {
        const keyHash = keyHashes[randInt(0, KEYS - 1)]!;
        const { event, micros } = makeEvent(keyHash);
        const e = expected.get(keyHash)!;
        e.micros += micros;
        e.requests += 1;
        events.push(event);
      }
      bodies.push({ body: JSON.stringify({ events }), size: events.length });
    }
    return bodies;
  };
  const warmupBodies = makeBodies(WARMUP);
  const bodies = makeBodies(EVENTS);

  const send = async (b: { body: string; size: number }): Promise<void> => {
    try {
      const res = await call<{ accepted?: number; rejected?: unknown[] }>(`${api}/ingest`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.ingestKey, 'content-type': 'application/json' },
        body: b.body,
      });
      if (res.status !== 200) recordError(`POST /ingest answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      else if (res.body.accepted !== b.size) recordError(`POST /ingest accepted ${res.body.accepted} of ${b.size}: ${JSON.stringify(res.body).slice(0, 300)}`);
    } catch (error) {
      recordError(`POST /ingest failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  // --- warm-up (the JVM of DynamoDB Local, the handlers' code paths); not timed, counted in the totals --------------
  if (warmupBodies.length > 0) await pool(warmupBodies.length, CONCURRENCY, (i) => send(warmupBodies[i]!));

  // --- timed ingest ------------------------------------------------------------------------------------------------
  const latencies: number[] = [];
  const progress = new Progress('ingest ', EVENTS);
  counting = true;
  let cpu = process.cpuUsage();
  started = performance.now();
  await pool(bodies.length, CONCURRENCY, async (i) => {
    const b = bodies[i]!;
    const t0 = performance.now();
    await send(b);
    latencies.push(performance.now() - t0);
    progress.add(b.size);
  });
  const ingestSeconds = (performance.now() - started) / 1000;
  const ingestCpu = cpuSeconds(process.cpuUsage(cpu));
  counting = false;
  progress.finish();
  const ingestRate = EVENTS / ingestSeconds;

  // --- the totals, read back through the API ---------------------------------------------------------------------
  const listed: KeyView[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await call<{ items: KeyView[]; nextCursor: string | null }>(`${api}/keys${query}`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expectStatus('GET /keys', page, 200);
    listed.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor);
  const expectedMicros = [...expected.values()].reduce((s, e) => s + e.micros, 0);
  const expectedRequests = [...expected.values()].reduce((s, e) => s + e.requests, 0);
  const listedMicros = listed.reduce((s, k) => s + Math.round(k.spend.total * 1_000_000), 0);
  const listedRequests = listed.reduce((s, k) => s + k.requests.total, 0);
  const expectedKeys = [...expected.values()].filter((e) => e.requests > 0).length;
  const keyMismatches = listed.filter((k) => {
    const e = expected.get(k.hash);
    return !e || Math.round(k.spend.total * 1_000_000) !== e.micros || k.requests.total !== e.requests;
  }).length;
  const totalsOk = listedMicros === expectedMicros && listedRequests === expectedRequests && listed.length === expectedKeys && keyMismatches === 0;

  // --- report of the ingest phase ----------------------------------------------------------------------------------
  const lat = summarize(latencies);
  console.log(heading(`POST /ingest: ${num(EVENTS)} events in ${batches} batches of ≤ ${BATCH}, concurrency ${CONCURRENCY}`));
  console.log(`  throughput        ${num(ingestRate)} events/s (${num(ingestSeconds, 2)} s)`);
  console.log(`  batch latency ms  p50 ${ms(lat.p50)}  p95 ${ms(lat.p95)}  p99 ${ms(lat.p99)}  max ${ms(lat.max)}  (mean ${ms(lat.mean)})`);
  console.log(`  per event         ${ms((lat.mean / BATCH) * 1000)} µs of batch latency (mean)`);
  console.log(`  CPU of this process ${num(ingestCpu, 2)} s = ${num((ingestCpu / ingestSeconds) * 100)}% of one core (client, gateway, handlers, SDK; DynamoDB Local is a separate JVM)`);
  console.log(`  errors            ${errorCount}`);
  for (const message of errors) console.log(`    ${message}`);

  const commands = [...stats.entries()].sort((a, b) => b[1].calls - a[1].calls);
  const all = commands.reduce((s, [, c]) => ({ calls: s.calls + c.calls, attempts: s.attempts + c.attempts, ms: s.ms + c.ms }), { calls: 0, attempts: 0, ms: 0 });
  const rows: string[][] = [['DynamoDB request', 'total', 'per batch', 'attempts', 'ms per call', 'ms per batch', 'errors']];
  const errorText = (m: Map<string, number>) => [...m].map(([n, c]) => `${n} ${c}`).join(', ') || '0';
  for (const [name, c] of commands) {
    rows.push([name, num(c.calls), num(c.calls / batches, 2), num(c.attempts), ms(c.ms / c.calls), ms(c.ms / batches), errorText(c.errors)]);
  }
  rows.push(['all', num(all.calls), num(all.calls / batches, 2), num(all.attempts), ms(all.ms / Math.max(1, all.calls)), ms(all.ms / batches), '']);
  console.log(`\n${table(rows, { left: [6] })}`);
  const tx = stats.get('TransactWriteItems');
  if (tx) {
    console.log(`  TransactWriteItems: ${num(tx.actions / tx.calls, 1)} actions per call, ${num(EVENTS / tx.calls, 1)} events per call`);
  }
  if (CONCURRENCY === 1) {
    const batchMs = latencies.reduce((s, v) => s + v, 0);
    console.log(`  time in DynamoDB calls: ${num((all.ms / batchMs) * 100, 1)}% of batch latency (the rest: HTTP, parsing, validation, pricing, planning, marshalling)`);
  } else {
    console.log(`  time in DynamoDB calls: ${ms(all.ms / batches)} ms per batch summed over its calls (they overlap between batches)`);
  }

  console.log(heading('Totals check (GET /keys)'));
  console.log(
    table([
      ['', 'expected', 'GET /keys'],
      ['keys', num(expectedKeys), num(listed.length)],
      ['requests', num(expectedRequests), num(listedRequests)],
      ['spend (µ$)', num(expectedMicros), num(listedMicros)],
      ['spend ($)', (expectedMicros / 1e6).toFixed(6), (listedMicros / 1e6).toFixed(6)],
    ]),
  );
  console.log(`  keys whose spend or requests differ: ${keyMismatches}`);
  console.log(`  ${totalsOk ? 'OK' : 'MISMATCH'}${WARMUP > 0 ? ` (totals include the ${num(WARMUP)} warm-up events)` : ''}`);

  // --- the floor: raw conditional puts -------------------------------------------------------------------------------
  const rawClient = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: stack.dynamodbEndpoint, region: stack.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  session.onCleanup('destroying the raw client', () => rawClient.destroy());
  const rawAccount = `bench-raw-${randomBytes(4).toString('hex')}`;
  let rawErrors = 0;
  const put = async (): Promise<void> => {
    const now = new Date();
    const { event, micros } = makeEvent(keyHashes[randInt(0, KEYS - 1)]!);
    try {
      await rawClient.send(
        new PutCommand({
          TableName: stack.tableName,
          Item: {
            ...keys.event(rawAccount, event.requestId),
            type: 'Event',
            keyHash: event.keyHash,
            provider: event.provider,
            model: event.model,
            costMicros: micros,
            timestamp: now.toISOString(),
            receivedAt: now.toISOString(),
            expiresAt: Math.floor(now.getTime() / 1000) + EVENT_TTL_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      rawErrors += 1;
      if (rawErrors <= 3) console.error(`raw put failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  if (WARMUP > 0) await pool(WARMUP, CONCURRENCY, put);
  const putLatencies: number[] = [];
  const rawProgress = new Progress('raw put', EVENTS);
  cpu = process.cpuUsage();
  started = performance.now();
  await pool(EVENTS, CONCURRENCY, async () => {
    const t0 = performance.now();
    await put();
    putLatencies.push(performance.now() - t0);
    rawProgress.add(1);
  });
  const rawSeconds = (performance.now() - started) / 1000;
  const rawCpu = cpuSeconds(process.cpuUsage(cpu));
  rawProgress.finish();
  const rawRate = EVENTS / rawSeconds;
  const putLat = summarize(putLatencies);
  console.log(heading(`Baseline: ${num(EVENTS)} conditional PutItems, concurrency ${CONCURRENCY}`));
  console.log(`  throughput        ${num(rawRate)} puts/s (${num(rawSeconds, 2)} s)`);
  console.log(`  put latency ms    p50 ${ms(putLat.p50)}  p99 ${ms(putLat.p99)}  max ${ms(putLat.max)}  (mean ${ms(putLat.mean)})`);
  console.log(`  CPU of this process ${num(rawCpu, 2)} s = ${num((rawCpu / rawSeconds) * 100)}% of one core`);
  console.log(`  errors            ${rawErrors}`);

  // --- verdict -------------------------------------------------------------------------------------------------------
  const ratio = ingestRate / rawRate;
  const verdict = ratio >= TARGET_RATIO ? 'PASS' : 'BELOW';
  console.log(heading('Comparison'));
  console.log(
    table([
      ['', 'events/s'],
      [`POST /ingest (batch ${BATCH}, concurrency ${CONCURRENCY})`, num(ingestRate)],
      [`raw conditional PutItem (concurrency ${CONCURRENCY})`, num(rawRate)],
      ['ratio ingest / raw', `${num(ratio * 100, 1)}%`],
      ['target', `≥ ${TARGET_RATIO * 100}%`],
      ['verdict', verdict],
    ]),
  );
  console.log(`  totals ${totalsOk ? 'OK' : 'MISMATCH'}, ingest errors ${errorCount}, raw put errors ${rawErrors}`);
  console.log(`  machine: ${machine()}`);
  return errorCount > 0 || rawErrors > 0 || !totalsOk ? 1 : 0;
}
