/**
 * The dashboard at scale (issue 18), in Chromium against the real local stack: a SCALE account of 1,000 keys (990
 * loaded with ingestion's own item builders as bench:spend does, 10 discovered through /ingest, each raising an
 * alert of each of 15 new_key rules: 150 alerts). The 990 keys carry 26 key × day × model export rows each, all in
 * this month (13 models × yesterday and today, or 26 models × today alone on the 1st): this month's export is then
 * 25,750 rows, past the synchronous export's 25,000. The Overview's figures equal GET /spend's sums; this month's
 * "Download CSV" becomes an export job (progress, then a one-time link) whose gzip file's rows sum to GET /spend's
 * month total to the micro-dollar, and whose link answers 410 the second time; key #737 is found among 1,000 by part
 * of its label and by the start of its hash; a budget is set on it through the key picker; 150 alerts are
 * acknowledged in bulk.
 */
import { randomBytes, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_HEADER } from '#shared/spend/csv.ts';
import { MAX_EXPORT_ROWS } from '#shared/spend/export.ts';
import { isoDate, monthStart } from '#shared/time/periods.ts';
import { loadAggregates } from '../../bench/spend-lib.ts';
import { money } from '../../web/src/ui/format.ts';
import { launchChromium, type LaunchedBrowser } from '../browser/chromium.ts';
import { api, pointAtStack, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';

declare const sessionStorage: { setItem(key: string, value: string): void };

const LOADED_KEYS = 990;
const DISCOVERED_KEYS = 10;
const RULES = 15;
const ALERTS = RULES * DISCOVERED_KEYS;
/**
 * Export rows per loaded key: models × days, every loaded day in this month (yesterday is last month on the 1st), so
 * this month's export holds all of them: 990 × 26 = 25,740, past MAX_EXPORT_ROWS (25,000) on any date.
 */
const ROWS_PER_KEY = 26;
const origin = () => stack().apiUrl.replace(/\/api$/, '');

let browser: LaunchedBrowser;
let restore: () => void;
let user: RegisteredUser;
let key737: string;
/** The loader's "now": the journey's month and today are the ones loaded. */
let loadedAt: Date;

async function ok<T = any>(path: string, options: Parameters<typeof api>[1] = {}): Promise<T> {
  const res = await api<T>(path, { token: user.token, ...options });
  if (res.status >= 300) throw new Error(`${options.method ?? 'GET'} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

beforeAll(async () => {
  restore = pointAtStack();
  [browser, user] = await Promise.all([launchChromium({ width: 1280 }), registerUser({ companyName: 'Scale Co' })]);
  await setPlan(user.accountId, 'SCALE');
  loadedAt = new Date();
  const days = isoDate(loadedAt).endsWith('-01') ? 1 : 2;
  const loaded = await loadAggregates(user.accountId, { keys: LOADED_KEYS, models: ROWS_PER_KEY / days, days }, { now: loadedAt, concurrency: 8, writeWith: 'TransactWriteItems' });
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

/** Whole micro-dollars of a dollar amount written with exactly 6 decimals (`12.345678`). */
const micros = (usd: string): bigint => BigInt(usd.replace('.', ''));

async function heading(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

describe('the dashboard with 1,000 keys', () => {
  it('sums everything, exports a month of 25,750 rows through the job, finds any key, budgets it through the picker and acknowledges alerts in bulk', { timeout: 150_000 }, async () => {
    const page = await signedIn();
    const today = isoDate(new Date());
    expect(today, 'the journey ran past midnight (UTC) after its load').toBe(isoDate(loadedAt));
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
    // The days, providers, keys, open alerts, and whether the month is closed (/months): five calls whatever the account's size.
    expect(calls.length, calls.join("\n")).toBeLessThanOrEqual(5);
    expect(calls.filter((c) => c.startsWith('/api/keys/'))).toEqual([]);

    // Export: this month has more rows than the synchronous export holds, so "Download CSV" becomes an export job: its
    // progress, then a one-time link to the gzip file. Every row of the file is this month's; their costs sum to GET
    // /spend's month total exactly (micro-dollars); the link's second download is refused (410).
    expect(await page.getByLabel('Range').inputValue()).toBe('month');
    const exportCalls: string[] = [];
    page.on('response', (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith('/api/spend/export')) exportCalls.push(`${r.request().method()} ${path.replace(/exp_\w+$/, '{id}')} ${r.status()}`);
    });
    await page.getByRole('button', { name: 'Download CSV' }).click();
    await page.getByText(/^Preparing the CSV of this range… [\d,]+ rows so far\.$/).waitFor({ timeout: 60_000 });
    const jobLink = page.getByRole('link', { name: /^Download the CSV \([\d,]+ rows, gzip; the link works once, until / });
    await jobLink.waitFor({ timeout: 60_000 });
    const link = new URL((await jobLink.getAttribute('href'))!, origin());
    expect(link.pathname).toMatch(/^\/local-exports\/[\w-]+$/);
    const [download] = await Promise.all([page.waitForEvent('download'), jobLink.click()]);
    const month = monthStart(loadedAt);
    expect(download.suggestedFilename()).toBe(`burnrate-spend-${month}-to-${today}.csv.gz`);
    const lines = gunzipSync(await readFile((await download.path())!)).toString('utf8').split('\r\n');
    expect(lines[0]).toBe(CSV_HEADER);
    expect(lines.pop()).toBe(''); // every line ends with CRLF
    const rows = lines.slice(1);
    expect(rows.length).toBeGreaterThan(MAX_EXPORT_ROWS);
    expect(rows.length).toBe(LOADED_KEYS * ROWS_PER_KEY + DISCOVERED_KEYS);
    expect(await jobLink.textContent()).toContain(`(${rows.length.toLocaleString('en-US')} rows, gzip`);
    expect(rows.filter((r) => r.slice(0, 10) < month || r.slice(0, 10) > today)).toEqual([]);
    expect(rows.filter((r) => r.includes(`,${key737},Payments worker 737,`))).toHaveLength(ROWS_PER_KEY);
    expect(rows.filter((r) => !/,\d+\.\d{6}$/.test(r))).toEqual([]); // cost_usd last, exact to the micro-dollar
    const rowsMicros = rows.reduce((sum, r) => sum + micros(r.slice(r.lastIndexOf(',') + 1)), 0n);
    expect(rowsMicros).toBeGreaterThan(0n);
    expect(rowsMicros).toBe(micros(mtd.total.costUsd.toFixed(6)));
    expect([mtd.from, mtd.to]).toEqual([month, today]);
    expect((await page.request.get(link.href)).status()).toBe(410);
    // The synchronous export was asked first and refused for its size (400), then the job was started and followed.
    expect(exportCalls.slice(0, 2)).toEqual(['GET /api/spend/export 400', 'POST /api/spend/exports 202']);
    expect(exportCalls.slice(2).length).toBeGreaterThan(0);
    expect(new Set(exportCalls.slice(2))).toEqual(new Set(['GET /api/spend/exports/{id} 200']));

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

    // Stopped keys among 1,000: three of the busiest held by KEY stop budgets. Keys names each one's budget from the
    // page's own GET /keys (stoppedBy is in its items): no call per row.
    const top = (await ok('/keys?limit=3')).items as { hash: string }[];
    for (const [i, k] of top.entries()) {
      await ok('/budgets', { method: 'POST', body: { name: `Stop ${i + 1}`, monthlyLimit: 0.01, alertThreshold: 80, scope: 'KEY', keyHash: k.hash, action: 'stop' } });
    }
    const keysCalls: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/')) keysCalls.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await heading(page, 'Keys');
    await expect.poll(() => page.getByTestId('stopped-by').count()).toBe(3);
    expect((await page.getByTestId('stopped-by').allTextContents()).map((t) => t.match(/budget “(Stop \d)”/)?.[1]).sort()).toEqual(['Stop 1', 'Stop 2', 'Stop 3']);
    expect(keysCalls.sort()).toEqual(['GET /api/keys', 'GET /api/spend']);
  });
});
