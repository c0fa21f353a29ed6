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
 *   5. a runaway key against the default spend-anomaly rule (stop, 10×, $20 an hour): a connection key starting to spend
 *      RUNAWAY dollars a minute (simulated clock, syncs every 60 s) → seconds until it is inactive at the stand-in; a
 *      reporter key doing the same → calls until it is on the block list.
 *   6. false spend-anomaly alerts over 90 days of ALL the demo account's keys: its proxy keys (local/demo-seed.ts's
 *      generator) and its OpenAI and Anthropic connections' keys (the stand-ins' seeded organizations, synced every 5
 *      minutes), replayed through the rule's own functions (target 0).
 *   7. native caps with Burnrate down: a stop budget on an OpenAI project (its hard limit), on an OpenRouter key (its
 *      own limit, monthly reset) and on an Anthropic workspace (its spend limit, early access) sets the provider's cap;
 *      then Burnrate's stack is stopped (no syncs, no block list) and only the providers' stand-ins run on, from the
 *      state they kept; an application calls through the official SDKs (`openai`, `@anthropic-ai/sdk`; OpenRouter
 *      through `openai`), a call every 5 s of the stand-in's clock at about CALL_USD each, until the stand-in refuses:
 *      the dollars spent past each cap. The stand-ins check a cap before each call and bill a call whole when it ends,
 *      as the providers document; OpenAI documents a lag ("Enforcement is not instantaneous") without a figure, so its
 *      row is measured at no lag and again at OPENAI_LAG seconds (an assumption, said so in the row).
 *
 * Options (env): SAMPLES 3, RATE 2 (dollars a minute), REPORTERS 1000, BLOCKED 10 (blocked keys in the account),
 * RUNAWAY 50 (dollars a minute), CAP 5 (each native cap, dollars), CALL_USD 0.4, OPENAI_LAG 60 (seconds),
 * ONLY=caps (section 7 alone).
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
const { demoProxyEvents } = await import('../local/demo-seed.ts');
const { baselineMicrosPerHour, baselineOf, isAnomalous, rateMicros } = await import('#shared/anomaly/rate.ts');
const { hourCostName, spreadOverHours, syncRead } = await import('#shared/db/rolling.ts');
const { seedOpenAiOrg, openAiLineItems } = await import('../local/openai-admin.ts');
const { seedAnthropicOrg, anthropicCostItems } = await import('../local/anthropic-admin.ts');
const { seriesWindow, indexAdditions, dayStart, DAY_S } = await import('../local/provider-org.ts');
const { startInferenceStandin, OPENAI_KEY } = await import('../reporter/test/inference-standin.ts');

const SAMPLES = intOption('samples', 3);
const RATE = Number(process.env.RATE ?? 2);
const REPORTERS = intOption('reporters', 1000);
const BLOCKED = intOption('blocked', 10);
const RUNAWAY = Number(process.env.RUNAWAY ?? 50);
const CAP = Number(process.env.CAP ?? 5);
const CALL_USD = Number(process.env.CALL_USD ?? 0.4);
const OPENAI_LAG = intOption('openai_lag', 60, 0);
const ONLY_CAPS = process.env.ONLY === 'caps';
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
  // Section 7's accounts (one connection per provider and account: the tenant above has an Anthropic one), made now:
  // a first call after section 6's long replay could meet a pooled connection the server just closed.
  const capsTenant = await benchTenant(stack, 'caps');
  const lagTenant = await benchTenant(stack, 'caps-lag');
  const auth = { authorization: `Bearer ${tenant.token}` };
  const ingest = (events: unknown[]) => call(`${stack.apiUrl}/ingest`, { method: 'POST', headers: { 'x-api-key': tenant.ingestKey }, json: { events } });
  const event = (hash: string, costUsd: number) => ({ requestId: `r-${Math.random()}`, keyHash: hash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd });
  const rows: string[][] = [['measure', 'figure', 'target']];
  if (ONLY_CAPS) {
    rows.push(...(await nativeCapsWithBurnrateDown(stack, capsTenant, lagTenant)));
    console.log(table(rows, { left: [0, 1] }));
    return 0;
  }

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

  // 5. a runaway key: $RUNAWAY a minute from one moment on, against the default spend-anomaly rule (stop, 10×, $20 an hour).
  const anomalyTenant = await benchTenant(stack, 'anomaly');
  const aAuth = { authorization: `Bearer ${anomalyTenant.token}` };
  const rule = await call(`${stack.apiUrl}/alert-rules`, { method: 'POST', headers: aAuth, json: { type: 'spend_anomaly', name: 'Runaway keys', channels: ['email'], config: { minUsdPerHour: 20, multiplier: 10, action: 'stop' } } });
  if (rule.status !== 201) throw new Error(`POST /alert-rules: ${rule.status} ${JSON.stringify(rule.body)}`);
  //   a. a key of a connection (Anthropic), synced every minute (an account with a stopping rule, locally)
  const aStart = Math.floor(Date.now() / 1000) - 3600;
  const aOrg = await call<{ id: string; adminKey: string; keys: { id: string; name: string }[] }>(`${stack.anthropicAdmin.url}/_burnrate/orgs`, { method: 'POST', json: { now: aStart, late: null } });
  const aControl = (path: string, json?: unknown) => call<any>(`${stack.anthropicAdmin.url}/_burnrate/orgs/${aOrg.body.id}${path}`, json === undefined ? {} : { method: 'POST', json });
  const aCon = await call<{ id: string }>(`${stack.apiUrl}/connections`, { method: 'POST', headers: aAuth, json: { provider: 'anthropic', adminKey: aOrg.body.adminKey } });
  await call(`${stack.apiUrl}/connections/${aCon.body.id}`, { method: 'PATCH', headers: aAuth, json: { enforcement: 'on' } });
  let aNow = aStart;
  const aSync = () => syncConnection(anomalyTenant.accountId, aCon.body.id, { now: new Date(aNow * 1000), budgetMs: 600_000, leaseMs: 3_600_000 });
  await aSync();
  aNow += 60;
  await aControl('/clock', { now: aNow });
  await aSync();
  const runawayId = aOrg.body.keys.find((k) => k.name === 'prod-api')!.id;
  const perCall = Math.round(((RUNAWAY / 12) * 1_000_000) / 15); // Claude Sonnet output, $15 / 1M tokens
  const began = aNow;
  let stoppedAfter = -1;
  let actingSyncMs = 0;
  for (let minute = 0; minute < 30 && stoppedAfter < 0; minute++) {
    for (let s = 0; s < 12; s++) {
      aNow += 5;
      await aControl('/clock', { now: aNow });
      await aControl('/usage', { apiKeyId: runawayId, model: 'claude-sonnet-4-5-20250929', add: { output: perCall } });
    }
    const t = performance.now();
    await aSync();
    const status = ((await aControl('/state')).body.keys as { id: string; status: string }[]).find((k) => k.id === runawayId)!.status;
    if (status === 'inactive') {
      actingSyncMs = performance.now() - t;
      stoppedAfter = aNow - began;
    }
  }
  rows.push([
    `a connection key starting to spend $${RUNAWAY}/min → stopped (syncs every 60 s)`,
    stoppedAfter < 0 ? 'not stopped in 30 minutes' : `${stoppedAfter} s of spend + the acting sync ${ms(actingSyncMs)} ms (the first sync that sees it)`,
    '≤ one sync interval',
  ]);
  //   b. a key that sends events: its 14 usual days, then $RUNAWAY a minute in calls of 5 s
  const rKey = sha256(`runaway-${Date.now()}`);
  const aIngest = (events: unknown[]) => call(`${stack.apiUrl}/ingest`, { method: 'POST', headers: { 'x-api-key': anomalyTenant.ingestKey }, json: { events } });
  const midnight = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  await aIngest(Array.from({ length: 14 }, (_, i) => ({ ...event(rKey, 12), timestamp: new Date(midnight - (i + 1) * 86_400_000 + 43_200_000).toISOString() })));
  const rBegan = performance.now();
  let rCalls = 0;
  for (;;) {
    rCalls += 1;
    await aIngest([event(rKey, Math.round((RUNAWAY / 12) * 1e6) / 1e6)]);
    const blocked = (await call<{ blocked: { keyHash: string }[] }>(`${stack.apiUrl}/ingest/blocks`, { headers: { 'x-api-key': anomalyTenant.ingestKey } })).body.blocked;
    if (blocked.some((b) => b.keyHash === rKey) || rCalls > 100) break;
  }
  rows.push([
    `a reporter key starting to spend $${RUNAWAY}/min → on the block list`,
    `after ${rCalls} calls (${rCalls * 5} s of spend at a call every 5 s; ${ms(performance.now() - rBegan)} ms of ingests here) + the reporter's refresh (≤ 15 s)`,
    'the first ingest that sees it',
  ]);

  // 6. false spend-anomaly alerts over ALL the demo account's keys, 90 days, default rule: its proxy keys (events by
  //    their time) and its connections' keys (the stand-ins' seeded organizations, synced every 5 minutes).
  const proxy = demoFalseAlerts(90);
  const linked = demoConnectionFalseAlerts(90);
  const all = [...proxy.keys, ...linked.keys];
  const worst = all.reduce((w, k) => (k.maxRatio > w.maxRatio ? k : w), all[0]!);
  const fastest = all.reduce((w, k) => (k.maxRate > w.maxRate ? k : w), all[0]!);
  rows.push([
    `false spend-anomaly alerts: the demo's ${all.length} keys (${proxy.keys.length} proxy, ${linked.keys.length} of its OpenAI and Anthropic connections, whose seeded history starts ${linked.from}) over 90 days (rule: 10×, $20 an hour; proxy keys checked every 5 minutes, connections synced every 5 minutes)`,
    `${all.reduce((n, k) => n + k.alerts, 0)} (proxy ${proxy.keys.reduce((n, k) => n + k.alerts, 0)}, connections ${linked.keys.reduce((n, k) => n + k.alerts, 0)}); highest rate against its usual hour: ${worst.maxRatio.toFixed(1)}× (${worst.name}); fastest: $${fastest.maxRate.toFixed(2)} an hour (${fastest.name})`,
    '0',
  ]);
  for (const k of all.filter((x) => x.alerts > 0)) rows.push([`  alerted: ${k.name}`, `${k.alerts} (${k.why})`, '']);

  // 7. native caps with Burnrate down (last: it stops the stack)
  rows.push(...(await nativeCapsWithBurnrateDown(stack, capsTenant, lagTenant)));

  console.log(table(rows, { left: [0, 1] }));
  return 0;
}

type BenchStack = Awaited<ReturnType<typeof startBenchStack>>['stack'];

/**
 * Section 7: three stop budgets whose native caps are set while Burnrate runs; then Burnrate stopped and the stand-ins
 * alone, called through the official SDKs until they refuse. Each target is new (no spend before), so what the
 * application spent is the sum of its answered calls at the stand-in's prices, and the dollars past the cap that sum
 * less the cap.
 */
async function nativeCapsWithBurnrateDown(stack: BenchStack, tenant: { accountId: string; token: string }, lagTenant: { accountId: string; token: string }): Promise<string[][]> {
  const { default: OpenAI } = await import('openai');
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const { startOpenAiAdmin, OPENAI_STANDIN_PRICES } = await import('#local/openai-admin.ts');
  const { startAnthropicAdmin, ANTHROPIC_STANDIN_PRICES } = await import('#local/anthropic-admin.ts');
  const { startOpenRouterAdmin } = await import('#local/openrouter-admin.ts');
  const { join } = await import('node:path');
  // Syncs are run here, on the stand-ins' frozen clock (the stack's own queue would run them on the real one).
  setLocalSyncSink(undefined);
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 15, 12) / 1000;
  let who = tenant;
  const api = async <T = any>(path: string, method: string, json?: unknown, expected = 200): Promise<T> => {
    const res = await call<T>(`${stack.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${who.token}` }, ...(json === undefined ? {} : { json }) });
    if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  type Setup = { provider: 'openai' | 'anthropic' | 'openrouter'; label: string; orgId: string; secret: string; lag: number; before: number };
  const setups: Setup[] = [];

  // While Burnrate runs: an organization per cap, connected, a new target with a key, a stop budget of $CAP; synced
  // until the budget says its native cap is set.
  // (One connection per provider and account: the lag case is another account's.)
  async function prepare(provider: Setup['provider'], label: string, lag = 0): Promise<void> {
    who = lag > 0 ? lagTenant : tenant;
    const base = provider === 'openai' ? stack.openaiAdmin.url : provider === 'anthropic' ? stack.anthropicAdmin.url : stack.openrouter.url;
    const org = await call<{ id: string; adminKey: string }>(`${base}/_burnrate/orgs`, { method: 'POST', json: { now: start, late: null } });
    const control = async (path: string, json: unknown) => (await call<any>(`${base}/_burnrate/orgs/${org.body.id}${path}`, { method: 'POST', json })).body;
    let projectId: string | null = null;
    if (provider !== 'openrouter') projectId = (await control('/projects', { name: `${label} (capped)` })).id;
    const model = provider === 'openai' ? 'gpt-4.1-2025-04-14' : provider === 'anthropic' ? 'claude-opus-4-5-20251101' : 'openai/gpt-4.1';
    const key = await control('/keys', { name: `${label} app`, projectId, model, ...(provider === 'openrouter' ? { tier: 'OpenAI' } : {}) });
    // A first small call (Burnrate lists a key once it has spent): its cost counts toward the cap.
    const first = provider === 'openai' ? { output: 1000, requests: 1 } : provider === 'anthropic' ? { output: 1000 } : { requests: 1, prompt: 10, completion: 10, cost: 10_000 };
    await control('/usage', { apiKeyId: key.id, model, ...(provider === 'openrouter' ? { tier: 'OpenAI' } : {}), add: first });
    const before = provider === 'openai' ? (1000 * OPENAI_STANDIN_PRICES[model]!.output) / 1e9 : provider === 'anthropic' ? (1000 * ANTHROPIC_STANDIN_PRICES[model]!.output) / 1e9 : 0.01;
    if (lag > 0) await control('/spend-limits', { lagSeconds: lag });
    await control('/clock', { now: start + 3600 }); // the first call's hour complete
    const con = await api<{ id: string }>('/connections', 'POST', { provider, adminKey: org.body.adminKey }, 201);
    await api(`/connections/${con.id}`, 'PATCH', { enforcement: 'on' });
    const sync = async () => {
      for (let i = 0; i < 100; i++) {
        const r = await syncConnection(who.accountId, con.id, { now: new Date((start + 3600) * 1000), budgetMs: 600_000, whenBusy: 'skip' });
        if (r.status !== 'busy') return r;
        await new Promise((done) => setTimeout(done, 200));
      }
      throw new Error(`${label}: the connection's lease was never free`);
    };
    await sync();
    const hash = sha256(`${provider}:${key.id}`);
    const scope = provider === 'openrouter' ? { scope: 'KEY', keyHash: hash } : { scope: 'PROJECT', connectionId: con.id, projectId, ...(provider === 'anthropic' ? { nativeCap: true } : {}) };
    const budget = await api<{ id: string }>('/budgets', 'POST', { name: `${label} cap`, monthlyLimit: CAP, alertThreshold: 80, action: 'stop', ...scope }, 201);
    for (let i = 0; i < 5; i++) {
      const b = ((await api<{ items: any[] }>('/budgets', 'GET')).items).find((x) => x.id === budget.id);
      if (b?.enforcement?.nativeCap?.status === 'set') break;
      if (i === 4) throw new Error(`${label}: the native cap was not set (${JSON.stringify(b?.enforcement)})`);
      await sync();
    }
    setups.push({ provider, label, orgId: org.body.id, secret: key.secret, lag, before });
  }
  await prepare('openai', 'OpenAI project hard limit');
  await prepare('openai', `OpenAI project hard limit, ${OPENAI_LAG} s lag assumed`, OPENAI_LAG);
  await prepare('openrouter', 'OpenRouter key limit (monthly reset)');
  await prepare('anthropic', 'Anthropic workspace spend limit');

  // Burnrate down: the whole local stack stopped (API, syncs, block list, DynamoDB); the providers' stand-ins started
  // again alone from the state they kept (their organizations, caps and clocks).
  await stack.stop();
  const dataDir = join(stack.outboxDir, '..');
  const standIns = {
    openai: await startOpenAiAdmin({ port: 0, dataDir: join(dataDir, 'openai-admin') }),
    anthropic: await startAnthropicAdmin({ port: 0, dataDir: join(dataDir, 'anthropic-admin') }),
    openrouter: await startOpenRouterAdmin({ port: 0, dataDir: join(dataDir, 'openrouter') }),
  };
  const rows: string[][] = [];
  try {
    for (const s of setups) {
      const url = standIns[s.provider].url;
      const clock = (now: number) => call(`${url}/_burnrate/orgs/${s.orgId}/clock`, { method: 'POST', json: { now } });
      // About CALL_USD of output a call at the stand-in's price.
      const perMillion = s.provider === 'openai' ? OPENAI_STANDIN_PRICES['gpt-4.1-2025-04-14']!.output / 1000 : s.provider === 'anthropic' ? ANTHROPIC_STANDIN_PRICES['claude-opus-4-5-20251101']!.output / 1000 : 8;
      const maxTokens = Math.round((CALL_USD / perMillion) * 1_000_000);
      const messages = [{ role: 'user' as const, content: 'Summarise the quarterly report.' }];
      const openai = s.provider !== 'anthropic' ? new OpenAI({ apiKey: s.secret, baseURL: `${url}${s.provider === 'openrouter' ? '/api/v1' : '/v1'}`, maxRetries: 0 }) : undefined;
      const anthropic = s.provider === 'anthropic' ? new Anthropic({ apiKey: s.secret, baseURL: url, maxRetries: 0 }) : undefined;
      let spent = s.before;
      let calls = 0;
      let refusal = '';
      let now = start + 3600;
      for (; calls < 1000; ) {
        now += 5;
        await clock(now);
        try {
          if (anthropic) {
            const m = await anthropic.messages.create({ model: 'claude-opus-4-5-20251101', max_tokens: maxTokens, messages });
            const p = ANTHROPIC_STANDIN_PRICES['claude-opus-4-5-20251101']!;
            spent += (m.usage.input_tokens * p.input + m.usage.output_tokens * p.output) / 1e9;
          } else {
            const model = s.provider === 'openai' ? 'gpt-4.1-2025-04-14' : 'openai/gpt-4.1';
            const c = await openai!.chat.completions.create({ model, max_tokens: maxTokens, messages });
            const p = OPENAI_STANDIN_PRICES['gpt-4.1-2025-04-14']!;
            spent += s.provider === 'openrouter' ? (c.usage as unknown as { cost: number }).cost : (c.usage!.prompt_tokens * p.input + c.usage!.completion_tokens * p.output) / 1e9;
          }
          calls += 1;
        } catch (error) {
          const e = error as { status?: number; error?: any };
          if (typeof e.status !== 'number') throw error;
          const body = e.error ?? {};
          // (`openai`'s `error` is the body's `error` object; `@anthropic-ai/sdk`'s the whole body.)
          const code = body.metadata?.limit_source ?? (typeof body.code === 'string' ? body.code : undefined) ?? body.error?.type ?? body.type ?? '';
          refusal = `${e.status} ${code}`.trim();
          break;
        }
      }
      rows.push([
        `Burnrate down: ${s.label}, $${CAP.toFixed(2)} cap, a ~$${CALL_USD.toFixed(2)} call every 5 s`,
        `$${Math.max(0, spent - CAP).toFixed(2)} past the cap (${calls} calls answered, $${spent.toFixed(2)} spent in all; then ${refusal || 'never refused'})`,
        s.lag > 0 ? `≈ ${s.lag} s of spend (the assumed lag)` : '< one call',
      ]);
    }
  } finally {
    await Promise.all(Object.values(standIns).map((x) => x.stop()));
  }
  return rows;
}

interface KeyReplay {
  name: string;
  alerts: number;
  /** The highest rate seen against the key's usual hour (keys with a baseline), and the highest rate ($ an hour). */
  maxRatio: number;
  maxRate: number;
  /** Why the first alert fired: its rate and baseline. */
  why: string;
}

/** The rule's test at `at` for a key (its hour counters, its per-day spend): counts an alert once per UTC day. */
function check(k: KeyReplay, fired: Set<string>, item: Record<string, bigint>, dayMicros: Map<string, bigint>, firstSeenDay: string | undefined, at: Date): void {
  const today = at.toISOString().slice(0, 10);
  const rate = rateMicros(item, at);
  const baseline = baselineOf(dayMicros, today, firstSeenDay);
  const perHour = Number(baselineMicrosPerHour(baseline));
  if (perHour > 0) k.maxRatio = Math.max(k.maxRatio, Number(rate) / perHour);
  k.maxRate = Math.max(k.maxRate, Number(rate) / 1e6);
  if (isAnomalous(rate, baseline, { minUsdPerHour: 20, multiplier: 10 }) && !fired.has(today)) {
    fired.add(today);
    k.alerts += 1;
    if (!k.why) k.why = `${at.toISOString().slice(0, 16)}: $${(Number(rate) / 1e6).toFixed(2)} in the last hour against $${(perHour / 1e6).toFixed(2)} usual (${baseline.days} days)`;
  }
}

/**
 * Replays the demo's proxy keys (the generator of local/demo-seed.ts, `days` + 14 days back) through the rule's own
 * functions (shared/anomaly/rate.ts): each key's events land in its hour counters by their time; every 5 minutes of
 * the last `days` complete days the rate is compared with the baseline of the 14 days before, at the default rule
 * (more often than ingests would: an upper bound on alerts).
 */
function demoFalseAlerts(days: number): { keys: KeyReplay[] } {
  const now = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 1; // the end of yesterday: complete days only
  const events = demoProxyEvents(days + 15, now);
  const byKey = new Map<string, { name: string; hours: Map<string, bigint>; days: Map<string, bigint> }>();
  for (const e of events) {
    const k = byKey.get(e.keyHash) ?? { name: `${e.provider} ${e.keyHint}`, hours: new Map(), days: new Map() };
    byKey.set(e.keyHash, k);
    const micros = BigInt(Math.round(e.costUsd * 1e6));
    k.hours.set(e.timestamp.slice(0, 13), (k.hours.get(e.timestamp.slice(0, 13)) ?? 0n) + micros);
    k.days.set(e.timestamp.slice(0, 10), (k.days.get(e.timestamp.slice(0, 10)) ?? 0n) + micros);
  }
  const keys: KeyReplay[] = [];
  for (const k of byKey.values()) {
    const replay: KeyReplay = { name: `proxy key ${k.name}`, alerts: 0, maxRatio: 0, maxRate: 0, why: '' };
    const item = Object.fromEntries([...k.hours].map(([h, m]) => [hourCostName(h), m]));
    const fired = new Set<string>();
    for (let t = now - days * 86_400_000; t <= now; t += 5 * 60_000) check(replay, fired, item, k.days, undefined, new Date(t));
    keys.push(replay);
  }
  return { keys };
}

/**
 * Replays the keys of the demo's two connections: the stand-ins' own seeded organizations (local/openai-admin.ts,
 * local/anthropic-admin.ts: the organizations `npm start` serves and the demo connects), each key's today figure as
 * the provider reports it at each sync (every 5 minutes over the last `days` complete days), through the sync's own
 * rules: the growth since the figure's last read spread over the hours between (shared/db/rolling.ts `syncRead`,
 * `spreadOverHours`: the rate from the second sync that sees the key on the day), the baseline from the complete days'
 * figures (late arrivals included), the default rule's test.
 */
function demoConnectionFalseAlerts(days: number): { keys: KeyReplay[]; from: string } {
  const nowS = Math.floor(Date.now() / 86_400_000) * DAY_S - 1; // the end of yesterday
  const startS = dayStart(nowS) - (days - 1) * DAY_S;
  const keys: KeyReplay[] = [];
  let from = '9999-12-31';
  for (const org of [seedOpenAiOrg(nowS, 'sk-admin-bench'), seedAnthropicOrg(nowS, 'sk-ant-admin01-bench')]) {
    const additions = indexAdditions(org);
    // µ$ of a series' usage in [a, b) as seen at `seen` (the stand-in's own prices, as its cost report bills them).
    const cost = (s: (typeof org.series)[number], a: number, b: number, seen: number): bigint => {
      const m = seriesWindow(org, s, a, b, seen, additions);
      const items: { nanos: number }[] = org.provider === 'openai' ? openAiLineItems(s, m) : anthropicCostItems(s, m);
      return BigInt(Math.round(items.reduce((n, i) => n + i.nanos, 0) / 1000));
    };
    const groups = new Map<string | null, (typeof org.series)[number][]>();
    for (const s of org.series) groups.set(s.keyId, [...(groups.get(s.keyId) ?? []), s]);
    for (const [keyId, series] of groups) {
      const key = org.keys.find((k) => k.id === keyId);
      const replay: KeyReplay = { name: `${org.provider} ${key?.name ?? '(usage without a key)'}`, alerts: 0, maxRatio: 0, maxRate: 0, why: '' };
      // Complete days as the bill shows them later (late arrivals in), the 14 before the window included.
      const dayMicros = new Map<string, bigint>();
      for (let d = startS - 14 * DAY_S; d < dayStart(nowS) + DAY_S; d += DAY_S) {
        const total = series.reduce((n, s) => n + cost(s, d, d + DAY_S, d + 3 * DAY_S), 0n);
        if (total > 0n) dayMicros.set(new Date(d * 1000).toISOString().slice(0, 10), total);
      }
      // Burnrate finds the key at the connection's first sync, or when it first spends.
      const firstSpend = [...dayMicros.keys()].sort()[0];
      if (firstSpend && firstSpend < from) from = firstSpend;
      const firstSeenMs = Math.max((startS - 14 * DAY_S) * 1000, firstSpend ? Date.parse(`${firstSpend}T00:00:00Z`) : 0);
      const item: Record<string, bigint> = {};
      const fired = new Set<string>();
      let figure = 0n;
      let figureDay = -1;
      let rateAt: string | undefined;
      let previousSyncAt: number | undefined;
      for (let t = startS; t <= nowS; t += 300) {
        const day = dayStart(t);
        if (day !== figureDay) {
          figure = 0n;
          figureDay = day;
        }
        const seen = series.reduce((n, s) => n + cost(s, day, t, t), 0n);
        const at = new Date(t * 1000);
        if (seen > figure) {
          const read = syncRead({ now: at, previousSyncAt, keyFirstSeenAt: firstSeenMs, rateAt });
          for (const [hour, micros] of spreadOverHours(seen - figure, read.from, t * 1000, at)) item[hourCostName(hour)] = (item[hourCostName(hour)] ?? 0n) + micros;
          figure = seen;
          rateAt = at.toISOString();
          if (read.rated) check(replay, fired, item, dayMicros, new Date(firstSeenMs).toISOString().slice(0, 10), at);
        }
        previousSyncAt = t * 1000;
      }
      keys.push(replay);
    }
  }
  return { keys, from: from < new Date(startS * 1000).toISOString().slice(0, 10) ? new Date(startS * 1000).toISOString().slice(0, 10) : from };
}
