/**
 * `npm run bench:enforce` — how fast and how tight budgets that stop spend are, on the local stack and its stand-ins:
 *
 *   1. crossing → reporter refusal: a key that sends events crosses its stop budget (one POST /ingest); a reporter
 *      already running (its list read at start) calls the inference stand-in every 250 ms until it answers 429
 *      itself. SAMPLES samples (target ≤ 30 s: the list is read every `refreshAfterSeconds`).
 *   2. provider usage crossing → key stopped: an Anthropic key's usage crosses its budget at the stand-in; one sync
 *      (the one due next: every minute while the connection is at or past the alert threshold) imports it and sets
 *      the key inactive. Measured: that sync's wall time; the bound is one sync interval + it.
 *   3. overshoot at a steady rate: the same key spending RATE dollars a minute (simulated clock, a call every 5 s),
 *      synced every 60 s: the dollars spent past the limit before the key was stopped.
 *   4. 1,000 reporters polling the block list: read units of one GET /ingest/blocks (DynamoDB Local's consumed
 *      capacity, ingest-key lookup included) × REPORTERS × polls an hour.
 *
 * Options (env): SAMPLES 3, RATE 2 (dollars a minute), REPORTERS 1000, BLOCKED 10 (blocked keys in the account).
 */
import { createHash } from 'node:crypto';
import { benchSession, benchTenant, call, heading, intOption, machine, ms, num, startBenchStack, table } from './lib.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.LOG_REQUESTS ??= '0';
process.env.CONNECTOR_SYNC_INTERVAL_MS = '0';

const { db } = await import('#shared/db/client.ts');
const { setLocalSyncSink } = await import('#shared/connections/queue.ts');
const { syncConnection, HOT_SYNC_INTERVAL_MS } = await import('#shared/sync/all.ts');
const { createReporter } = await import('../reporter/src/index.ts');
const { startInferenceStandin, OPENAI_KEY } = await import('../reporter/test/inference-standin.ts');

const SAMPLES = intOption('samples', 3);
const RATE = Number(process.env.RATE ?? 2);
const REPORTERS = intOption('reporters', 1000);
const BLOCKED = intOption('blocked', 10);
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let rcu = 0;
const installCounter = () =>
  db().middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const c = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      for (const x of Array.isArray(c) ? c : c ? [c] : []) rcu += x.CapacityUnits ?? 0;
      return out;
    },
    { step: 'initialize', name: 'benchEnforceCounter', override: true },
  );

const session = await benchSession('burnrate-bench-enforce-');
process.exit(await session.run(run));

async function run(): Promise<number> {
  console.log(heading('Budgets that stop spend'));
  console.log(`  machine: ${machine()}`);
  const { stack } = await startBenchStack(session);
  installCounter();
  const tenant = await benchTenant(stack, 'enforce');
  const auth = { authorization: `Bearer ${tenant.token}` };
  const ingest = (events: unknown[]) => call(`${stack.apiUrl}/ingest`, { method: 'POST', headers: { 'x-api-key': tenant.ingestKey }, json: { events } });
  const event = (hash: string, costUsd: number) => ({ requestId: `r-${Math.random()}`, keyHash: hash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd });
  const rows: string[][] = [['measure', 'figure', 'target']];

  // 1. crossing → reporter refusal
  const inference = await startInferenceStandin();
  session.onCleanup('stopping the inference stand-in', () => inference.close());
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const key = `${OPENAI_KEY.slice(0, -6)}${String(i).padStart(2, '0')}wXyZ`;
    const hash = sha256(key);
    await ingest([event(hash, 0.01)]);
    const budget = await call<{ id: string }>(`${stack.apiUrl}/budgets`, { method: 'POST', headers: auth, json: { monthlyLimit: 1, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    if (budget.status !== 201) throw new Error(`POST /budgets: ${budget.status} ${JSON.stringify(budget.body)}`);
    const reporter = createReporter({ ingestKey: tenant.ingestKey, baseUrl: stack.apiUrl, logger: { warn: () => undefined } });
    await reporter.refreshBlocks();
    // A random phase of the reporter's 15 s cycle.
    await new Promise((r) => setTimeout(r, Math.random() * 15_000));
    const crossed = performance.now();
    await ingest([event(hash, 2)]);
    for (;;) {
      const res = await reporter.fetch(`${inference.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      await res.text();
      if (res.status === 429 && res.headers.get('x-should-retry') === 'false') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    latencies.push(performance.now() - crossed);
    await reporter.close();
  }
  rows.push(['crossing → reporter refusal (max of samples)', `${ms(Math.max(...latencies))} ms (${latencies.map((l) => ms(l)).join(', ')})`, '≤ 30,000 ms']);

  // 2 and 3: an Anthropic key past its budget, through syncs.
  setLocalSyncSink(undefined);
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 15, 12) / 1000;
  const org = await call<{ id: string; adminKey: string; keys: { id: string; name: string }[] }>(`${stack.anthropicAdmin.url}/_burnrate/orgs`, {
    method: 'POST',
    json: { now: start, late: null },
  });
  const control = (path: string, json?: unknown) => call<any>(`${stack.anthropicAdmin.url}/_burnrate/orgs/${org.body.id}${path}`, json === undefined ? {} : { method: 'POST', json });
  const con = await call<{ id: string }>(`${stack.apiUrl}/connections`, { method: 'POST', headers: auth, json: { provider: 'anthropic', adminKey: org.body.adminKey } });
  await call(`${stack.apiUrl}/connections/${con.body.id}`, { method: 'PATCH', headers: auth, json: { enforcement: 'on' } });
  let now = start;
  const syncAt = () => syncConnection(tenant.accountId, con.body.id, { now: new Date(now * 1000), budgetMs: 600_000 });
  await syncAt();
  const keyId = org.body.keys.find((k) => k.name === 'prod-api')!.id;
  const hash = sha256(`anthropic:${keyId}`);
  const spendOf = async () => (await call<any>(`${stack.apiUrl}/keys/${hash}`, { headers: auth })).body.spend.monthToDate as number;
  const limit = Math.ceil((await spendOf()) + 10);
  await call(`${stack.apiUrl}/budgets`, { method: 'POST', headers: auth, json: { monthlyLimit: limit, alertThreshold: 50, scope: 'KEY', keyHash: hash, action: 'stop' } });
  // $RATE a minute of Claude Sonnet output ($15 / 1M tokens), one call every 5 s of the stand-in's clock.
  const tokensPerCall = Math.round(((RATE / 12) * 1_000_000) / 15);
  let stoppedSyncMs = 0;
  let refusedCalls = 0;
  for (let minute = 0; minute < 600; minute++) {
    for (let s = 0; s < 12; s++) {
      now += 5;
      await control('/clock', { now });
      const added = await control('/usage', { apiKeyId: keyId, model: 'claude-sonnet-4-5-20250929', add: { output: tokensPerCall } });
      if (added.body.refused) refusedCalls += 1;
    }
    const t = performance.now();
    await syncAt();
    const status = ((await control('/state')).body.keys as { id: string; status: string }[]).find((k) => k.id === keyId)!.status;
    if (status === 'inactive') {
      stoppedSyncMs = performance.now() - t;
      // One more minute of calls: all refused by the provider; then the final spend.
      for (let s = 0; s < 12; s++) {
        now += 5;
        await control('/clock', { now });
        if ((await control('/usage', { apiKeyId: keyId, model: 'claude-sonnet-4-5-20250929', add: { output: tokensPerCall } })).body.refused) refusedCalls += 1;
      }
      await syncAt();
      break;
    }
  }
  const overshoot = (await spendOf()) - limit;
  rows.push(['provider usage crossing → key stopped', `≤ ${ms(HOT_SYNC_INTERVAL_MS)} ms (one sync interval) + the acting sync ${ms(stoppedSyncMs)} ms`, 'one sync interval']);
  rows.push([`overshoot at $${RATE}/min, synced every 60 s`, `$${overshoot.toFixed(2)} (calls refused after the stop: ${refusedCalls})`, `≤ $${RATE.toFixed(2)} (one interval)`]);

  // 4. the block list's cost
  for (let i = 0; i < BLOCKED; i++) {
    const h = sha256(`blocked-${i}`);
    await ingest([event(h, 0.01)]);
    await call(`${stack.apiUrl}/budgets`, { method: 'POST', headers: auth, json: { monthlyLimit: 0.001, alertThreshold: 80, scope: 'KEY', keyHash: h, action: 'stop' } });
    await ingest([event(h, 0.01)]);
  }
  const polls = 20;
  rcu = 0;
  let listed = 0;
  for (let i = 0; i < polls; i++) {
    const res = await call<{ blocked: unknown[] }>(`${stack.apiUrl}/ingest/blocks`, { headers: { 'x-api-key': tenant.ingestKey } });
    listed = res.body.blocked.length;
  }
  const perPoll = rcu / polls;
  const perHour = perPoll * REPORTERS * (3600 / 15);
  rows.push([`read units per GET /ingest/blocks (${listed} blocked, the account's budgets)`, num(perPoll, 2), '']);
  rows.push([`${num(REPORTERS)} reporters polling every 15 s`, `${num(perHour)} read units an hour (~$${((perHour / 1e6) * 0.125).toFixed(2)} on-demand at $0.125 per million)`, '']);

  console.log(table(rows, { left: [0, 1] }));
  return 0;
}
