/**
 * `npm run screenshots`: a fresh local stack on free ports, the demo month seeded through the API
 * (local/demo-seed.ts), then a PNG of every screen in light and dark into docs/screenshots/ (Chromium via
 * playwright-core, as the browser tests).
 *
 * `SCREENSHOT_KEYS=1000 npm run screenshots` also shoots Overview, Keys (wide and 360 px; three of its busiest keys
 * stopped by KEY stop budgets) and Budgets (its form's key picker) of a SCALE
 * account with that many keys × 10 models × 7 days, loaded with ingestion's own item builders (bench/spend-lib.ts),
 * as `*-1000-keys-light.png`.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { seedDemo } from '#local/demo-seed.ts';
import { scaleAccount } from '../../bench/scale-account.ts';
import { launchChromium } from '../../test/browser/chromium.ts';
import { startStackProcess } from '../../test/integration/global-setup.ts';

const OUT = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

const stack = await startStackProcess(undefined, { RATE_LIMITS: 'off' });
try {
  const api = stack.info.apiUrl;
  const origin = api.replace(/\/api$/, '');
  const demo = await seedDemo(api, undefined, undefined, stack.info);
  const incomplete = await freeAccountPastItsLimits(api, stack.info.openaiAdmin.url);
  await mkdir(OUT, { recursive: true });
  // A key of the Anthropic connection (its page says requests are n/a), read with the demo user's session.
  const login = (await (await fetch(`${api}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: demo.email, password: demo.password }) })).json()) as { token: string };
  const anthropicKeys = (await (await fetch(`${api}/keys?source=connection&provider=anthropic&limit=1`, { headers: { authorization: `Bearer ${login.token}` } })).json()) as { items: { hash: string }[] };
  const stop = await stopBudgets(api, login.token);
  const anomaly = await anomalyAccount(api);
  const screens: [string, string][] = [
    ['overview', '/'],
    ['keys', '/keys'],
    ['key', `/keys/${demo.keyHashes[0]}`],
    ['keys-connections', '/keys?source=connection'],
    ['connections', '/connections'],
    ...(anthropicKeys.items[0] ? [['key-anthropic-connection', `/keys/${anthropicKeys.items[0].hash}`] as [string, string]] : []),
    ...demo.connections.map((c) => [`reconciliation-${c.provider}`, `/connections/${c.id}`] as [string, string]),
    ['budgets', '/budgets'],
    ['alert-rules', '/alert-rules'],
    ['alerts', '/alerts'],
    ['sending-keys', '/ingest-keys'],
    ['prices', '/prices'],
    ['team', '/team'],
    ['billing', '/billing'],
    ['settings', '/settings'],
  ];
  for (const scheme of ['light', 'dark'] as const) {
    const browser = await launchChromium({ colorScheme: scheme, width: 1366 });
    const page: Page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const shoot = async (name: string, on: Page = page) => {
      await on.waitForFunction(() => !(globalThis as any).document.querySelector('[role="status"][aria-live]'));
      await on.waitForTimeout(300);
      await on.screenshot({ path: `${OUT}${name}-${scheme}.png`, fullPage: true });
    };
    await page.goto(`${origin}/sign-in`);
    await shoot('sign-in');
    await page.goto(`${origin}/sign-up`);
    await shoot('sign-up');
    await page.goto(`${origin}/sign-in`);
    await page.getByLabel('E-mail').fill(demo.email);
    await page.getByLabel('Password').fill(demo.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    for (const [name, path] of screens) {
      await page.goto(`${origin}${path}`);
      await page.locator('h1').waitFor();
      await shoot(name);
    }
    // The phone: the overview, the keys, a key, the alerts, the prices, the connections and a reconciliation at 360 px.
    await page.setViewportSize({ width: 360, height: 780 });
    const phone: [string, string][] = [
      ['overview', '/'],
      ['keys', '/keys'],
      ['key', `/keys/${demo.keyHashes[0]}`],
      ['alerts', '/alerts'],
      ['prices', '/prices'],
      ['connections', '/connections'],
    ];
    for (const c of demo.connections) phone.push([`reconciliation-${c.provider}`, `/connections/${c.id}`]);
    for (const [name, path] of phone) {
      await page.goto(`${origin}${path}`);
      await page.locator('h1').waitFor();
      await shoot(`${name}-360`);
    }
    await page.setViewportSize({ width: 1366, height: 900 });
    await shootStopBudgets(page, origin, stop, shoot);
    await shootStoppedKeysAndActions(page, origin, api, login.token, shoot);
    await shootGetStarted(api, origin, await browser.another(), shoot);
    await shootIncomplete(origin, incomplete, await browser.another(), shoot);
    await shootAnomaly(origin, anomaly, await browser.another(), shoot);
    await browser.close();
  }
  await shootNewcomer(api, origin);
  const scaleKeys = Number(process.env.SCREENSHOT_KEYS ?? 0);
  if (scaleKeys > 0) await shootScale(stack.info, origin, scaleKeys);
  console.log(`Screenshots in ${OUT}`);
} finally {
  await stack.stop();
  await rm(stack.dataDir, { recursive: true, force: true });
}

/**
 * Budgets that stop spend, set up through the API as an admin would: the OpenAI connection lets budgets act, and a
 * PROJECT stop budget below what its project spent is stopped by the sync its save queues (OpenAI's hard limit,
 * enforced at once). Returns the stopped budget and another project, whose form the Projects screen's link opens.
 */
async function stopBudgets(api: string, token: string): Promise<{ title: string; formPath: string }> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res.status === 204 ? undefined : ((await res.json()) as any);
  };
  const openai = ((await call('GET', '/connections')).items as { id: string; provider: string }[]).find((c) => c.provider === 'openai');
  if (!openai) throw new Error('the demo has no OpenAI connection');
  await call('PATCH', `/connections/${openai.id}`, { enforcement: 'on' });
  const projects = ((await call('GET', '/spend?groupBy=project')).groups as { provider: string; project: { id: string; name: string } | null; costUsd: string }[])
    .filter((g) => g.provider === 'openai' && g.project)
    .map((g) => ({ ...g.project!, spent: Number(g.costUsd) }));
  if (projects.length < 2) throw new Error('the demo has fewer than two OpenAI projects with spend');
  const [stopped, other] = projects as [(typeof projects)[0], (typeof projects)[0]];
  const title = `${stopped.name} (OpenAI)`;
  // A limit a little below what the project spent: the sync its save queues sets it, and OpenAI enforces it at once.
  const monthlyLimit = Math.max(1, Math.floor(stopped.spent * 0.9));
  const created = await call('POST', '/budgets', { name: title, monthlyLimit, alertThreshold: 80, scope: 'PROJECT', connectionId: openai.id, projectId: stopped.id, action: 'stop' });
  for (let i = 0; ; i++) {
    const b = ((await call('GET', '/budgets')).items as { id: string; enforcement: { status: string } | null }[]).find((x) => x.id === created.id);
    if (b?.enforcement?.status === 'stopped') break;
    if (i === 120) throw new Error(`the stop budget did not stop: ${JSON.stringify(b?.enforcement)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const query = new URLSearchParams({ scope: 'PROJECT', projectId: other.id, connectionId: openai.id, name: `${other.name} (OpenAI)` });
  return { title, formPath: `/budgets?${query}` };
}

/** The stop budget's card (stopped, its release button), its actions list, and the new-budget form with "Stop spend" chosen, at 1366 and 360 px. */
async function shootStopBudgets(page: Page, origin: string, stop: { title: string; formPath: string }, shoot: (name: string, on?: Page) => Promise<void>): Promise<void> {
  for (const width of [1366, 360]) {
    await page.setViewportSize({ width, height: width === 360 ? 780 : 900 });
    const tail = width === 360 ? '-360' : '';
    await page.goto(`${origin}/budgets`);
    const card = page.getByRole('list', { name: 'Budgets' }).getByRole('listitem').filter({ has: page.getByRole('heading', { name: stop.title }) });
    await card.getByRole('button', { name: `Release budget ${stop.title} for this month` }).waitFor();
    await card.getByText('Actions', { exact: true }).click();
    await card.getByRole('list', { name: 'Actions of this budget' }).getByRole('listitem').first().waitFor();
    await card.scrollIntoViewIfNeeded();
    await shoot(`budgets-stopped${tail}`);
    await page.goto(`${origin}${stop.formPath}`);
    await page.getByLabel('Stop spend at the limit').check();
    await page.getByLabel('Stop spend at the limit').scrollIntoViewIfNeeded();
    await shoot(`budgets-stop-form${tail}`);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

/**
 * The spend-anomaly screens, in an account of their own: a reporter key with two usual weeks (about $1.20 an hour)
 * that suddenly spends $60 in a few minutes, caught and blocked by a stopping rule (10×, $20 an hour). Returns how to
 * sign in and the alert's id.
 */
async function anomalyAccount(api: string): Promise<{ email: string; password: string; alertId: string }> {
  const email = `anomaly-${Date.now()}@demo.burnrate.local`;
  const password = 'Anomaly-demo-2026';
  const reg = await fetch(`${api}/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password, firstName: 'Dana', lastName: 'Demo', companyName: 'Demo Robotics' }) });
  const { token } = (await reg.json()) as { token: string };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${token}` }) => {
    const res = await fetch(`${api}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const ingestKey = (await call('POST', '/ingest-keys', { name: 'Agents' })).key as string;
  const hash = createHash('sha256').update('demo-Research agent').digest('hex');
  const midnight = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const event = (i: string, costUsd: number, at: number) => ({ requestId: `agent-${i}`, keyHash: hash, keyHint: 'a9Xk', provider: 'mistral', model: 'mistral-large', inputTokens: 4000, outputTokens: 800, costUsd, timestamp: new Date(at).toISOString() });
  // Two usual weeks, in calls through the day; then today's usual hours up to two hours ago.
  const history = Array.from({ length: 14 * 12 }, (_, i) => event(`h${i}`, 2.4, midnight - Math.floor(i / 12 + 1) * 86_400_000 + (i % 12) * 7_200_000 + 1_800_000));
  const now = Date.now();
  const today = Array.from({ length: Math.max(0, Math.floor((now - midnight) / 3_600_000) - 2) }, (_, i) => event(`t${i}`, 1 + (i % 3) * 0.2, midnight + i * 3_600_000 + 1_200_000));
  await call('POST', '/ingest', { events: [...history, ...today] }, { 'x-api-key': ingestKey });
  await call('PATCH', `/keys/${hash}`, { label: 'Research agent' });
  await call('POST', '/alert-rules', { type: 'spend_anomaly', name: 'Runaway keys', channels: ['email'], config: { minUsdPerHour: 20, multiplier: 10, action: 'stop' } });
  for (let i = 0; i < 4; i++) await call('POST', '/ingest', { events: [event(`r${i}`, 15, now - (3 - i) * 60_000)] }, { 'x-api-key': ingestKey });
  const alerts = await call('GET', '/alerts?type=spend_anomaly');
  if (!alerts.items[0]) throw new Error('the runaway key raised no spend_anomaly alert');
  return { email, password, alertId: alerts.items[0].id as string };
}

/** The incident of the spend_anomaly alert (its chart, "Release the key"), at 1366 and 360 px, and the rule form with the type chosen. */
async function shootAnomaly(origin: string, who: { email: string; password: string; alertId: string }, context: Awaited<ReturnType<typeof launchChromium>>['context'], shoot: (name: string, on: Page) => Promise<void>): Promise<void> {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
  for (const width of [1366, 360]) {
    await page.setViewportSize({ width, height: width === 360 ? 780 : 900 });
    await page.goto(`${origin}/alerts/${who.alertId}`);
    const incident = page.getByTestId('incident');
    await incident.getByRole('button', { name: 'Release the key' }).waitFor();
    await incident.scrollIntoViewIfNeeded();
    await shoot(width === 360 ? 'alert-anomaly-incident-360' : 'alert-anomaly-incident', page);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(`${origin}/alert-rules`);
  await page.locator('h1').waitFor();
  await page.getByLabel('Type').selectOption('spend_anomaly');
  await page.getByTestId('anomaly-words').waitFor();
  await shoot('alert-rule-anomaly-form', page);
  await page.close();
}

/**
 * Get started as a newcomer sees it, in another browser: signed up in the dashboard (which lands there), waiting
 * (before and after one click made a sending key, also at 360 px), and green once an event of a made-up key arrived.
 */
async function shootGetStarted(api: string, origin: string, context: Awaited<ReturnType<typeof launchChromium>>['context'], shoot: (name: string, on: Page) => Promise<void>): Promise<void> {
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${origin}/sign-up`);
  await page.getByLabel('Company').fill('Newco');
  await page.getByLabel('First name').fill('Nia');
  await page.getByLabel('Last name').fill('Newcomer');
  await page.getByLabel('E-mail').fill(`newcomer-${Date.now().toString(36)}@example.com`);
  await page.getByLabel('Password').fill('Newcomer-pass-2026');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Get started' }).waitFor();
  await shoot('get-started', page);
  await page.getByRole('button', { name: 'Create a sending key' }).click();
  const secret = (await page.getByTestId('ingest-secret').textContent())!.trim();
  await shoot('get-started-key', page);
  await page.setViewportSize({ width: 360, height: 780 });
  await shoot('get-started-key-360', page);
  await page.setViewportSize({ width: 1366, height: 900 });
  const keyHash = createHash('sha256').update('sk-proj-screenshot-made-up-key-x7Qa').digest('hex');
  const event = { requestId: `shot-${Date.now()}`, keyHash, keyHint: 'x7Qa', provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1200, outputTokens: 300 };
  const res = await fetch(`${api}/ingest`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': secret }, body: JSON.stringify({ events: [event] }) });
  if (res.status !== 200) throw new Error(`ingest answered ${res.status}`);
  await page.getByText('First event received').waitFor();
  await shoot('get-started-received', page);
  await page.setViewportSize({ width: 360, height: 780 });
  await shoot('get-started-received-360', page);
}

/**
 * A FREE account that connected a copy of the seeded OpenAI organization, which has more keys and requests than the
 * plan tracks: its first sync done, the Overview's figures are partial and say so (coverage notes).
 */
async function freeAccountPastItsLimits(api: string, openaiAdminUrl: string): Promise<{ email: string; password: string }> {
  const email = 'free-plan@demo.burnrate.local';
  const password = 'Free-plan-demo-1';
  const post = async (path: string, body: unknown, token?: string) =>
    fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
  const { token } = (await (await post('/auth/register', { email, password, firstName: 'Fay', lastName: 'Free', companyName: 'Free Plan Labs' })).json()) as { token: string };
  const org = (await (await fetch(`${openaiAdminUrl.replace(/\/+$/, '')}/_burnrate/orgs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { adminKey: string };
  const created = await post('/connections', { provider: 'openai', adminKey: org.adminKey }, token);
  if (created.status !== 201) throw new Error(`connect the FREE account: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  for (let i = 0; ; i++) {
    const c = (await (await fetch(`${api}/connections/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { lastSuccessAt?: string | null; status: string };
    if (c.lastSuccessAt) break;
    if (i >= 300) throw new Error(`the FREE account's first sync did not finish within 60 s (${c.status})`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { email, password };
}

/** The incomplete Overview of the FREE account, at 1366 and 360 px. */
async function shootIncomplete(origin: string, who: { email: string; password: string }, context: Awaited<ReturnType<typeof launchChromium>>['context'], shoot: (name: string, on: Page) => Promise<void>): Promise<void> {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await shoot('overview-incomplete', page);
  await page.setViewportSize({ width: 360, height: 780 });
  await shoot('overview-incomplete-360', page);
  await page.close();
}

/** A new account, in light: the empty Overview (connections offered first), Connections with its form (also at 360 px) and the empty Actions screen. */
async function shootNewcomer(api: string, origin: string): Promise<void> {
  const res = await fetch(`${api}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `new-${Date.now()}@example.com`, password: 'Newcomer1pass', firstName: 'Nia', lastName: 'New', companyName: 'Fresh Co' }),
  });
  const { refreshToken } = (await res.json()) as { refreshToken: string };
  const browser = await launchChromium({ colorScheme: 'light', width: 1366 });
  const page: Page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(`${origin}/sign-in`);
  await page.evaluate((token) => (globalThis as any).sessionStorage.setItem('burnrate.refreshToken', token), refreshToken);
  await shootAll(page, origin, [['overview-empty', '/'], ['connections-new', '/connections'], ['actions-empty', '/actions']], [['connections-new-360', '/connections']], (name) => `${name}-light`);
  await browser.close();
}

/** An account with `n` keys, shot in light at 1366 and 360 px. */
async function shootScale(info: typeof stack.info, origin: string, n: number): Promise<void> {
  const { email, password } = await scaleAccount(info, { keys: n, days: 7 });
  await stopSomeKeys(info.apiUrl, email, password);
  const browser = await launchChromium({ colorScheme: 'light', width: 1366 });
  const page: Page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  const wide: [string, string][] = [['overview', '/'], ['overview-by-provider', '/?view=provider'], ['keys', '/keys'], ['keys-search', '/keys?q=737'], ['budgets', '/budgets?scope=KEY']];
  await shootAll(page, origin, wide, [['keys-360', '/keys']], (name) => `${name}-${n}-keys-light`);
  await browser.close();
}

/** Each screen at the page's width, then each of `phone` at 360 px: full-page PNGs named by `file(name)`. */
async function shootAll(page: Page, origin: string, wide: [string, string][], phone: [string, string][], file: (name: string) => string): Promise<void> {
  for (const [list, width] of [[wide, 0], [phone, 360]] as const) {
    if (width) await page.setViewportSize({ width, height: 780 });
    for (const [name, path] of list) {
      await page.goto(`${origin}${path}`);
      await page.locator('h1').waitFor();
      await page.waitForFunction(() => !(globalThis as any).document.querySelector('[role="status"][aria-live]'));
      await page.waitForTimeout(300);
      await page.screenshot({ path: `${OUT}${file(name)}.png`, fullPage: true });
    }
  }
}

/**
 * What is stopped, where people look (the stop budget of `stopBudgets` holds its project's keys): Keys with the stopped
 * rows, the page of a stopped key, and the Actions screen, at 1366 and 360 px.
 */
async function shootStoppedKeysAndActions(page: Page, origin: string, api: string, token: string, shoot: (name: string, on?: Page) => Promise<void>): Promise<void> {
  const keys = (await (await fetch(`${api}/keys?provider=openai&source=connection&limit=100`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: { hash: string; stoppedBy: unknown[] }[] };
  const stopped = keys.items.find((k) => k.stoppedBy.length > 0);
  if (!stopped) throw new Error('no key of the stopped project says it is stopped');
  for (const width of [1366, 360]) {
    await page.setViewportSize({ width, height: width === 360 ? 780 : 900 });
    const tail = width === 360 ? '-360' : '';
    await page.goto(`${origin}/keys?provider=openai&source=connection&sort=name`);
    await page.getByTestId('stopped-by').first().waitFor();
    await shoot(`keys-stopped${tail}`);
    await page.goto(`${origin}/keys/${stopped.hash}`);
    await page.getByTestId('key-stopped').waitFor();
    await shoot(`key-stopped${tail}`);
    await page.goto(`${origin}/actions`);
    await page.getByRole('list', { name: 'Actions' }).getByRole('listitem').first().waitFor();
    await shoot(`actions${tail}`);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

/** Three of the busiest keys of the scale account stopped by KEY stop budgets (the reporter refuses them), as a person would set them. */
async function stopSomeKeys(api: string, email: string, password: string): Promise<void> {
  const { token } = (await (await fetch(`${api}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })).json()) as { token: string };
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const top = (await (await fetch(`${api}/keys?limit=6`, { headers: auth })).json()) as { items: { hash: string }[] };
  for (const [i, k] of top.items.filter((_, i) => i % 2 === 0).entries()) {
    const res = await fetch(`${api}/budgets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `Key cap ${i + 1}`, monthlyLimit: 1, alertThreshold: 80, scope: 'KEY', keyHash: k.hash, action: 'stop' }) });
    if (res.status !== 201) throw new Error(`a stop budget on a key answered ${res.status}: ${await res.text()}`);
  }
}
