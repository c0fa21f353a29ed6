/**
 * `npm run demo:seed`: fills a running local stack (`npm start`) with a realistic month through the public API
 * only — a demo account upgraded to Scale through the local Checkout, a dozen proxy keys with labels (Google,
 * Mistral, xAI, DeepSeek: 30 days of events over several models), budgets, alert rules and the alerts they raise,
 * and, last, connections to the stack's stand-ins of the OpenAI and Anthropic admin APIs, whose first syncs bring
 * every key of both made-up organizations. Prints how to sign in.
 *
 * The proxy keys are of providers without a connection on purpose: while an account has a connection for a provider,
 * the API refuses that provider's events (`provider_connected`), so OpenAI and Anthropic spend comes from the
 * connections only, as it would for a customer.
 *
 * Environment: API_URL (default http://localhost:3000/api), DEMO_EMAIL (default a new demo-…@example.com; an address
 * that already has a user seeds that user's account, e.g. the one just signed up in the dashboard), DEMO_PASSWORD
 * (default Demo-pass-2026; for an existing user, its password), DATA_DIR (default .data: the stack's data folder, whose
 * local-stack.json says where the admin API stand-ins are). With RATE_LIMITS=off on the stack it may run as often as wanted.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const DAYS = 30;
let API = '';

interface Call {
  status: number;
  body: any;
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Call> {
  const res = await fetch(`${API}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function must(res: Call, what: string): any {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A deterministic pseudo-random stream: the same demo every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

/**
 * The keys a proxy reports (events sent to POST /ingest), of providers WITHOUT a connection: OpenAI's and Anthropic's
 * spend comes from the two connections (an account with a connection for a provider refuses that provider's events
 * with `provider_connected`, so nothing is counted twice), the rest from the proxy.
 */
const KEYS: { label: string; provider: string; models: [string, number, number][]; daily: number }[] = [
  // [model, $ per 1M input, $ per 1M output], average requests a day
  { label: 'Support bot', provider: 'google', models: [['gemini-2.5-pro', 1.25, 10], ['gemini-2.5-flash', 0.3, 2.5]], daily: 60 },
  { label: 'Search ranking', provider: 'google', models: [['gemini-2.5-flash', 0.3, 2.5]], daily: 80 },
  { label: 'Code review', provider: 'mistral', models: [['codestral', 0.3, 0.9]], daily: 35 },
  { label: 'Docs assistant', provider: 'mistral', models: [['mistral-small', 0.1, 0.3]], daily: 40 },
  { label: 'Sales e-mails', provider: 'xai', models: [['grok-3', 3, 15]], daily: 20 },
  { label: 'Data pipeline', provider: 'google', models: [['gemini-2.0-flash', 0.1, 0.4]], daily: 70 },
  { label: 'Eval harness', provider: 'xai', models: [['grok-4', 3, 15]], daily: 6 },
  { label: 'Mobile app', provider: 'deepseek', models: [['deepseek-chat', 0.27, 1.1]], daily: 50 },
  { label: 'Translation', provider: 'mistral', models: [['mistral-large', 2, 6]], daily: 25 },
  { label: 'Staging', provider: 'deepseek', models: [['deepseek-reasoner', 0.55, 2.19]], daily: 8 },
  { label: 'Prototype', provider: 'mistral', models: [['mistral-medium', 0.4, 2]], daily: 10 },
  { label: 'Summariser', provider: 'google', models: [['gemini-1.5-pro', 1.25, 5]], daily: 18 },
];

/**
 * The proxy keys' events of the last `days` UTC days before `now` (today included): weekdays busier, the last ten days
 * grown by a launch; deterministic (the same demo every run). `bench:enforce` replays 90 days of it.
 */
export function demoProxyEvents(days: number, now: number) {
  const rand = random(42);
  const hashes = KEYS.map((k) => createHash('sha256').update(`demo-${k.label}`).digest('hex'));
  const events: { requestId: string; keyHash: string; keyHint: string; provider: string; model: string; inputTokens: number; outputTokens: number; costUsd: number; timestamp: string }[] = [];
  for (let day = days - 1; day >= 0; day--) {
    // Weekdays are busier; a launch made the last ten days grow.
    const date = new Date(now - day * 86_400_000);
    const weekday = date.getUTCDay() % 6 === 0 ? 0.45 : 1;
    const growth = day < 10 ? 1.6 : 1;
    KEYS.forEach((key, k) => {
      const count = Math.round(key.daily * weekday * growth * (0.6 + rand() * 0.8) / 1.6);
      for (let n = 0; n < count; n++) {
        const [model, inPrice, outPrice] = key.models[Math.floor(rand() * key.models.length)]!;
        // Long prompts (retrieval context, code): thousands of tokens a call.
        const inputTokens = Math.round(16 * (800 + rand() * 4000));
        const outputTokens = Math.round(16 * (150 + rand() * 900));
        const costUsd = Math.round(((inputTokens * inPrice + outputTokens * outPrice) / 1e6) * 1e6) / 1e6;
        const at = Math.min(now - 60_000, date.getTime() - rand() * 86_000_000 * (day === 0 ? 0 : 1));
        events.push({
          requestId: `demo-${day}-${k}-${n}`,
          keyHash: hashes[k]!,
          keyHint: hashes[k]!.slice(-4),
          provider: key.provider,
          model,
          inputTokens,
          outputTokens,
          costUsd,
          timestamp: new Date(at).toISOString(),
        });
      }
    });
  }
  return events;
}

/**
 * Where the providers' admin APIs are (npm start's stand-ins: LocalStackInfo) and, optionally, the admin key to connect
 * with (a test's own stand-in organization); without one, the key the stand-in's main organization accepts now.
 */
export interface AdminApis {
  openaiAdmin: { url: string; adminKey?: string };
  anthropicAdmin: { url: string; adminKey?: string };
}

export interface Demo {
  email: string;
  password: string;
  events: number;
  alerts: number;
  /** Hashes of the seeded keys, in the order of KEYS. */
  keyHashes: string[];
  /** The connections made (none when no admin APIs were given), with the keys their first sync found. */
  connections: { id: string; provider: 'openai' | 'anthropic'; keys: number }[];
}

/**
 * A session for `email`: a new account registered with it, or, when the address already has a user (an account the
 * newcomer signed up with in the dashboard), that user signed in with `password`.
 */
async function signIn(email: string, password: string): Promise<string> {
  const registered = await call('POST', '/auth/register', { email, password, firstName: 'Dana', lastName: 'Demo', companyName: 'Demo Robotics' });
  if (registered.status !== 409) return must(registered, 'register').token;
  const login = await call('POST', '/auth/login', { email, password });
  if (login.status !== 200) throw new Error(`${email} already has a user and the password given does not sign in to it (${login.status})`);
  return login.body.token;
}

/** Scale through the local Checkout page, as a person would; waits for Stripe's webhook to land. */
async function upgrade(auth: Record<string, string>): Promise<void> {
  const checkout = must(await call('POST', '/billing/checkout', { plan: 'SCALE' }, auth), 'checkout');
  const page = await (await fetch(checkout.url)).text();
  const action = /<form method="post" action="([^"]+)">/.exec(page)?.[1];
  if (!action) throw new Error('the local checkout page has no form');
  await fetch(new URL(action.replaceAll('&amp;', '&'), checkout.url), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
  for (let i = 0; i < 50; i++) {
    if (must(await call('GET', '/billing/status', undefined, auth), 'billing status').plan === 'SCALE') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the upgrade to Scale did not land within 5 s');
}

/**
 * Seeds the stack at `apiUrl` (`http://localhost:3000/api`): a new demo account, or the account of `EMAIL` when that
 * address already has a user (signed in with `PASSWORD`; it must be an admin).
 */
export async function seedDemo(
  apiUrl: string,
  EMAIL = `demo-${Date.now().toString(36)}@example.com`,
  PASSWORD = 'Demo-pass-2026',
  adminApis?: AdminApis,
): Promise<Demo> {
  API = apiUrl.replace(/\/+$/, '');
  const health = await fetch(`${API}/health`).catch(() => undefined);
  if (health?.status !== 200) throw new Error(`no stack answers at ${API}: start it with \`npm start\` first`);

  const auth = { authorization: `Bearer ${await signIn(EMAIL, PASSWORD)}` };
  const me = must(await call('GET', '/auth/me', undefined, auth), 'me');
  if (me.user?.role !== 'admin') throw new Error(`${EMAIL} is a ${me.user?.role} of its account: seeding needs an admin`);
  // A dozen keys is past FREE's five, and the stand-ins' organizations since the first of last month (OpenAI's alone
  // well over a million requests) are past Growth's tracked requests: Scale, so the connections import everything.
  // An account that already pays for a plan keeps it.
  if (must(await call('GET', '/billing/status', undefined, auth), 'billing status').plan === 'FREE') await upgrade(auth);

  const ingestKey = must(await call('POST', '/ingest-keys', { name: 'Demo proxy' }, auth), 'ingest key');
  // Budgets and rules first, so the month's events raise their alerts.
  must(await call('POST', '/budgets', { name: 'Company', monthlyLimit: 700, alertThreshold: 80, scope: 'ACCOUNT' }, auth), 'budget');
  must(await call('POST', '/alert-rules', { type: 'new_key', name: 'New keys', channels: ['email'], config: {} }, auth), 'rule');
  must(await call('POST', '/alert-rules', { type: 'cost_threshold', name: 'Daily over $60', channels: ['email'], config: { threshold: 60, period: 'daily' } }, auth), 'rule');
  // Own prices: a negotiated rate and a fine-tune (the seeded events carry their costUsd, which they keep).
  must(await call('PUT', '/prices/openai/gpt-4o', { input: 2.25, cachedInput: 1.125, output: 9 }, auth), 'price');
  must(await call('PUT', '/prices/openai/ft-support-bot', { input: 3.75, cachedInput: 1.875, output: 15 }, auth), 'price');

  const hashes = KEYS.map((k) => createHash('sha256').update(`demo-${k.label}`).digest('hex'));
  const now = Date.now();
  const events = demoProxyEvents(DAYS, now);
  let accepted = 0;
  for (let i = 0; i < events.length; i += 1000) {
    const res = must(await call('POST', '/ingest', { events: events.slice(i, i + 1000) }, { 'x-api-key': ingestKey.key }), 'ingest');
    accepted += res.accepted;
  }
  // Labels, and a budget per busy key.
  for (const [k, key] of KEYS.entries()) {
    must(await call('PATCH', `/keys/${hashes[k]}`, { label: key.label }, auth), 'label');
  }
  must(await call('POST', '/budgets', { name: 'Support bot', monthlyLimit: 120, alertThreshold: 75, scope: 'KEY', keyHash: hashes[0] }, auth), 'budget');
  must(await call('POST', '/budgets', { name: 'Eval harness', monthlyLimit: 40, alertThreshold: 90, scope: 'KEY', keyHash: hashes[6] }, auth), 'budget');
  // One more small batch: the new budgets see the month's spend and raise their alerts.
  must(
    await call('POST', '/ingest', { events: [{ requestId: `demo-final-${now}`, keyHash: hashes[6], provider: 'xai', model: 'grok-4', inputTokens: 100, outputTokens: 10, costUsd: 0.01 }, { requestId: `demo-final2-${now}`, keyHash: hashes[0], provider: 'google', model: 'gemini-2.5-pro', inputTokens: 100, outputTokens: 10, costUsd: 0.01 }] }, { 'x-api-key': ingestKey.key }),
    'ingest',
  );
  // Last, the two organizations: every key of each, found and measured by the connection's first sync.
  const connections = adminApis ? await connectProviders(auth, adminApis) : [];
  const alerts = must(await call('GET', '/alerts?limit=100', undefined, auth), 'alerts');

  return { email: EMAIL, password: PASSWORD, events: accepted, alerts: alerts.items.length, keyHashes: hashes, connections };
}

const PROVIDERS = ['openai', 'anthropic'] as const;

/**
 * Connects the stand-ins of both providers' admin APIs with the admin key given, else the one each accepts now (its
 * control API's state: a key rotated since `npm start` printed it still works), or finds the account's connection when it has
 * one already (seeding the same account again); then waits for each first sync (the stack runs it at once).
 */
async function connectProviders(auth: Record<string, string>, adminApis: AdminApis): Promise<Demo['connections']> {
  const made: Demo['connections'] = [];
  for (const provider of PROVIDERS) {
    const standIn = provider === 'openai' ? adminApis.openaiAdmin : adminApis.anthropicAdmin;
    const adminKey = standIn.adminKey ?? ((await (await fetch(`${standIn.url.replace(/\/+$/, '')}/_burnrate/state`)).json()) as { adminKey: string }).adminKey;
    const created = await call('POST', '/connections', { provider, adminKey }, auth);
    const id: string =
      created.status === 409
        ? must(await call('GET', '/connections', undefined, auth), 'connections').items.find((c: { provider: string }) => c.provider === provider).id
        : must(created, `connect ${provider}`).id;
    made.push({ id, provider, keys: 0 });
  }
  for (const connection of made) {
    for (let i = 0; ; i++) {
      const c = must(await call('GET', `/connections/${connection.id}`, undefined, auth), 'connection');
      if (c.lastSuccessAt) break;
      if (c.status === 'error') throw new Error(`the ${connection.provider} connection failed: ${c.statusDetail}`);
      if (i >= 300) throw new Error(`the first sync of the ${connection.provider} connection did not finish within 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
    connection.keys = must(await call('GET', `/keys?source=connection&provider=${connection.provider}&limit=1`, undefined, auth), 'keys').total;
  }
  return made;
}

/** The admin API stand-ins of the stack running on `DATA_DIR` (default .data), from its local-stack.json; none: undefined. */
async function runningStandIns(): Promise<AdminApis | undefined> {
  const file = join(resolve(process.env.DATA_DIR || '.data'), 'local-stack.json');
  const info = JSON.parse(await readFile(file, 'utf8').catch(() => 'null')) as Partial<AdminApis> | null;
  return info?.openaiAdmin && info.anthropicAdmin ? { openaiAdmin: info.openaiAdmin, anthropicAdmin: info.anthropicAdmin } : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const api = process.env.API_URL ?? 'http://localhost:3000/api';
  runningStandIns()
    .then((standIns) => {
      if (!standIns) console.warn(`No local-stack.json under ${process.env.DATA_DIR || '.data'}: the demo connects no provider (set DATA_DIR to the stack's data folder).`);
      return seedDemo(api, process.env.DEMO_EMAIL, process.env.DEMO_PASSWORD, standIns);
    })
    .then(
      (demo) => {
        console.log(`Seeded ${demo.events} events over ${KEYS.length} keys and ${DAYS} days, ${demo.alerts} alerts.`);
        for (const c of demo.connections) console.log(`Connected the local ${c.provider === 'openai' ? 'OpenAI' : 'Anthropic'} stand-in: ${c.keys} keys found.`);
        console.log(`Open ${api.replace(/\/api\/?$/, '')}/ and sign in as ${demo.email} with the password ${demo.password}`);
      },
      (error: unknown) => {
        console.error(`demo:seed failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
}
