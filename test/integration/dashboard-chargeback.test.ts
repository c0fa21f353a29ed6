/**
 * The dashboard's "who spent it" journey in Chromium: a project tagged on the Projects screen (its keys follow), last
 * month's chargeback by that tag and the month's top customers, each figure equal to the API's; screenshots.
 */
import { randomUUID, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncConnection } from '#shared/sync/all.ts';
import { money } from '../../web/src/ui/format.ts';
import { launchChromium, type LaunchedBrowser } from '../browser/chromium.ts';
import { api, pointAtStack, registerUser, setPlan, stack, type RegisteredUser } from './harness.ts';
import { newStandInOrg, type StandInOrg } from './standins.ts';

declare const sessionStorage: { setItem(key: string, value: string): void };

const origin = () => stack().apiUrl.replace(/\/api$/, '');
const now = new Date();
const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
const lastMonthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 10);
let browser: LaunchedBrowser;
let user: RegisteredUser;
let org: StandInOrg;
let restore: () => void;

beforeAll(async () => {
  restore = pointAtStack({
    CONNECTIONS_LOCAL_KEY: (await readFile(stack().connectionsKeyFile, 'utf8')).trim(),
    OPENAI_ADMIN_URL: stack().openaiAdmin.url,
    ANTHROPIC_ADMIN_URL: stack().anthropicAdmin.url,
  });
  [browser, user, org] = await Promise.all([launchChromium({ width: 1280 }), registerUser({ companyName: 'Chargeback Co' }), newStandInOrg('openai', { now: now.toISOString(), late: null })]);
  await setPlan(user.accountId, 'SCALE');
  // Customers of last month, from events (a provider without a connection), on its last day: before the sync, which
  // may close last month (a closed month takes no new spend; it would be booked on today).
  const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key as string;
  const keyHash = createHash('sha256').update(`mistral-${randomUUID()}`).digest('hex');
  const at = new Date(Math.max(Date.parse(`${lastMonthEnd}T12:00:00Z`), Date.now() - 34 * 86_400_000)).toISOString();
  const events = ['acme-corp', 'acme-corp', 'globex', 'initech'].map((customerId, i) => ({ requestId: randomUUID(), keyHash, provider: 'mistral', model: 'mistral-large', inputTokens: 10, outputTokens: 10, costUsd: [2.5, 1.25, 3, 0.4][i], customerId, timestamp: at }));
  expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events } })).body.accepted).toBe(4);
  const created = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openai', adminKey: org.adminKey } });
  for (let i = 0; i < 100; i++) {
    const r = await syncConnection(user.accountId, created.body.id, { budgetMs: 600_000, http: { backoffMs: 20 }, now });
    if (r.status !== 'busy') break;
    await new Promise((res) => setTimeout(res, 200));
  }
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await org?.remove();
  restore?.();
});

async function signIn(page: Page): Promise<void> {
  await page.goto(`${origin()}/sign-in`);
  await page.evaluate((token) => sessionStorage.setItem('burnrate.refreshToken', token), user.refreshToken);
}

describe('Chargeback in Chromium', () => {
  it('tag a project → last month’s chargeback by that tag and its top customers, equal to the API', { timeout: 120_000 }, async () => {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await signIn(page);
    const web = ((await org.state()).projects as { id: string; name: string }[]).find((p) => p.name === 'Web app')!;
    await page.goto(`${origin()}/projects?provider=openai&projectId=${encodeURIComponent(web.id)}`);
    await page.getByRole('heading', { level: 2, name: /Web app/ }).waitFor();
    await page.getByRole('button', { name: 'Edit tags of Web app' }).click();
    await page.getByLabel('Tags of Web app').fill('team: web\ncost-center: cc-1042');
    await page.getByRole('button', { name: 'Save tags' }).click();
    await page.getByTestId('project-tags').getByText('team: web').waitFor();
    await page.screenshot({ path: 'docs/screenshots/projects-tags-light.png', fullPage: true });
    const keys = (await api(`/keys?projectId=${encodeURIComponent(web.id)}&limit=100`, { token: user.token })).body.items as { effectiveTags: Record<string, string> }[];
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) expect(k.effectiveTags).toEqual({ team: 'web', 'cost-center': 'cc-1042' });

    await page.goto(`${origin()}/chargeback?month=${lastMonth}&tag=team`);
    await page.getByRole('heading', { level: 1, name: 'Chargeback' }).waitFor();
    const table = page.getByTestId('chargeback');
    await table.waitFor();
    const api1 = await api(`/spend?from=${lastMonth}-01&to=${lastMonthEnd}&groupBy=tag&tag=team&shared=allocate`, { token: user.token });
    const groups = api1.body.groups as { value: string | null; directUsd: number; sharedUsd: number; costUsd: number }[];
    expect(groups.map((g) => g.value)).toEqual(['web']);
    const row = table.locator('tbody tr').first();
    expect(await row.locator('td').allTextContents()).toEqual(['web', money(groups[0]!.directUsd), money(groups[0]!.sharedUsd), money(groups[0]!.costUsd)]);
    // Everything is charged to web (the only value): the account's total for last month.
    expect(groups[0]!.costUsd).toBe(api1.body.total.costUsd);

    const customers = page.getByTestId('top-customer');
    await customers.waitFor();
    const byCustomer = ((await api(`/spend?from=${lastMonth}-01&to=${lastMonthEnd}&groupBy=customer`, { token: user.token })).body.groups as { customer: string | null; costUsd: number }[]).filter((g) => g.customer !== null);
    expect(byCustomer.map((g) => g.customer)).toEqual(['acme-corp', 'globex', 'initech']);
    const shown = await customers.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    expect(shown.map((r) => [r[0], r[2]])).toEqual(byCustomer.map((g) => [g.customer, money(g.costUsd)]));
    await page.screenshot({ path: 'docs/screenshots/chargeback-light.png', fullPage: true });
    const small = await browser.context.newPage();
    await small.setViewportSize({ width: 360, height: 800 });
    await small.emulateMedia({ colorScheme: 'dark' });
    await small.goto(`${origin()}/chargeback?month=${lastMonth}&tag=team`);
    await small.getByTestId('top-customer').waitFor();
    await small.screenshot({ path: 'docs/screenshots/chargeback-360-dark.png', fullPage: true });
    await small.close();
  });
});
