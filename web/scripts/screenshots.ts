/**
 * `npm run screenshots`: a fresh local stack on free ports, the demo month seeded through the API
 * (local/demo-seed.ts), then a PNG of every screen in light and dark into docs/screenshots/ (Chromium via
 * playwright-core, as the browser tests).
 *
 * `SCREENSHOT_KEYS=1000 npm run screenshots` also shoots Overview, Keys (wide and 360 px) and Budgets of a SCALE
 * account with that many keys × 10 models × 7 days, loaded with ingestion's own item builders (bench/spend-lib.ts),
 * as `*-1000-keys-light.png`.
 */
import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { seedDemo } from '#local/demo-seed.ts';
import { launchChromium } from '../../test/browser/chromium.ts';
import { startStackProcess } from '../../test/integration/global-setup.ts';

const OUT = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

const stack = await startStackProcess(undefined, { RATE_LIMITS: 'off' });
try {
  const api = stack.info.apiUrl;
  const origin = api.replace(/\/api$/, '');
  const demo = await seedDemo(api, undefined, undefined, stack.info);
  await mkdir(OUT, { recursive: true });
  const screens: [string, string][] = [
    ['overview', '/'],
    ['keys', '/keys'],
    ['key', `/keys/${demo.keyHashes[0]}`],
    ['keys-connections', '/keys?source=connection'],
    ['connections', '/connections'],
    ...demo.connections.map((c) => [`reconciliation-${c.provider}`, `/connections/${c.id}`] as [string, string]),
    ['budgets', '/budgets'],
    ['alert-rules', '/alert-rules'],
    ['alerts', '/alerts'],
    ['ingest-keys', '/ingest-keys'],
    ['prices', '/prices'],
    ['team', '/team'],
    ['billing', '/billing'],
    ['settings', '/settings'],
  ];
  for (const scheme of ['light', 'dark'] as const) {
    const browser = await launchChromium({ colorScheme: scheme, width: 1200 });
    const page: Page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const shoot = async (name: string) => {
      await page.waitForFunction(() => !(globalThis as any).document.querySelector('[role="status"][aria-live]'));
      await page.waitForTimeout(300);
      await page.screenshot({ path: `${OUT}${name}-${scheme}.png`, fullPage: true });
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
    // The phone: the overview, the keys, the prices, the connections and a reconciliation at 360 px.
    await page.setViewportSize({ width: 360, height: 780 });
    const phone: [string, string][] = [['overview', '/'], ['keys', '/keys'], ['prices', '/prices'], ['connections', '/connections']];
    if (demo.connections[0]) phone.push(['reconciliation-openai', `/connections/${demo.connections[0].id}`]);
    for (const [name, path] of phone) {
      await page.goto(`${origin}${path}`);
      await page.locator('h1').waitFor();
      await shoot(`${name}-360`);
    }
    await browser.close();
  }
  const scaleKeys = Number(process.env.SCREENSHOT_KEYS ?? 0);
  if (scaleKeys > 0) await shootScale(stack.info, origin, scaleKeys);
  console.log(`Screenshots in ${OUT}`);
} finally {
  await stack.stop();
  await rm(stack.dataDir, { recursive: true, force: true });
}

/** An account with `n` keys, shot in light at 1200 and 360 px. */
async function shootScale(info: typeof stack.info, origin: string, n: number): Promise<void> {
  Object.assign(process.env, {
    TABLE_NAME: info.tableName,
    AWS_REGION: info.region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: info.dynamodbEndpoint,
  });
  const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, tableName } = await import('#shared/db/client.ts');
  const { keys } = await import('#shared/db/keys.ts');
  const { loadAggregates } = await import('../../bench/spend-lib.ts');
  const email = `scale-${Date.now()}@example.com`;
  const password = 'Scale1password';
  const res = await fetch(`${info.apiUrl}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, firstName: 'Sam', lastName: 'Scale', companyName: 'Scale Co' }),
  });
  const user = (await res.json()) as { accountId: string; token: string };
  await db().send(new UpdateCommand({ TableName: tableName(), Key: keys.account(user.accountId), UpdateExpression: 'SET #p = :p', ExpressionAttributeNames: { '#p': 'plan' }, ExpressionAttributeValues: { ':p': 'SCALE' } }));
  const loaded = await loadAggregates(user.accountId, { keys: n, models: 10, days: 7 }, { rowDays: 0, concurrency: 4 });
  for (const k of [0, 1, 2, 737]) {
    if (!loaded.keyHashes[k]) continue;
    await fetch(`${info.apiUrl}/keys/${loaded.keyHashes[k]}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ label: k === 737 ? 'Payments worker 737' : `Service ${k}` }),
    });
  }
  const browser = await launchChromium({ colorScheme: 'light', width: 1200 });
  const page: Page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const shoot = async (name: string) => {
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('[role="status"][aria-live]'));
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${OUT}${name}-${n}-keys-light.png`, fullPage: true });
  };
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  for (const [name, path] of [['overview', '/'], ['overview-by-provider', '/?view=provider'], ['keys', '/keys'], ['keys-search', '/keys?q=737']] as const) {
    await page.goto(`${origin}${path}`);
    await page.locator('h1').waitFor();
    await shoot(name);
  }
  await page.setViewportSize({ width: 360, height: 780 });
  await page.goto(`${origin}/keys`);
  await page.locator('h1').waitFor();
  await shoot('keys-360');
  await browser.close();
}
