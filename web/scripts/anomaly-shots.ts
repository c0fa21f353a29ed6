/**
 * The spend-anomaly screens, for `npm run screenshots` (and alone: `tsx web/scripts/anomaly-shots.ts`, a fresh stack
 * of its own): a reporter key with two usual weeks that suddenly spends $60 in an hour, caught and blocked by a stopping
 * rule; its alert's incident view (light, dark, 360 px) and the rule form with the spend-anomaly type chosen.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../test/browser/chromium.ts';
import { startStackProcess } from '../../test/integration/global-setup.ts';

const OUT = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/** A runaway key caught by a stopping rule, in the account of `token`; returns the alert's id. */
export async function anomalyIncident(api: string, token: string): Promise<string> {
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
  // Two usual weeks: about $1.20 an hour, in calls through the day.
  const history = Array.from({ length: 14 * 12 }, (_, i) => event(`h${i}`, 2.4, midnight - Math.floor(i / 12 + 1) * 86_400_000 + (i % 12) * 7_200_000 + 1_800_000));
  await call('POST', '/ingest', { events: history }, { 'x-api-key': ingestKey });
  await call('PATCH', `/keys/${hash}`, { label: 'Research agent' });
  await call('POST', '/alert-rules', { type: 'spend_anomaly', name: 'Runaway keys', channels: ['email'], config: { minUsdPerHour: 20, multiplier: 10, action: 'stop' } });
  const now = Date.now();
  for (let i = 0; i < 4; i++) await call('POST', '/ingest', { events: [event(`r${i}`, 15, now - (3 - i) * 60_000)] }, { 'x-api-key': ingestKey });
  const alerts = await call('GET', '/alerts?type=spend_anomaly');
  return alerts.items[0].id as string;
}

export async function shootAnomaly(origin: string, page: Page, alertId: string, shoot: (name: string) => Promise<void>): Promise<void> {
  await page.goto(`${origin}/alerts/${alertId}`);
  try {
    await page.getByTestId('incident').getByRole('button', { name: 'Release the key' }).waitFor({ timeout: 10_000 });
  } catch (e) {
    await page.screenshot({ path: '/tmp/anomaly-debug.png', fullPage: true });
    throw e;
  }
  await shoot('alert-anomaly-incident');
  await page.setViewportSize({ width: 360, height: 780 });
  await page.goto(`${origin}/alerts/${alertId}`);
  await page.getByTestId('incident').getByRole('button', { name: 'Release the key' }).waitFor();
  await shoot('alert-anomaly-incident-360');
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(`${origin}/alert-rules`);
  await page.locator('h1').waitFor();
  await page.getByLabel('Type').selectOption('spend_anomaly');
  await page.getByTestId('anomaly-words').waitFor();
  await shoot('alert-rule-anomaly-form');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const stack = await startStackProcess(undefined, { RATE_LIMITS: 'off' });
  try {
    const api = stack.info.apiUrl;
    const origin = api.replace(/\/api$/, '');
    const email = `anomaly-${Date.now()}@example.com`;
    const password = 'Demo-pass-2026';
    const reg = (await (await fetch(`${api}/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password, firstName: 'Dana', lastName: 'Demo', companyName: 'Demo Robotics' }) })).json()) as { token: string };
    const alertId = await anomalyIncident(api, reg.token as string);
    await mkdir(OUT, { recursive: true });
    for (const scheme of ['light', 'dark'] as const) {
      const browser = await launchChromium({ colorScheme: scheme, width: 1366 });
      const page: Page = browser.context.pages()[0] ?? (await browser.context.newPage());
      const shoot = async (name: string) => {
        await page.waitForTimeout(300);
        await page.screenshot({ path: `${OUT}${name}-${scheme}.png`, fullPage: true });
      };
      await page.goto(`${origin}/sign-in`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
      await shootAnomaly(origin, page, alertId, shoot);
      await browser.close();
    }
    console.log(`Screenshots in ${OUT}`);
  } finally {
    await stack.stop();
    await rm(stack.dataDir, { recursive: true, force: true });
  }
}
