/**
 * The dashboard in a real browser (Debian's Chromium via playwright-core) against the real local stack: one
 * journey through the screens as people use them, axe-core on every screen visited (zero serious or critical
 * violations, light and dark), a viewer at 360 px who sees no button it may not use, and a 401 that sends the
 * user to sign-in and back.
 */
import AxeBuilder from '@axe-core/playwright';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type LaunchedBrowser } from '../browser/chromium.ts';
import { stack, uniqueEmail } from './harness.ts';
import { linkInMail } from './outbox.ts';

// Browser globals inside page.evaluate callbacks (this project's tsconfig has no DOM lib; declared here only).
declare const document: {
  querySelector(selector: string): unknown;
  documentElement: { scrollWidth: number };
  activeElement: { textContent: string | null; id: string; name?: string; value?: string } | null;
};
declare const navigator: { clipboard: { readText(): Promise<string> } };
declare const sessionStorage: { length: number; setItem(key: string, value: string): void };

const origin = () => stack().apiUrl.replace(/\/api$/, '');
const PASSWORD = 'Dashboard1pass';

let browser: LaunchedBrowser;
const axeFindings: string[] = [];

beforeAll(async () => {
  browser = await launchChromium({ width: 1280 });
});
afterAll(async () => {
  await browser?.close();
});

async function openPage(context: BrowserContext): Promise<Page> {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => axeFindings.push(`page error: ${error.message}`));
  return page;
}

/** Waits for the screen's heading, then runs axe on the page; serious and critical violations are collected. */
async function screen(page: Page, heading: string | RegExp, note = ''): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  // Let loading states settle: no "Loading…" left.
  await page.waitForFunction(() => !document.querySelector('[role="status"][aria-live]'), undefined, { timeout: 10_000 });
  const result = await new AxeBuilder({ page }).analyze();
  for (const v of result.violations) {
    if (v.impact === 'serious' || v.impact === 'critical') {
      axeFindings.push(`${heading}${note}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    }
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function ingest(secret: string, events: object[]): Promise<void> {
  const res = await fetch(`${stack().apiUrl}/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': secret },
    body: JSON.stringify({ events }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { accepted: number }).accepted).toBe(events.length);
}

describe('the dashboard in Chromium', () => {
  it('sign up → ingest key → events → overview and key breakdown → label → budget → alert → team → viewer → billing → sign out', { timeout: 240_000 }, async () => {
    const page = await openPage(browser.context);
    const email = uniqueEmail('dash');

    // A signed-out visit to a screen goes to sign-in; from there to "Create your account".
    await page.goto(`${origin()}/keys`);
    await page.waitForURL(/\/sign-in\?next=%2Fkeys$/);
    await screen(page, 'Sign in');
    await page.getByRole('link', { name: 'Create your account' }).click();
    await screen(page, 'Create your account');
    // The API's problem+json detail is shown: a weak password.
    await page.getByLabel('Company').fill('Acme Labs');
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.locator('.field-error, [role="alert"]').count()).toBeGreaterThan(0);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();

    await screen(page, 'Ingest keys', ' (new account)');

    // The verification link of the e-mail, opened in this tab (a full load: the session comes back by refresh).
    const verify = await linkInMail(email, '/verify-email');
    await page.goto(verify.url);
    await screen(page, 'Verify your e-mail');
    await page.getByText('Your e-mail address is verified').waitFor();
    await page.getByRole('link', { name: 'Go to the overview' }).click();
    await screen(page, 'Overview', ' (empty)');
    await page.getByText('No spend yet.').waitFor();

    // Ingest keys: create one; the secret is shown once, with a copy button and snippets.
    await page.getByRole('link', { name: 'Ingest keys' }).click();
    await screen(page, 'Ingest keys');
    await page.getByLabel('Name', { exact: true }).fill('production proxy');
    await page.getByRole('button', { name: 'Create ingest key' }).click();
    const secret = (await page.getByTestId('ingest-secret').textContent())!.trim();
    expect(secret).toMatch(/^brk_/);
    await page.getByRole('button', { name: 'Copy the key' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.getByRole('button', { name: 'Python (requests)' }).click();
    await expect.poll(() => page.locator('pre code').textContent()).toContain(`"x-api-key": "${secret}"`);
    await screen(page, 'Ingest keys', ' (secret shown)');

    // Events through the API with that key: two provider keys over the last days.
    const openaiKey = sha256(`sk-openai-${randomBytes(4).toString('hex')}`);
    const anthropicKey = sha256(`sk-ant-${randomBytes(4).toString('hex')}`);
    const now = Date.now();
    const events = [0, 1, 2].flatMap((daysAgo) => [
      { requestId: `o-${daysAgo}`, keyHash: openaiKey, keyHint: 'o7Qa', provider: 'openai', model: 'gpt-4o', inputTokens: 1000, outputTokens: 100, costUsd: 2.5, timestamp: new Date(now - daysAgo * 3_600_000 * 6).toISOString() },
      { requestId: `a-${daysAgo}`, keyHash: anthropicKey, keyHint: 'a9Zz', provider: 'anthropic', model: 'claude-sonnet-4', inputTokens: 2000, outputTokens: 200, costUsd: 4, timestamp: new Date(now - daysAgo * 3_600_000 * 6).toISOString() },
    ]);
    await ingest(secret, events);

    // Overview: month to date, the chart, top keys.
    await page.getByRole('link', { name: 'Overview' }).click();
    await screen(page, 'Overview');
    await expect.poll(() => page.getByTestId('month-to-date').textContent()).toBe('$19.50');
    // The account's forecast from GET /spend (month to date + the trailing 7-day average × the days left).
    await expect.poll(() => page.getByTestId('forecast').textContent()).toMatch(/^\$\d[\d,]*\.\d{2}$/);
    await expect.poll(() => page.locator('figure.chart canvas').count()).toBeGreaterThan(0);
    await expect.poll(() => page.locator('figure.chart .u-legend').textContent()).toContain('openai');
    await expect.poll(() => page.getByRole('link', { name: '…a9Zz' }).count()).toBe(1);

    // Keys: sort, then label a key inline with the keyboard (Enter saves).
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await screen(page, 'Keys');
    await page.getByRole('button', { name: 'Edit label of …o7Qa' }).click();
    await page.getByLabel('Label of …o7Qa').fill('Search bot');
    await page.getByLabel('Label of …o7Qa').press('Enter');
    // The saved label names the row (its details link is named by keyName, so it is unique once the label is in).
    await page.getByRole('link', { name: 'Details of Search bot' }).waitFor();
    await page.getByRole('button', { name: /^Provider/ }).click();
    await expect.poll(() => page.locator('tbody tr td:nth-child(3)').allTextContents()).toEqual(['anthropic', 'openai']);

    // The key's screen: its daily chart and its by-model table.
    await page.getByRole('link', { name: 'Details of Search bot' }).click();
    await screen(page, 'Key Search bot');
    await page.getByRole('cell', { name: 'openai/gpt-4o' }).waitFor();
    expect(await page.getByRole('row', { name: /openai\/gpt-4o/ }).textContent()).toContain('$7.50');
    await page.getByLabel('Range').selectOption('7');
    await page.waitForURL(/range=7/);
    await screen(page, 'Key Search bot', ' (7 days)');

    // A budget below what was spent; the next events raise its alert.
    await page.getByRole('link', { name: 'Budgets' }).click();
    await screen(page, 'Budgets');
    await page.getByLabel('Name', { exact: true }).fill('Team cap');
    await page.getByLabel('Monthly limit (US dollars)').fill('20');
    await page.getByLabel('Alert at (% of the limit)').fill('50');
    await page.getByRole('button', { name: 'Create budget' }).click();
    await page.getByRole('heading', { name: 'Team cap' }).waitFor();
    await screen(page, 'Budgets', ' (one budget)');
    await ingest(secret, [{ requestId: 'o-more', keyHash: openaiKey, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd: 1 }]);

    // An alert rule (form per type).
    await page.getByRole('link', { name: 'Alert rules' }).click();
    await screen(page, 'Alert rules');
    await page.getByLabel('Type').selectOption('spend_spike');
    await page.getByLabel('Name', { exact: true }).fill('Spikes');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('cell', { name: 'Spikes', exact: true }).waitFor();

    // The alert arrives: the overview lists it, its link (as in alert e-mail: /alerts/<id>) marks it in the inbox.
    await page.getByRole('link', { name: 'Overview' }).click();
    await screen(page, 'Overview', ' (an open alert)');
    await page.getByRole('link', { name: /^Budget "Team cap" exceeded/ }).click();
    await page.waitForURL(/\/alerts\/alt_/);
    await screen(page, 'Alerts', ' (one alert marked)');
    expect(await page.locator('li[aria-current="true"]').textContent()).toContain('Budget "Team cap" exceeded');
    await page.getByRole('link', { name: 'Alerts' }).click();
    await screen(page, 'Alerts');
    const ack = page.getByRole('button', { name: /^Acknowledge Budget "Team cap" exceeded/ });
    await ack.waitFor();
    await ack.click();
    await expect.poll(() => ack.count()).toBe(0);
    await page.getByLabel('Show').selectOption('acknowledged');
    await page.getByText(/Budget "Team cap" exceeded/).first().waitFor();
    await screen(page, 'Alerts', ' (acknowledged)');

    // Prices: the built-in table with a filter; an admin sets an own price (the API's field errors next to the fields).
    await page.getByRole('link', { name: 'Prices' }).click();
    await screen(page, 'Prices');
    const filter = page.getByLabel('Filter by provider or model');
    await filter.fill('gpt-4o-mini');
    const builtinRow = page.getByRole('row', { name: /openai gpt-4o-mini/ });
    expect(await builtinRow.textContent()).toContain('Built-in');
    // Each built-in row names the page it comes from and the day it was checked; Anthropic rows show both cache-write prices.
    expect(await builtinRow.getByRole('link', { name: /^Where the built-in price of openai\/gpt-4o-mini comes from: https:/ }).getAttribute('href')).toMatch(/^https:\/\//);
    expect(await builtinRow.textContent()).toMatch(/checked [A-Z][a-z]{2} \d{1,2}, \d{4} \(UTC\)/);
    await filter.fill('claude-sonnet-4-5');
    expect(await page.getByRole('row', { name: /anthropic claude-sonnet-4-5/ }).textContent()).toMatch(/^anthropicclaude-sonnet-4-5\$3\.00\$0\.30\$3\.75\$6\.00\$15\.00Built-in/);
    await filter.fill('gpt-4o-mini');
    await page.getByLabel('Provider', { exact: true }).fill('openai');
    await page.getByLabel('Model', { exact: true }).fill('acme-tuned-1');
    await page.getByLabel('Input', { exact: true }).fill('-1');
    await page.getByLabel('Output', { exact: true }).fill('20');
    await page.getByRole('button', { name: 'Save price' }).click();
    await page.locator('.field-error', { hasText: 'input must be ≥ 0.' }).waitFor();
    expect(await page.getByLabel('Input', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Input', { exact: true }).fill('10');
    await page.getByRole('button', { name: 'Save price' }).click();
    await page.getByText(/^Saved: openai\/acme-tuned-1/).waitFor();
    await filter.fill('acme');
    const ownRow = page.getByRole('row', { name: /openai acme-tuned-1/ });
    await expect.poll(() => ownRow.textContent()).toMatch(/\$10\.00\$10\.00\$10\.00\$10\.00\$20\.00Own/); // reads and writes default to input
    // Edit with the keyboard: the row's "Edit" fills the form and moves focus to it; Enter saves.
    await page.getByRole('button', { name: 'Edit the own price of openai/acme-tuned-1' }).press('Enter');
    await expect.poll(() => page.evaluate(() => [document.activeElement?.name, document.activeElement?.value])).toEqual(['input', '10']);
    await page.getByLabel('Cached input', { exact: true }).fill('1.875');
    await page.getByLabel('Cache write 1 h', { exact: true }).fill('20');
    await page.getByLabel('Cached input', { exact: true }).press('Enter');
    await expect.poll(() => ownRow.textContent()).toMatch(/\$10\.00\$1\.875\$10\.00\$20\.00\$20\.00Own/); // exact, not rounded to cents
    await screen(page, 'Prices', ' (an own price)');

    // An event of that model without costUsd is priced with the own price: 100,000 input tokens × $10 + 50,000
    // output tokens × $20 per million = $2.00, on the key's screen.
    await ingest(secret, [{ requestId: 'own-price', keyHash: openaiKey, provider: 'openai', model: 'acme-tuned-1', inputTokens: 100_000, outputTokens: 50_000 }]);
    await page.goto(`${origin()}/keys/${openaiKey}`);
    await screen(page, 'Key Search bot', ' (own price)');
    expect(await page.getByRole('row', { name: /openai\/acme-tuned-1/ }).textContent()).toContain('$2.00');

    // Download CSV on the overview: the chosen range's spend as a file, per day, key and model.
    await page.getByRole('link', { name: 'Overview' }).click();
    await screen(page, 'Overview', ' (export)');
    const today = new Date().toISOString().slice(0, 10);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toBe(`burnrate-spend-${today.slice(0, 8)}01-to-${today}.csv`);
    const csv = (await readFile(await download.path(), 'utf8')).split('\r\n');
    expect(csv[0]).toBe('date,key_hash,key_label,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd');
    expect(csv).toContain(`${today},${openaiKey},Search bot,openai,acme-tuned-1,1,100000,0,50000,2.000000`);
    // An export the API refuses (over 25,000 rows: too many events to send here) shows the problem's detail.
    await page.route('**/api/spend/export*', (route) =>
      route.fulfill({ status: 400, contentType: 'application/problem+json', body: JSON.stringify({ type: '/problems/export-too-large', title: 'The export is too large.', status: 400, detail: 'The range has more than 25000 rows; ask for fewer days.' }) }),
    );
    await page.getByRole('button', { name: 'Download CSV' }).click();
    await page.getByRole('alert').filter({ hasText: 'The range has more than 25000 rows; ask for fewer days.' }).waitFor();
    await page.unroute('**/api/spend/export*');
    // Past 92 days the API refuses an export: the button says so instead of failing.
    await page.getByLabel('Range').selectOption('180');
    await page.getByText('The export is limited to 92 days').waitFor();
    expect(await page.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true);

    // Back to the built-in table: the own price deleted (after a confirmation).
    await page.getByRole('link', { name: 'Prices' }).click();
    await screen(page, 'Prices');
    await filter.fill('acme');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete the own price of openai/acme-tuned-1' }).click();
    await page.getByText('No price matches “acme”.').waitFor();

    // Team: invite a viewer.
    await page.getByRole('link', { name: 'Team' }).click();
    await screen(page, 'Team');
    const viewerEmail = uniqueEmail('viewer');
    await page.getByLabel('E-mail').fill(viewerEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText(`${viewerEmail} as viewer`).waitFor();

    for (const name of ['Billing', 'Settings']) {
      await page.getByRole('link', { name }).click();
      await screen(page, name);
    }

    // The viewer accepts in another browser, dark and 360 px wide, and sees no button it may not use.
    const other = await browser.another();
    await other.setExtraHTTPHeaders({});
    const viewer = await openPage(other);
    await viewer.setViewportSize({ width: 360, height: 740 });
    await viewer.emulateMedia({ colorScheme: 'dark' });
    const { url } = await linkInMail(viewerEmail, '/accept-invitation');
    await viewer.goto(url);
    await screen(viewer, /^Join/, ' (360 px, dark)');
    await viewer.getByLabel('First name').fill('Vic');
    await viewer.getByLabel('Last name').fill('Viewer');
    await viewer.getByLabel('Password').fill(PASSWORD);
    await viewer.getByRole('button', { name: 'Accept the invitation' }).click();
    const visits: [string, string][] = [
      ['/', 'Overview'],
      ['/keys', 'Keys'],
      ['/budgets', 'Budgets'],
      ['/alert-rules', 'Alert rules'],
      ['/alerts?status=all', 'Alerts'],
      ['/ingest-keys', 'Ingest keys'],
      ['/prices', 'Prices'],
      ['/team', 'Team'],
      ['/billing', 'Billing'],
      ['/settings', 'Settings'],
    ];
    for (const [path, name] of visits) {
      if (path !== '/') await viewer.goto(`${origin()}${path}`);
      await screen(viewer, name, ' (viewer, 360 px, dark)');
      if (path === '/keys') {
        // The keyboard: the first Tab of a page reaches "Skip to content", which moves focus to the screen.
        await viewer.keyboard.press('Tab');
        expect(await viewer.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
        await viewer.keyboard.press('Enter');
        expect(await viewer.evaluate(() => document.activeElement?.id)).toBe('main');
      }
      // Nothing wider than the phone: tables scroll inside their own box.
      expect(await viewer.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
      const buttons = await viewer.getByRole('button').allTextContents();
      const forbidden = buttons.filter((b) => /Edit|Create|Delete|Acknowledge|Revoke|Remove|Send invitation|Upgrade|Manage|Rotate|Pause|Save price|Set own price/.test(b));
      expect(forbidden, path).toEqual([]);
      // A viewer reads prices (no form to set one) and may export spend (a GET).
      if (path === '/prices') expect(await viewer.getByLabel('Model', { exact: true }).count()).toBe(0);
      if (path === '/') await viewer.getByRole('button', { name: 'Download CSV' }).waitFor();
    }
    await other.close();

    // Billing: upgrade through the local Checkout page, back to the dashboard with the new plan.
    await page.getByRole('link', { name: 'Billing' }).click();
    await screen(page, 'Billing');
    await page.getByRole('button', { name: 'Upgrade to Growth' }).click();
    await page.waitForURL(/\/checkout\//);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForLoadState();
    await expect
      .poll(async () => {
        await page.goto(`${origin()}/billing`);
        await page.getByRole('heading', { level: 1, name: 'Billing' }).waitFor();
        return page.locator('main').textContent();
      }, { timeout: 15_000 })
      .toContain('Plan GROWTH');
    await page.getByRole('button', { name: 'Manage the subscription' }).waitFor();

    // Settings: the profile says the address is verified.
    await page.getByRole('link', { name: 'Settings' }).click();
    await screen(page, 'Settings', ' (verified)');
    await page.getByText(`${email} (verified)`).waitFor();

    // Sign out forgets the session: a screen sends to sign-in; signing in comes back to it.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await screen(page, 'Sign in');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.goto(`${origin()}/alerts?status=acknowledged`);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL(`${origin()}/alerts?status=acknowledged`);
    await screen(page, 'Alerts');

    // A token the API refuses (401) sends the user to sign-in, and back after signing in.
    await page.evaluate(() => sessionStorage.setItem('burnrate.refreshToken', 'not-a-token'));
    await page.route('**/api/alerts*', (route) => route.fulfill({ status: 401, contentType: 'application/problem+json', body: JSON.stringify({ type: '/problems/unauthorized', title: 'Unauthorized', status: 401 }) }));
    await page.getByLabel('Show').selectOption('triggered');
    await page.waitForURL(/\/sign-in\?next=%2Falerts/);
    await page.unroute('**/api/alerts*');

    // Forgot password: the link from the e-mail sets a new one, which signs in.
    await page.goto(`${origin()}/sign-in`);
    await screen(page, 'Sign in', ' (after a 401)');
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await screen(page, 'Forgot password');
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Send the reset link' }).click();
    await page.getByText('a link to reset its password is on its way').waitFor();
    const reset = await linkInMail(email, '/reset-password');
    await page.goto(reset.url);
    await screen(page, 'Reset password');
    await page.getByLabel('New password').fill(`${PASSWORD}2`);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByText('Your password is changed.').waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(`${PASSWORD}2`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await screen(page, 'Overview', ' (new password)');

    expect(axeFindings).toEqual([]);
  });
});
