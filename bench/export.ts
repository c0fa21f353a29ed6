/**
 * `npm run bench:export` — what an asynchronous export (POST /spend/exports → the worker → the download) takes on an
 * account whose range is past the synchronous export's 25,000 rows: the time from the start to `ready`, rows a
 * second, the gzip file's size against the CSV's, and the download, against the local stack running in this process
 * (its export worker in-process, files under the data folder).
 *
 * The account gets K keys × M models × D days of aggregates with every day's export rows, written by
 * bench/spend-lib.ts with BatchWriteItem from ingestion's own item builders. The decompressed download is checked
 * (its row count and its header; exit code 1 on a mismatch); timings are printed, never asserted.
 *
 * Then the FOCUS export of the same range (one row per day × key × price line): rows, bytes and seconds.
 *
 * Options (env or argv, `KEYS=100` / `--keys=100`): KEYS 100, MODELS 10, DAYS 31 (31,000 rows), RUNS 3, FOCUS_RUNS 1,
 * CONCURRENCY 8. The FOCUS figure of the docs: `KEYS=1000 MODELS=1 DAYS=90 RUNS=1`.
 */
import { existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { benchSession, benchTenant, heading, intOption, machine, ms, num, startBenchStack, table } from './lib.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.LOG_REQUESTS ??= '0';

const { isoDate, addDays } = await import('#shared/time/periods.ts');
const { loadAggregates, expectedTotals } = await import('./spend-lib.ts');

const SHAPE = { keys: intOption('keys', 100), models: intOption('models', 10), days: intOption('days', 31) };
const RUNS = intOption('runs', 3);
const FOCUS_RUNS = intOption('focus_runs', 1, 0);
const CONCURRENCY = intOption('concurrency', 8);

// DynamoDB Local keeps its SQLite file in the session's folder: on tmpfs (/dev/shm) loading is ~5× faster here.
if (!process.env.TMPDIR && existsSync('/dev/shm')) process.env.TMPDIR = '/dev/shm';
const session = await benchSession('burnrate-bench-export-');
process.exit(await session.run(run));

async function run(): Promise<number> {
  console.log(heading('Asynchronous export benchmark'));
  console.log(`  account: ${num(SHAPE.keys)} keys × ${SHAPE.models} models × ${SHAPE.days} days, every day's export rows; ${RUNS} runs`);
  console.log(`  machine: ${machine()}`);
  const { stack } = await startBenchStack(session);
  const tenant = await benchTenant(stack, 'export');
  const now = new Date();
  const today = isoDate(now);
  const loaded = await loadAggregates(tenant.accountId, SHAPE, { now, rowDays: SHAPE.days, concurrency: CONCURRENCY });
  console.log(`  loaded ${num(loaded.items)} items in ${num(loaded.ms / 1000, 1)} s`);

  const from = addDays(today, -(SHAPE.days - 1));
  const want = expectedTotals(SHAPE, today, from, today).requests; // one request per key × day × model: one row each
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${stack.apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' } });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const sync = await fetch(`${stack.apiUrl}/spend/export?from=${from}&to=${today}`, { headers: { authorization: `Bearer ${tenant.token}` } });
  console.log(`  GET /spend/export of the range: ${sync.status}${sync.status === 400 ? ' (past 25,000 rows: the asynchronous export is the way)' : ''}`);
  // For comparison, the synchronous export of the most days that fit in 25,000 rows (the same rows, read the same way).
  const fitDays = Math.max(1, Math.min(SHAPE.days, Math.floor(25_000 / (SHAPE.keys * SHAPE.models))));
  const syncStarted = performance.now();
  const fit = await fetch(`${stack.apiUrl}/spend/export?from=${addDays(today, -(fitDays - 1))}&to=${today}`, { headers: { authorization: `Bearer ${tenant.token}` } });
  const fitRows = (await fit.text()).split('\r\n').length - 2;
  const syncMs = performance.now() - syncStarted;
  console.log(`  GET /spend/export of ${fitDays} days: ${fit.status}, ${num(fitRows)} rows in ${ms(syncMs)} ms (${num(fitRows / (syncMs / 1000))} rows/s)`);

  const results: string[][] = [];
  let bad = 0;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const created = await call('/spend/exports', { method: 'POST', body: JSON.stringify({ from, to: today }) });
    if (created.status !== 202) throw new Error(`POST /spend/exports: ${created.status} ${JSON.stringify(created.body)}`);
    const accepted = performance.now() - started;
    let status = created.body;
    let polls = 0;
    while (status.status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await call(`/spend/exports/${created.body.id}`)).body;
      polls += 1;
    }
    const ready = performance.now() - started;
    const downloadStarted = performance.now();
    const download = Buffer.from(await (await fetch(status.url)).arrayBuffer());
    const downloadMs = performance.now() - downloadStarted;
    const csv = gunzipSync(download).toString('utf8');
    const rows = csv.split('\r\n').length - 2;
    const ok = status.status === 'ready' && rows === want && status.rows === want && download.length === status.bytes && csv.startsWith('date,key_hash,');
    if (!ok) bad += 1;
    results.push([
      String(i + 1),
      status.status,
      num(status.rows),
      ms(accepted),
      ms(ready),
      num(status.rows / (ready / 1000)),
      `${num(Buffer.byteLength(csv) / 1e6, 2)} MB`,
      `${num(status.bytes / 1e6, 2)} MB`,
      `${num(Buffer.byteLength(csv) / status.bytes, 1)}×`,
      ms(downloadMs),
      String(polls),
      ok ? 'yes' : `NO: ${rows} rows, want ${want}`,
    ]);
  }
  console.log(heading('POST /spend/exports → ready → download'));
  console.log(table([['run', 'status', 'rows', '202 in', 'ready in', 'rows/s', 'CSV', 'gzip', 'ratio', 'download', 'polls', 'as expected'], ...results], { left: [1, 11] }));

  // The FOCUS export of the same range: one row per day × key × price line (each bench row has input, cached input
  // and output lines), so more rows than the CSV's.
  const focus: string[][] = [];
  for (let i = 0; i < FOCUS_RUNS; i++) {
    const started = performance.now();
    const created = await call('/spend/exports', { method: 'POST', body: JSON.stringify({ from, to: today, format: 'focus' }) });
    if (created.status !== 202) throw new Error(`POST /spend/exports (focus): ${created.status} ${JSON.stringify(created.body)}`);
    let status = created.body;
    while (status.status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await call(`/spend/exports/${created.body.id}`)).body;
    }
    const ready = performance.now() - started;
    const download = Buffer.from(await (await fetch(status.url)).arrayBuffer());
    const text = gunzipSync(download).toString('utf8');
    const rows = text.split('\r\n').length - 2;
    const ok = status.status === 'ready' && rows === status.rows && rows >= want && download.length === status.bytes && text.startsWith('BilledCost,');
    if (!ok) bad += 1;
    focus.push([
      String(i + 1),
      status.status,
      num(want),
      num(status.rows),
      num(rows / want, 2),
      `${num(Buffer.byteLength(text) / 1e6, 2)} MB`,
      `${num(status.bytes / 1e6, 2)} MB`,
      num(ready / 1000, 1),
      num(status.rows / (ready / 1000)),
      ok ? 'yes' : `NO: ${rows} rows (status ${status.rows})`,
    ]);
  }
  console.log(heading('FOCUS: POST /spend/exports {format: "focus"} → ready → download'));
  console.log(table([['run', 'status', 'index rows', 'FOCUS rows', 'per index row', 'CSV', 'gzip', 'seconds', 'rows/s', 'as expected'], ...focus], { left: [1, 9] }));
  return bad ? 1 : 0;
}
