/**
 * The dashboard at scale (issue 18), in Chromium against the real local stack: a SCALE account of 1,000 keys (990
 * loaded with ingestion's own item builders as bench:spend does, 10 discovered through /ingest, each raising an
 * alert of each of 15 new_key rules: 150 alerts). The Overview's figures equal GET /spend's sums; key #737 is found among 1,000 by part of its label
 * and by the start of its hash; a budget is set on it through the key picker; 150 alerts are acknowledged in bulk.
 */
import { randomBytes, createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoDate } from '#shared/time/periods.ts';
import { loadAggregates } from '../../bench/spend-lib.ts';
import { money } from '../../web/src/ui/format.ts';
import { launchChromium, type LaunchedBrowser } from '../browser/chromium.ts';
import { api, pointAtStack, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';

declare const sessionStorage: { setItem(key: string, value: string): void };

const LOADED_KEYS = 990;
const DISCOVERED_KEYS = 10;
const RULES = 15;
const ALERTS = RULES * DISCOVERED_KEYS;
const origin = () => stack().apiUrl.replace(/\/api$/, '');

let browser: LaunchedBrowser;
let restore: () => void;
let user: RegisteredUser;
let key737: string;

async function ok<T = any>(path: string, options: Parameters<typeof api>[1] = {}): Promise<T> {
  const res = await api<T>(path, { token: user.token, ...options });
  if (res.status >= 300) throw new Error(`${options.method ?? 'GET'} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

beforeAll(async () => {
  restore = pointAtStack();
  [browser, user] = await Promise.all([launchChromium({ width: 1280 }), registerUser({ companyName: 'Scale Co' })]);
  await setPlan(user.accountId, 'SCALE');
  const loaded = await loadAggregates(user.accountId, { keys: LOADED_KEYS, models: 10, days: 2 }, { rowDays: 0, concurrency: 8 });
  key737 = loaded.keyHashes[737]!;
  await ok(`/keys/${key737}`, { method: 'PATCH', body: { label: 'Payments worker 737' } });
  // 150 alerts through the product's own path: 15 new_key rules, then 10 ingests that each discover one more key
  // (each rule raises one alert per ingest that discovers keys).
  await Promise.all(Array.from({ length: RULES }, (_, i) => ok('/alert-rules', { method: 'POST', body: { type: 'new_key', name: `New keys ${i + 1}`, channels: ['email'] } })));
  const ingestKey = (await ok<{ key: string }>('/ingest-keys', { method: 'POST', body: {} })).key;
  const seed = randomBytes(4).toString('hex');
  for (let n = 0; n < DISCOVERED_KEYS; n++) {
    const keyHash = createHash('sha256').update(`sk-new-${seed}-${n}`).digest('hex');
    const res = await api('/ingest', {
      method: 'POST',
      headers: { 'x-api-key': ingestKey },
      body: { events: [{ requestId: `new-${n}`, keyHash, provider: 'openai', model: 'gpt-4o-mini', inputTokens: 10, outputTokens: 10, costUsd: 0.01 }] },
    });
    expect(res.status).toBe(200);
  }
}, 300_000);

afterAll(async () => {
  await browser?.close();
  restore?.();
});

/** Signs the browser in with the user's refresh token (the sign-in screen itself is the journey's business). */
async function signedIn(): Promise<Page> {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(`${origin()}/sign-in`);
  await page.evaluate((token) => sessionStorage.setItem('burnrate.refreshToken', token), user.refreshToken);
  return page;
}

async function heading(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

describe('the dashboard with 1,000 keys', () => {
  it('sums everything, finds any key, budgets it through the picker and acknowledges alerts in bulk', { timeout: 120_000 }, async () => {
    const page = await signedIn();
    const today = isoDate(new Date());
    const [mtd, byProvider] = await Promise.all([ok('/spend?groupBy=day'), ok('/spend?groupBy=provider')]);
    expect((await ok('/keys?limit=1')).total).toBe(LOADED_KEYS + DISCOVERED_KEYS);

    // Overview: the month to date, today and every provider equal GET /spend, in at most 4 API calls.
    const calls: string[] = [];
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith('/api/') && !/^\/api\/auth\//.test(path)) calls.push(path + new URL(r.url()).search);
    });
    await page.goto(`${origin()}/`);
    await heading(page, 'Overview');
    await expect.poll(() => page.getByTestId('range-total').textContent()).toBe(money(mtd.total.costUsd));
    const todayGroup = mtd.groups.find((g: { date: string }) => g.date === today);
    expect(await page.getByTestId('today').textContent()).toBe(money(todayGroup.costUsd));
    expect(byProvider.groups.length).toBeGreaterThanOrEqual(4);
    for (const p of byProvider.groups as { provider: string; costUsd: number }[]) {
      expect(await page.locator(`tr[data-provider="${p.provider}"] td.num`).textContent(), p.provider).toBe(money(p.costUsd));
    }
    await page.getByRole('heading', { name: 'Open alerts' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(4);
    expect(calls.filter((c) => c.startsWith('/api/keys/'))).toEqual([]);

    // Keys: 1,000 in all; #737 by part of its label, then by the start of its hash.
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await heading(page, 'Keys');
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toMatch(/^1,000 keys/);
    const search = page.getByLabel('Search keys');
    await search.fill('worker 737');
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toMatch(/^1 key match/);
    await page.getByRole('link', { name: 'Details of Payments worker 737' }).waitFor();
    await search.fill(key737.slice(0, 10));
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toMatch(/^1 key match/);
    await page.getByRole('link', { name: 'Details of Payments worker 737' }).waitFor();

    // Budgets: one on key #737, chosen through the picker's search; the budget names the key by its label.
    await page.getByRole('link', { name: 'Budgets' }).click();
    await heading(page, 'Budgets');
    await page.getByLabel('Name', { exact: true }).fill('Payments cap');
    await page.getByLabel('Monthly limit (US dollars)').fill('50');
    await page.getByLabel('Applies to').selectOption('KEY');
    await page.getByLabel('Search keys').fill('737');
    await page.getByRole('radio', { name: /Payments worker 737/ }).check();
    await page.getByRole('button', { name: 'Create budget' }).click();
    await page.getByRole('heading', { name: 'Payments cap' }).waitFor();
    await page.getByRole('link', { name: 'Payments worker 737' }).waitFor();
    const budgets = await ok('/budgets');
    expect(budgets.items).toEqual([expect.objectContaining({ name: 'Payments cap', scope: 'KEY', keyHash: key737, monthlyLimit: 50 })]);

    // Alerts: 150 open; 20 ticked and acknowledged, then every one that still matches.
    await page.getByRole('link', { name: 'Alerts', exact: true }).click();
    await heading(page, 'Alerts');
    await expect.poll(() => page.getByTestId('alert-counts').textContent()).toBe(`${ALERTS} open · 0 acknowledged`);
    await page.getByRole('button', { name: 'Select this page' }).click();
    await page.getByRole('button', { name: 'Acknowledge selected (20)' }).click();
    await page.getByText('20 alerts acknowledged.').waitFor();
    await expect.poll(() => page.getByTestId('alert-counts').textContent()).toBe('130 open · 20 acknowledged');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Acknowledge all matching' }).click();
    await page.getByText('130 alerts acknowledged.').waitFor();
    await expect.poll(() => page.getByTestId('alert-counts').textContent()).toBe(`0 open · ${ALERTS} acknowledged`);
    expect((await ok('/alerts?limit=1')).counts).toEqual({ triggered: 0, acknowledged: ALERTS });
  });
});
