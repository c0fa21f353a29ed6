/**
 * `npm run bench:bounds` — what a provider that swells or loops costs Burnrate (shared/connections/pages.ts):
 *
 *   1. A 150 MB `/keys` body (the OpenRouter stand-in's `misbehave {hugeBodyBytes}`, chunked, no content-length):
 *      `POST /connections` with its key, then a sync of a connection made while it behaved. Printed: the answer and
 *      the connection's statusDetail, the bytes the stand-in got to send before the read was refused, and this
 *      process's memory (RSS, sampled every 10 ms) above its start: the stack's handlers and the stand-in run in this
 *      process. The bound: 100 MB above the start (the body is refused past 32 MB while it streams).
 *   2. A `/keys` that ignores `offset` (`misbehave {ignoreCursor}`), 1,000 keys: the pages read before the repeat is
 *      refused, the wall time, the memory.
 *
 * Figures, not a timed test: the tests (test/integration/provider-bounds.test.ts) check the answers themselves.
 * Options (env): BYTES 157286400 (150 MiB).
 */
import { benchSession, benchTenant, call, heading, machine, ms, num, startBenchStack, table } from './lib.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.LOG_REQUESTS ??= '0';
process.env.CONNECTOR_SYNC_INTERVAL_MS = '0';

const { setLocalSyncSink } = await import('#shared/connections/queue.ts');
const { createConnection } = await import('#shared/connections/service.ts');
const { syncConnection } = await import('#shared/sync/all.ts');
const { getConnection } = await import('#shared/db/connections.ts');

const BYTES = Number(process.env.BYTES ?? 150 * 1024 * 1024);
const MB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;

const session = await benchSession('burnrate-bench-bounds-');
process.exit(await session.run(run));

/** Peak RSS while `work` runs (sampled every 10 ms), with the RSS just before it (after a collection). */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; startMb: number; peakMb: number; endMb: number; ms: number }> {
  gc?.();
  await new Promise((r) => setTimeout(r, 50));
  const start = process.memoryUsage().rss;
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  const t0 = performance.now();
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, startMb: start / MB, peakMb: peak / MB, endMb: process.memoryUsage().rss / MB, ms: performance.now() - t0 };
  } finally {
    clearInterval(timer);
  }
}

async function run(): Promise<number> {
  console.log(heading('Provider reads that swell or loop'));
  console.log(`  machine: ${machine()}${gc ? '' : ' (no --expose-gc: start figures include garbage)'}`);
  const { stack } = await startBenchStack(session);
  setLocalSyncSink(undefined);
  const standIn = stack.openrouter.url;
  const newOrg = async (body: unknown) => {
    const res = await fetch(`${standIn}/_burnrate/orgs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST /_burnrate/orgs: ${res.status} ${await res.text()}`);
    const org = (await res.json()) as { id: string; adminKey: string };
    const control = async (path: string, method: string, json?: unknown) => {
      const r = await fetch(`${standIn}/_burnrate/orgs/${org.id}${path}`, { method, headers: json === undefined ? {} : { 'content-type': 'application/json' }, body: json === undefined ? undefined : JSON.stringify(json) });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return r.json() as Promise<{ byPath?: Record<string, number> }>;
    };
    return { ...org, control };
  };
  const rows: string[][] = [['case', 'answer / status', 'time', 'RSS start', 'peak', 'peak − start', 'bound']];
  let failed = false;
  const row = (name: string, answer: string, m: { ms: number; startMb: number; peakMb: number }) => {
    const over = m.peakMb - m.startMb;
    if (over >= 100) failed = true;
    rows.push([name, answer, `${ms(m.ms)} ms`, `${num(m.startMb)} MB`, `${num(m.peakMb)} MB`, `${num(over, 1)} MB`, over < 100 ? '< 100 MB ✓' : '≥ 100 MB ✗']);
  };

  // 1. A 150 MB body.
  const tenant = await benchTenant(stack, 'bounds');
  const swollen = await newOrg({});
  const connection = await createConnection(tenant.accountId, { provider: 'openrouter', adminKey: swollen.adminKey });
  await swollen.control('/misbehave', 'POST', { hugeBodyBytes: BYTES, pathPrefix: '/api/v1/keys' });
  const other = await benchTenant(stack, 'bounds-other');
  const created = await measured(() =>
    call<{ detail?: string }>(`${stack.apiUrl}/connections`, { method: 'POST', headers: { authorization: `Bearer ${other.token}` }, json: { provider: 'openrouter', adminKey: swollen.adminKey } }),
  );
  row(`POST /connections, ${num(BYTES / MB)} MB /keys`, `${created.value.status}: ${created.value.body.detail?.slice(0, 60)}…`, created);
  const synced = await measured(() => syncConnection(tenant.accountId, connection.id, { budgetMs: 60_000 }));
  const after = await getConnection(tenant.accountId, connection.id, true);
  row(`sync, ${num(BYTES / MB)} MB /keys`, `${synced.value.status}: ${after?.statusDetail?.slice(0, 60)}…`, synced);

  // 2. A /keys that ignores offset, 1,000 keys.
  const looping = await newOrg({ big: { keys: 1000, models: 1, days: 1 } });
  await looping.control('/misbehave', 'POST', { ignoreCursor: true, pathPrefix: '/api/v1/keys' });
  await looping.control('/requests', 'DELETE');
  const third = await benchTenant(stack, 'bounds-loop');
  const loop = await measured(() =>
    call<{ detail?: string }>(`${stack.apiUrl}/connections`, { method: 'POST', headers: { authorization: `Bearer ${third.token}` }, json: { provider: 'openrouter', adminKey: looping.adminKey } }),
  );
  const pages = (await looping.control('/requests', 'GET')).byPath?.['/api/v1/keys'] ?? 0;
  row(`POST /connections, /keys ignores offset (${num(pages)} reads)`, `${loop.value.status}: ${loop.value.body.detail?.slice(0, 60)}…`, loop);

  console.log(table(rows, { left: [0, 1] }));
  console.log(`\n  Full answers:\n    ${created.value.body.detail}\n    ${after?.statusDetail}\n    ${loop.value.body.detail}`);
  return failed ? 1 : 0;
}
