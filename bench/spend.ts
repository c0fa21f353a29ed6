/**
 * `npm run bench:spend` — what GET /spend costs on a big account: DynamoDB requests, read units and latency for
 * each grouping (day, model, provider, key) and range (the month to date, and 7, 31, 92 and 366 days ending
 * today), against the local stack running in this process, GET /spend/export, and GET /keys searches and sorts over
 * every key of the account (the key index read in one paged Query, filtered and sorted in memory).
 *
 * The account gets K keys × M models × D days of aggregates, written by bench/spend-lib.ts with BatchWriteItem
 * from ingestion's own item builders (not K·M·D ingests). Every answer is checked against the sums of the events
 * the loader priced (exit code 1 on a mismatch); timings are printed, never asserted.
 *
 * Options (env or argv, `KEYS=100` / `--keys=100` / `--keys 100`):
 *   KEYS 1000   MODELS 10   DAYS 92     the account's shape
 *   RUNS 5                              timed calls per grouping and range (after one warm-up)
 *   KEY_RUNS 20                         timed calls per key search (GET /keys: search, sort, paging; p95 over these)
 *   ROW_DAYS 3                          write the key × day × model items (the export's rows, which GET /spend never
 *                                       reads) for the most recent ROW_DAYS days only: 1,000 × 10 × 3 = 30,000 rows
 *                                       are enough for an export that fits and one that is too large
 *   CONCURRENCY 8                       BatchWriteItem requests in flight while loading
 *   CUSTOMERS 100000                    month × customer items of this month (who spent it: groupBy=customer,
 *                                       GET /customers), written with the one writer's item builder; the keys get a
 *                                       `team` tag (10 values; every 10th key untagged) for groupBy=tag and chargeback
 *
 * Read units: every read the handlers send gets `ReturnConsumedCapacity: TOTAL` from a middleware on this
 * process's `db()` client (the one the handlers use), and the `ConsumedCapacity` DynamoDB Local answers is summed
 * per API call; requests are counted by the same middleware (as bench/ingest.ts and the gateway's
 * COUNT_DB_REQUESTS do).
 */
import { existsSync } from 'node:fs';
import { benchSession, benchTenant, heading, intOption, machine, ms, num, startBenchStack, table } from './lib.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.LOG_REQUESTS ??= '0';

const { db } = await import('#shared/db/client.ts');
const { isoDate } = await import('#shared/time/periods.ts');
const { addDays } = await import('#shared/time/periods.ts');
const { loadAggregates, measureSpend, measureKeySearch, expectedTotals } = await import('./spend-lib.ts');
type Measured = import('./spend-lib.ts').Measured;
type BenchRange = import('./spend-lib.ts').BenchRange;

const SHAPE = { keys: intOption('keys', 1000), models: intOption('models', 10), days: intOption('days', 92) };
const RUNS = intOption('runs', 5);
const KEY_RUNS = intOption('key_runs', 20);
const ROW_DAYS = Math.min(intOption('row_days', 3, 0), SHAPE.days);
const CONCURRENCY = intOption('concurrency', 8);
const RANGES: BenchRange[] = ['mtd', 7, 31, 92, 366];
const CUSTOMERS = intOption('customers', 100_000, 0);

// ---------------------------------------------------------------------------------------------------------------
// Counting requests and read units of the handlers' own client

const READS = new Set(['GetItem', 'BatchGetItem', 'Query']);
let counted: { commands: Map<string, number>; rcu: number; reported: boolean } | undefined;

function installCounter(): void {
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (!counted) return next(args);
      const command = (context.commandName ?? 'unknown').replace(/Command$/, '');
      counted.commands.set(command, (counted.commands.get(command) ?? 0) + 1);
      const input = args.input as { ReturnConsumedCapacity?: string };
      if (READS.has(command)) input.ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const capacity = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      for (const c of Array.isArray(capacity) ? capacity : capacity ? [capacity] : []) {
        if (typeof c.CapacityUnits === 'number') {
          counted.rcu += c.CapacityUnits;
          counted.reported = true;
        }
      }
      return out;
    },
    { step: 'initialize', name: 'benchSpendCounter', override: true },
  );
}

/** status, requests, commands, read units, p50, p95: the columns every table of this bench shares. */
const costCells = (r: { status: number; requests: number | null; commands: string; rcu: number | null; p50: number; p95: number }) => [
  String(r.status),
  String(r.requests ?? '–'),
  r.commands,
  r.rcu === null ? 'n/a' : num(r.rcu, 1),
  ms(r.p50),
  ms(r.p95),
];

async function get(apiUrl: string, token: string, path: string): Promise<Measured> {
  counted = { commands: new Map(), rcu: 0, reported: false };
  const started = performance.now();
  const res = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  const elapsed = performance.now() - started;
  const c = counted;
  counted = undefined;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // CSV
  }
  return {
    status: res.status,
    body,
    ms: elapsed,
    requests: [...c.commands.values()].reduce((a, b) => a + b, 0),
    commands: [...c.commands].map(([name, n]) => `${name}=${n}`).join(','),
    rcu: c.reported ? c.rcu : null,
  };
}

// ---------------------------------------------------------------------------------------------------------------

// DynamoDB Local keeps its SQLite file in the session's folder: on tmpfs (/dev/shm) loading is ~5× faster here.
if (!process.env.TMPDIR && existsSync('/dev/shm')) process.env.TMPDIR = '/dev/shm';
const session = await benchSession('burnrate-bench-spend-');
process.exit(await session.run(run));

async function run(): Promise<number> {
  console.log(heading('GET /spend benchmark'));
  console.log(`  account: ${num(SHAPE.keys)} keys × ${SHAPE.models} models × ${SHAPE.days} days of aggregates${ROW_DAYS ? ` (export rows: the last ${ROW_DAYS} days)` : ''}; ${RUNS} timed runs per cell`);
  console.log(`  machine: ${machine()}`);
  const { stack } = await startBenchStack(session);
  const tenant = await benchTenant(stack, 'spend');
  installCounter();

  const now = new Date();
  const today = isoDate(now);
  const loading = performance.now();
  let lastTenth = 0;
  const loaded = await loadAggregates(tenant.accountId, SHAPE, {
    now,
    rowDays: ROW_DAYS,
    concurrency: CONCURRENCY,
    onProgress: (done, items) => {
      const tenth = Math.floor((done / SHAPE.keys) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        const s = (performance.now() - loading) / 1000;
        process.stderr.write(`  loading: ${done}/${SHAPE.keys} keys, ${num(items)} items, ${num(items / s)} items/s\n`);
      }
    },
  });
  console.log(
    `  loaded ${num(loaded.items)} items in ${num(loaded.ms / 1000, 1)} s (${num(loaded.batchWrites)} BatchWriteItem requests, ${num(loaded.items / (loaded.ms / 1000))} items/s)`,
  );

  const call = (path: string) => get(stack.apiUrl, tenant.token, path);
  const rows = await measureSpend(call, SHAPE, today, RANGES, RUNS);
  console.log(heading('GET /spend: per call'));
  console.log(
    table([
      ['groupBy', 'range', 'status', 'requests', 'commands', 'read units', 'p50 ms', 'p95 ms', 'groups', 'total $', 'exact'],
      ...rows.map((r) => [
        r.groupBy,
        r.range,
        ...costCells(r),
        String(r.groups),
        r.totalCost,
        r.exact ? 'yes' : `NO: ${r.mismatch}`,
      ]),
    ], { left: [1, 4] }),
  );

  // The export: a range that fits (rows = keys × models × days ≤ 25,000) and 31 days (too large at full size).
  const exportRows: string[][] = [];
  const fitDays = Math.max(1, Math.min(ROW_DAYS, Math.floor(25_000 / (SHAPE.keys * SHAPE.models))));
  for (const days of ROW_DAYS ? [...new Set([fitDays, 31])] : []) {
    const from = addDays(today, -(days - 1));
    const path = `/spend/export?from=${from}&to=${today}`;
    await call(path);
    const times: number[] = [];
    let last: Measured | undefined;
    for (let i = 0; i < RUNS; i++) {
      last = await call(path);
      times.push(last.ms);
    }
    times.sort((a, b) => a - b);
    const lines = last!.status === 200 ? String(last!.body).split('\r\n').length - 2 : 0;
    // One row per key × day × model with activity, of the days that have rows.
    const want = expectedTotals(SHAPE, today, addDays(today, -(Math.min(days, ROW_DAYS) - 1)), today).requests;
    exportRows.push([
      `${days} days`,
      String(last!.status),
      last!.status === 200 ? num(lines) : 'too large',
      String(last!.requests),
      last!.commands,
      last!.rcu === null ? 'n/a' : num(last!.rcu, 1),
      ms(times[Math.floor(times.length / 2)]!),
      ms(times[Math.ceil(times.length * 0.95) - 1]!),
      last!.status === 200 ? (lines === want ? 'yes' : `NO: ${lines} ≠ ${want}`) : want > 25_000 ? 'yes (400 expected)' : 'NO',
    ]);
  }
  if (exportRows.length) {
    console.log(heading('GET /spend/export'));
    console.log(table([['range', 'status', 'rows', 'requests', 'commands', 'read units', 'p50 ms', 'p95 ms', 'as expected'], ...exportRows], { left: [4] }));
  }
  // GET /keys at the account's size: key #737 (or the last key of a smaller account) labelled first, then searched.
  const target = Math.min(737, SHAPE.keys - 1);
  const label = `Batch worker ${target} (eu-west)`;
  const labelled = await fetch(`${stack.apiUrl}/keys/${loaded.keyHashes[target]}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label }),
  });
  if (labelled.status !== 200) throw new Error(`labelling key #${target}: ${labelled.status}`);
  const keyRows = await measureKeySearch(call, loaded.keyHashes, KEY_RUNS, target, label);
  console.log(heading(`GET /keys: search, sort, paging over ${num(SHAPE.keys)} keys (${KEY_RUNS} timed runs each)`));
  console.log(
    table([
      ['search', 'query', 'status', 'requests', 'commands', 'read units', 'p50 ms', 'p95 ms', 'items', 'total', 'as expected'],
      ...keyRows.map((r) => [
        r.name,
        r.path,
        ...costCells(r),
        String(r.items),
        r.total === null ? '–' : num(r.total),
        r.exact ? 'yes' : `NO: ${r.mismatch}`,
      ]),
    ], { left: [0, 1, 4] }),
  );

  // What the API adds to the read: the same Query of the key index (every page), from this process, timed alone.
  const { listProviderKeys } = await import('#shared/db/discovered-keys.ts');
  const raw: number[] = [];
  await listProviderKeys(tenant.accountId);
  for (let i = 0; i < KEY_RUNS; i++) {
    const started = performance.now();
    const items = await listProviderKeys(tenant.accountId);
    raw.push(performance.now() - started);
    if (items.length !== SHAPE.keys) throw new Error(`the key index holds ${items.length} keys, not ${SHAPE.keys}`);
  }
  raw.sort((a, b) => a - b);
  console.log(
    `  the key index alone (the same Query, every page, straight to DynamoDB Local): p50 ${ms(raw[Math.floor(raw.length / 2)]!)} ms, ` +
      `p95 ${ms(raw[Math.ceil(raw.length * 0.95) - 1]!)} ms`,
  );

  const whoBad = CUSTOMERS > 0 ? await whoSpentIt(tenant.accountId, loaded.keyHashes, today, call) : 0;

  const bad = whoBad + rows.filter((r) => !r.exact).length + exportRows.filter((r) => r.at(-1)!.startsWith('NO')).length + keyRows.filter((r) => !r.exact).length;
  console.log(bad ? `\n  ${bad} answers did not match the loaded data.` : '\n  every answer matched the sums of the loaded events.');
  return bad ? 1 : 0;
}

/**
 * Who spent it: the keys tagged (`team`: 10 values, every 10th key untagged), CUSTOMERS month × customer items of this
 * month (the one writer's own item builder), then groupBy=tag (with and without shared=allocate), groupBy=customer and
 * GET /customers timed. Checks: the tag groups and the customer groups sum to the total; allocation is exact.
 */
async function whoSpentIt(accountId: string, keyHashes: string[], today: string, call: (path: string) => Promise<Measured>): Promise<number> {
  const { UpdateCommand, BatchWriteCommand } = await import('@aws-sdk/lib-dynamodb');
  const { keys } = await import('#shared/db/keys.ts');
  const { tableName } = await import('#shared/db/client.ts');
  const { spendByNameItems } = await import('#shared/db/usage-writes.ts');
  const { applyUpdate } = await import('./spend-lib.ts');
  const started = performance.now();
  let next = 0;
  const tagWorker = async () => {
    while (next < keyHashes.length) {
      const i = next++;
      const tags = i % 10 === 9 ? {} : { team: `team-${i % 10}` };
      await db().send(new UpdateCommand({ TableName: tableName(), Key: keys.providerKey(accountId, keyHashes[i]!), UpdateExpression: 'SET tags = :t, effectiveTags = :t', ExpressionAttributeValues: { ':t': tags } }));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, tagWorker));
  const month = today.slice(0, 7);
  const at = `${today}T00:00:00.000Z`;
  const customers = Array.from({ length: CUSTOMERS }, (_, i) => {
    const cost = BigInt(1 + ((i * 7919) % 2_000_000));
    return { month, name: `cus_${String(i).padStart(6, '0')}`, sums: { costMicros: cost, requests: 3n, inputTokens: 300n, cachedInputTokens: 0n, outputTokens: 60n, unpricedRequests: 0n }, firstAt: at, lastAt: at };
  });
  const built = spendByNameItems(accountId, customers, []);
  const items = built.actions.map((a) => applyUpdate({ ...(a.Update!.Key as Record<string, unknown>) }, a.Update!));
  items.push({ ...keys.customerCount(accountId, month), month, customers: CUSTOMERS });
  let b = 0;
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  const putWorker = async () => {
    while (b < batches.length) {
      let pending = batches[b++]!.map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; pending.length > 0 && attempt < 10; attempt++) {
        const res = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
        pending = (res.UnprocessedItems?.[tableName()] as typeof pending | undefined) ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, putWorker));
  console.log(heading('Who spent it: tags, chargeback, customers'));
  console.log(`  tagged ${num(keyHashes.length)} keys and wrote ${num(CUSTOMERS)} customers of ${month} in ${num((performance.now() - started) / 1000, 1)} s`);
  const first = `${month}-01`;
  const cases: [string, string][] = [
    ['groupBy=tag, month to date', `/spend?groupBy=tag&tag=team&from=${first}&to=${today}`],
    ['groupBy=tag, 92 days', `/spend?groupBy=tag&tag=team&from=${addDays(today, -91)}&to=${today}`],
    ['groupBy=tag&shared=allocate, 92 days', `/spend?groupBy=tag&tag=team&shared=allocate&from=${addDays(today, -91)}&to=${today}`],
    ['tagFilter=team:team-3, by day, 31 days', `/spend?tagFilter=team:team-3&from=${addDays(today, -30)}&to=${today}`],
    [`groupBy=customer (${num(CUSTOMERS)} customers)`, `/spend?groupBy=customer&from=${first}&to=${today}`],
    ['GET /customers, first page by cost', `/customers?from=${first}&to=${today}`],
  ];
  const out: string[][] = [];
  let bad = 0;
  const usd = (v: unknown) => BigInt(Math.round(Number(v) * 1e6));
  for (const [name, path] of cases) {
    await call(path);
    const times: number[] = [];
    let last: Measured | undefined;
    for (let i = 0; i < RUNS; i++) {
      last = await call(path);
      times.push(last.ms);
    }
    times.sort((x, y) => x - y);
    let check = 'yes';
    if (last!.status !== 200) check = `NO: ${last!.status}`;
    else if (path.startsWith('/spend') && !path.includes('tagFilter')) {
      const body = last!.body as { total: { costUsd: number }; groups: { costUsd: number; directUsd?: number; sharedUsd?: number }[] };
      const sum = body.groups.reduce((s, g) => s + usd(g.costUsd), 0n);
      if (sum !== usd(body.total.costUsd)) check = `NO: groups ${sum} ≠ total ${usd(body.total.costUsd)}`;
      for (const g of body.groups) if (g.directUsd !== undefined && usd(g.directUsd) + usd(g.sharedUsd) !== usd(g.costUsd)) check = 'NO: direct + shared ≠ cost';
    }
    if (check !== 'yes') bad += 1;
    out.push([name, ...costCells({ ...last!, p50: times[Math.floor(times.length / 2)]!, p95: times[Math.ceil(times.length * 0.95) - 1]! }), check]);
  }
  console.log(table([['call', 'status', 'requests', 'commands', 'read units', 'p50 ms', 'p95 ms', 'exact'], ...out], { left: [0, 3] }));
  return bad;
}
