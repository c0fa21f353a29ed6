/**
 * `npm run bench:connectors` — what a provider connection's sync costs on a big organization (issue 20, figures):
 * an organization of KEYS keys × MODELS models with usage on each of DAYS days, on the stack's own stand-in of the
 * provider's admin API (local/openai-admin.ts, local/anthropic-admin.ts: `POST /_burnrate/orgs {big}`).
 *
 *   1. The first sync: the backfill from the first day of the previous UTC month to today (62 days when both
 *      months have 31), run as the worker runs it: `syncConnection` again and again (each run stops starting
 *      slices after its 240 s budget and leaves a cursor) until it is done. Wall time, runs, provider requests,
 *      DynamoDB requests and write units, the settlement's corrections (settled lines) among them. Then every figure
 *      is checked against the stand-in's truth: requests and tokens of every cell; today's cost priced by the table;
 *      every settled day shown equal to its bill (the reconciliation; exit 1 on a mismatch).
 *   2. A re-sync with nothing new (the last 3 days and today read again): goal 0 writes of spend; what it writes
 *      is bookkeeping (the lease, the connection's last sync).
 *   3. A re-sync after GROWN (default 1%) of the cells it reads grew: goal writes ∝ changed cells.
 *
 * The stack runs in this process with the connections' queue and schedule off, so only this bench syncs; the
 * clock (the stand-in's and the sync's) is frozen at NOW, by default the last day of the most recent pair of
 * 31-day months (so the backfill is 62 days). A middleware on the handlers' own DynamoDB client counts every
 * request and the items each write writes; write units are what DynamoDB bills for those items at ≤ 1 KB each:
 * 2 units per item in a transaction, 1 per other write; DynamoDB Local under-reports a transaction's
 * `ConsumedCapacity`); read units are what DynamoDB Local reports (`ReturnConsumedCapacity: TOTAL`).
 *
 * OpenRouter (`PROVIDER=openrouter`, local/openrouter-admin.ts): 200 keys × 3 models with usage on each of the last
 * 31 days (30 completed days from its activity, today from the keys' `usage_daily`), at today's date.
 *
 * Options (env or argv): KEYS 1000  MODELS 5  DAYS 62  PROVIDER openai|anthropic|openrouter  GROWN 0.01  REQUESTS 20 (a
 * series' typical requests a day: 1,000 × 5 × 62 × 20 stays under SCALE's 10,000,000 tracked requests)  NOW (ISO)
 */
import { existsSync } from 'node:fs';
import { benchTenant, heading, intOption, machine, ms, num, startBenchStack, table, benchSession } from './lib.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.LOG_REQUESTS ??= '0';
// The schedule off (the stack's dispatcher timer); the sync queue is detached below: only this bench syncs.
process.env.CONNECTOR_SYNC_INTERVAL_MS = '0';

const { db } = await import('#shared/db/client.ts');
const { addDays, isoDate } = await import('#shared/time/periods.ts');
const { priceUsage, tierOf, usdToMicros } = await import('#shared/pricing/pricing.ts');
const { createConnection, importStart } = await import('#shared/connections/service.ts');
const { setLocalSyncSink } = await import('#shared/connections/queue.ts');
const { syncConnection, REREAD_DAYS } = await import('#shared/sync/all.ts');

type Provider = 'openai' | 'anthropic' | 'openrouter';
const PROVIDER = (process.env.PROVIDER ?? 'openai') as Provider;
if (PROVIDER !== 'openai' && PROVIDER !== 'anthropic' && PROVIDER !== 'openrouter') throw new Error('PROVIDER must be openai, anthropic or openrouter');
// OpenRouter: 200 keys × 30 days (its activity holds the last 30 completed days).
const ROUTER = PROVIDER === 'openrouter';
const SHAPE = { keys: intOption('keys', ROUTER ? 200 : 1000), models: intOption('models', ROUTER ? 3 : 5), days: intOption('days', ROUTER ? 31 : 62), requests: intOption('requests', 20) };
const GROWN = Number(process.env.GROWN ?? 0.01);

/** The last day (18:00 UTC) of the most recent month that, like the month before it, has 31 days. */
function defaultNow(): Date {
  const days = (y: number, m: number) => new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const t = new Date();
  for (let y = t.getUTCFullYear(), m = t.getUTCMonth() - 1; ; m--) {
    if (m < 0) {
      m += 12;
      y -= 1;
    }
    if (days(y, m) === 31 && days(y, m - 1 < 0 ? 11 : m - 1) === 31) return new Date(Date.UTC(y, m, 31, 18));
  }
}
// OpenRouter's window is the last 30 days before today, whatever the month: today at 18:00 UTC (or now, if later).
const NOW = process.env.NOW ? new Date(process.env.NOW) : ROUTER ? new Date(Math.max(Date.now(), Date.parse(`${new Date().toISOString().slice(0, 10)}T18:00:00Z`))) : defaultNow();

// ---------------------------------------------------------------------------------------------------------------
// Counting DynamoDB requests, items written and write units on the handlers' own client

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
interface Counts {
  commands: Map<string, number>;
  /** Items written by transactions (the chunk writer: snapshot cells, aggregates, counters). */
  transactItems: number;
  /** Items written one by one (lease, connection fields, billed days, key attributes). */
  singleWrites: number;
  rcu: number;
}
/** Write units as DynamoDB bills them for items ≤ 1 KB (all of these are): 2 per transactional item, 1 per other write. */
const wcu = (c: Counts) => 2 * c.transactItems + c.singleWrites;
let counts: Counts = fresh();
function fresh(): Counts {
  return { commands: new Map(), transactItems: 0, singleWrites: 0, rcu: 0 };
}

/** Installed once the stack is up (the client reads the stack's endpoint when first made). */
const installCounter = () => db().middlewareStack.add(
  (next, context) => async (args) => {
    const command = (context.commandName ?? 'unknown').replace(/Command$/, '');
    counts.commands.set(command, (counts.commands.get(command) ?? 0) + 1);
    const input = args.input as { ReturnConsumedCapacity?: string; TransactItems?: unknown[] };
    input.ReturnConsumedCapacity = 'TOTAL';
    if (command === 'TransactWriteItems') counts.transactItems += input.TransactItems?.length ?? 0;
    else if (WRITES.has(command)) counts.singleWrites += 1;
    const out = await next(args);
    const capacity = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
    for (const c of Array.isArray(capacity) ? capacity : capacity ? [capacity] : []) {
      if (typeof c.CapacityUnits === 'number') {
        // Writes are counted from the items (DynamoDB Local under-reports a transaction's units).
        if (!WRITES.has(command)) counts.rcu += c.CapacityUnits;
      }
    }
    return out;
  },
  { step: 'initialize', name: 'benchConnectorsCounter', override: true },
);

// ---------------------------------------------------------------------------------------------------------------

if (!process.env.TMPDIR && existsSync('/dev/shm')) process.env.TMPDIR = '/dev/shm';
const session = await benchSession('burnrate-bench-connectors-');
process.exit(await session.run(run));

interface Phase {
  name: string;
  runs: number;
  ms: number;
  providerRequests: number;
  cellsChanged: number;
  /** Settlement corrections written (one per changed (day, key, line)). */
  settleCellsChanged: number;
  transactions: number;
  counts: Counts;
}

async function run(): Promise<number> {
  console.log(heading('Provider connection sync benchmark'));
  console.log(`  organization: ${PROVIDER}, ${num(SHAPE.keys)} keys × ${SHAPE.models} models × ${SHAPE.days} days (${num(SHAPE.keys * SHAPE.models * SHAPE.days)} cells)`);
  console.log(`  clock frozen at ${NOW.toISOString()}; the first sync reads ${importStart(NOW, PROVIDER)} → ${isoDate(NOW)}`);
  console.log(`  machine: ${machine()}`);
  const { stack } = await startBenchStack(session);
  installCounter();
  setLocalSyncSink(undefined);
  const tenant = await benchTenant(stack, 'connectors');
  const standIn = PROVIDER === 'openai' ? stack.openaiAdmin.url : ROUTER ? stack.openrouter.url : stack.anthropicAdmin.url;

  const made = await fetch(`${standIn}/_burnrate/orgs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ big: SHAPE, now: NOW.toISOString(), late: null }),
  });
  if (made.status !== 201) throw new Error(`POST /_burnrate/orgs: ${made.status} ${await made.text()}`);
  const org = (await made.json()) as { id: string; adminKey: string };
  const control = async <T>(path: string, method = 'GET', body?: unknown): Promise<T> => {
    const res = await fetch(`${standIn}/_burnrate/orgs/${org.id}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };

  const connection = await createConnection(tenant.accountId, { provider: PROVIDER, adminKey: org.adminKey }, NOW);
  const phases: Phase[] = [];
  /** Syncs as the worker does (again while a run ends `partial`), counting what it costs. */
  const phase = async (name: string, now: Date): Promise<Phase> => {
    await control('/requests', 'DELETE');
    counts = fresh();
    const started = performance.now();
    let runs = 0;
    let cellsChanged = 0;
    let settleCellsChanged = 0;
    let transactions = 0;
    for (;;) {
      runs += 1;
      const result = await syncConnection(tenant.accountId, connection.id, { now });
      cellsChanged += result.cellsChanged;
      settleCellsChanged += result.settleCellsChanged;
      transactions += result.transactions;
      if (result.status === 'partial') {
        process.stderr.write(`  ${name}: run ${runs} partial (${num(cellsChanged)} cells so far, ${Math.round((performance.now() - started) / 1000)} s)\n`);
        continue;
      }
      if (result.status !== 'done') throw new Error(`${name}: the sync ended ${result.status}`);
      if (result.limitsReached.length > 0) throw new Error(`${name}: plan limits reached (${result.limitsReached.join(', ')}): lower REQUESTS`);
      break;
    }
    const elapsed = performance.now() - started;
    const requests = await control<{ total: number }>('/requests');
    const p: Phase = { name, runs, ms: elapsed, providerRequests: requests.total, cellsChanged, settleCellsChanged, transactions, counts };
    phases.push(p);
    return p;
  };

  // 1. The first sync.
  const first = await phase('first sync (backfill)', NOW);
  const from = importStart(NOW, PROVIDER);
  const today = isoDate(NOW);
  const mismatches = await check(tenant.token, stack.apiUrl, control, from, today, connection.id);

  // 2. Nothing new: the same frozen clock, 15 minutes later for the sync.
  const later = new Date(NOW.getTime() + 15 * 60_000);
  const idle = await phase('re-sync, nothing new', later);

  // 3. GROWN of the cells a re-sync reads (the last REREAD_DAYS days and today) grew.
  const state = await control<{ keys: { id: string }[] }>('/state');
  const models = await modelsOf(control, today);
  const window = Array.from({ length: REREAD_DAYS + 1 }, (_, i) => addDays(today, -i));
  const cells = window.flatMap((date) => state.keys.flatMap((k) => models.map((model) => ({ date, apiKeyId: k.id, model }))));
  const grow = Math.max(1, Math.round(cells.length * GROWN));
  const picked = pick(cells, grow);
  const add = PROVIDER === 'openai' ? { uncached: 1000, output: 100, requests: 1 } : ROUTER ? { cost: 1000, requests: 1, prompt: 1000, completion: 100 } : { uncached: 1000, output: 100 };
  // OpenRouter: today's figure is one cell per key (usage_daily has no model breakdown).
  const changed = new Set(picked.map((c) => (ROUTER && c.date === today ? `${c.date}|${c.apiKeyId}` : `${c.date}|${c.apiKeyId}|${c.model}`))).size;
  for (let i = 0; i < picked.length; i += 20) {
    await Promise.all(picked.slice(i, i + 20).map((c) => control('/usage', 'POST', { apiKeyId: c.apiKeyId, model: c.model, date: c.date, add })));
  }
  const grown = await phase(`re-sync, ${num(grow)} of ${num(cells.length)} cells grew`, new Date(later.getTime() + 15 * 60_000));
  const mismatchesAfter = await check(tenant.token, stack.apiUrl, control, from, today, connection.id);

  console.log(heading('Results'));
  console.log(
    table([
      ['phase', 'runs', 'wall (s)', 'provider requests', 'cells changed', 'settled lines changed', 'transactions', 'items written in transactions', 'other writes', 'write units', 'read units', 'DynamoDB requests'],
      ...phases.map((p) => [
        p.name,
        String(p.runs),
        num(p.ms / 1000, 1),
        num(p.providerRequests),
        num(p.cellsChanged),
        num(p.settleCellsChanged),
        num(p.transactions),
        num(p.counts.transactItems),
        num(p.counts.singleWrites),
        num(wcu(p.counts)),
        num(p.counts.rcu, 1),
        [...p.counts.commands].map(([c, n]) => `${c}=${n}`).join(' '),
      ]),
    ]),
  );
  console.log(
    `  first sync: ${num(first.cellsChanged / (first.ms / 1000))} cells/s; ${num(wcu(first.counts) / Math.max(1, first.cellsChanged + first.settleCellsChanged), 2)} write units per cell or settled line (${num(first.cellsChanged)} cells, ${num(first.settleCellsChanged)} settled lines)`,
  );
  console.log(`  nothing new: ${num(idle.counts.transactItems)} items written in transactions (goal 0); ${num(idle.counts.singleWrites)} other writes (lease, last sync)`);
  console.log(`  grown: ${num(wcu(grown.counts) / Math.max(1, grown.cellsChanged), 2)} write units per changed cell (first sync: ${num(wcu(first.counts) / Math.max(1, first.cellsChanged), 2)})`);
  const all = [...mismatches, ...mismatchesAfter];
  console.log(all.length === 0 ? '  every figure equals the stand-in\'s truth (requests, tokens; today priced by the table; every settled day its bill)' : `  MISMATCHES:\n    ${all.join('\n    ')}`);
  return all.length === 0 && idle.counts.transactItems === 0 && idle.settleCellsChanged === 0 && grown.cellsChanged === changed ? 0 : 1;
}

/** Picks `n` of `list` (a fixed stride: reproducible, spread over days, keys and models). */
function pick<T>(list: readonly T[], n: number): T[] {
  const step = list.length / n;
  return Array.from({ length: n }, (_, i) => list[Math.floor(i * step + step / 2)]!);
}

async function modelsOf(control: <T>(path: string) => Promise<T>, today: string): Promise<string[]> {
  const t = await control<{ byModel: Record<string, unknown> }>(`/truth?from=${today}&to=${today}&detail=totals`);
  return Object.keys(t.byModel);
}

/** GET /spend over [from, to] against the stand-in's truth: requests, tokens, and the cost of each cell priced. */
async function check(token: string, apiUrl: string, control: <T>(path: string) => Promise<T>, from: string, to: string, connectionId: string): Promise<string[]> {
  const t = await control<{ cells: Record<string, any>[] }>(`/truth?from=${from}&to=${to}`);
  const want = { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costMicros: 0n };
  // One provider row per (day, key, model, tier), priced as the provider reports it.
  for (const c of t.cells) {
    if (ROUTER) {
      // OpenRouter's own dollars; today (usage_daily) without requests or tokens.
      want.costMicros += BigInt(c.cost);
      if (c.date === to) continue;
      want.requests += c.requests;
      want.inputTokens += c.prompt;
      want.outputTokens += c.completion;
      continue;
    }
    const counts =
      PROVIDER === 'anthropic'
        ? { requests: 0, inputTokens: c.uncached + c.cacheRead + c.cache5m + c.cache1h, cachedInputTokens: c.cacheRead, cacheWriteInputTokens: c.cache5m, cacheWrite1hInputTokens: c.cache1h, outputTokens: c.output, webSearchRequests: c.webSearch ?? 0 }
        : { requests: c.requests, inputTokens: c.uncached + c.cached + c.cacheWrite, cachedInputTokens: c.cached, cacheWriteInputTokens: c.cacheWrite, cacheWrite1hInputTokens: 0, outputTokens: c.output };
    if ([counts.requests, counts.inputTokens, counts.outputTokens].every((v) => v === 0)) continue;
    want.requests += counts.requests;
    want.inputTokens += counts.inputTokens;
    want.cachedInputTokens += counts.cachedInputTokens;
    want.outputTokens += counts.outputTokens;
    // Cost as the table prices it: what today (not billed yet) shows. A row sums a day of calls: its context window
    // (Anthropic's `200k-1M`: calls of more than 200K input each), not its summed input, says long context.
    const longContext = c.contextWindow === '200k-1M';
    if (c.date === to) want.costMicros += BigInt(priceUsage({ provider: PROVIDER, model: String(c.model).toLowerCase(), ...counts, tier: c.kind === 'embeddings' ? 'standard' : tierOf({ batch: c.tier === 'batch', service_tier: c.tier }), longContext }).costMicros);
  }
  const res = await fetch(`${apiUrl}/spend?from=${from}&to=${to}&groupBy=day`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) return [`GET /spend: ${res.status} ${await res.text()}`];
  const body = (await res.json()) as { total: { costUsd: number; requests: number; inputTokens: number; cachedInputTokens: number; outputTokens: number } };
  const got = { ...body.total };
  const out: string[] = [];
  for (const f of ['requests', 'inputTokens', 'cachedInputTokens', 'outputTokens'] as const) {
    if (String(got[f]) !== String(want[f])) out.push(`${f}: GET /spend ${got[f]}, stand-in ${want[f]}`);
  }
  // Money: every settled day shown equals its bill (Anthropic Priority Tier apart), today its estimate, the total the days'.
  const recon = (await (await fetch(`${apiUrl}/connections/${connectionId}/reconciliation?from=${from}&to=${to}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    days: { date: string; settled: boolean; computedUsd: number; billedUsd: number | null; lines: { estimatedUsd: number; reason: string | null }[] }[];
    total: { computedUsd: number };
  };
  for (const d of recon.days) {
    const priority = d.lines.filter((l) => l.reason === 'priority_tier').reduce((n, l) => n + BigInt(usdToMicros(l.estimatedUsd)), 0n);
    if (d.settled && BigInt(usdToMicros(d.computedUsd)) !== BigInt(usdToMicros(d.billedUsd ?? 0)) + priority) out.push(`${d.date}: shown ${d.computedUsd}, billed ${d.billedUsd}`);
    if (!d.settled && d.date !== to) out.push(`${d.date}: not settled`);
    if (d.date === to && BigInt(usdToMicros(d.computedUsd)) !== want.costMicros) out.push(`today: shown ${d.computedUsd}, estimate ${Number(want.costMicros) / 1e6}`);
  }
  if (usdToMicros(recon.total.computedUsd) !== usdToMicros(body.total.costUsd)) out.push(`GET /spend ${body.total.costUsd}, reconciliation ${recon.total.computedUsd}`);
  console.log(`  checked ${from} → ${to}: ${num(t.cells.length)} cells, ${num(want.requests)} requests, $${(Number(want.costMicros) / 1e6).toFixed(6)}${out.length ? '' : ' — equal'}`);
  return out;
}
