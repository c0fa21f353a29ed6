/**
 * The dashboard in a real browser (Debian's Chromium via playwright-core) against the real local stack: one
 * journey through the screens as people use them, axe-core on every screen visited (zero serious or critical
 * violations, light and dark), a viewer at 360 px who sees no button it may not use, and a 401 that sends the
 * user to sign-in and back.
 */
import AxeBuilder from '@axe-core/playwright';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../browser/axe.ts';
import { launchChromium, type LaunchedBrowser } from '../browser/chromium.ts';
import { putActions } from '#shared/db/enforcement.ts';
import { newId } from '#shared/ids.ts';
import { pointAtStack, stack, uniqueEmail } from './harness.ts';
import { linkInMail } from './outbox.ts';

// Browser globals inside page.evaluate callbacks (this project's tsconfig has no DOM lib; declared here only).
declare const document: {
  querySelector(selector: string): unknown;
  documentElement: { scrollWidth: number };
  activeElement: { textContent: string | null; id: string; name?: string; value?: string; getAttribute(name: string): string | null } | null;
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
  for (const v of await axeViolations(page)) {
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
  it('sign up → sending key → events → overview and key breakdown → label → budget → alert → team → viewer → billing → sign out', { timeout: 300_000 }, async () => {
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
    // The form's message counts the fields it shows (one), whatever number of errors the API gave for it.
    expect(await page.getByRole('alert').textContent()).toBe('Check the field “Password”.');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();

    await screen(page, 'Get started', ' (new account)');

    // The verification link of the e-mail, opened in this tab (a full load: the session comes back by refresh).
    const verify = await linkInMail(email, '/verify-email');
    await page.goto(verify.url);
    await screen(page, 'Verify your e-mail');
    await page.getByText('Your e-mail address is verified').waitFor();
    await page.getByRole('link', { name: 'Go to the overview' }).click();
    await screen(page, 'Overview', ' (empty)');
    await page.getByText('No spend yet.').waitFor();
    // Nothing stopped yet: the Actions screen says what will appear there.
    await page.getByRole('link', { name: 'Actions', exact: true }).click();
    await screen(page, 'Actions', ' (empty)');
    await page.getByText(/^Nothing done yet\. When a stop budget reaches its limit, or a spend-anomaly rule stops a key, each act appears here/).waitFor();

    // Sending keys: create one; the secret is shown once, with a copy button and snippets.
    await page.getByRole('link', { name: 'Sending keys' }).click();
    await screen(page, 'Sending keys');
    await page.getByLabel('Name', { exact: true }).fill('production proxy');
    await page.getByRole('button', { name: 'Create sending key' }).click();
    const secret = (await page.getByTestId('ingest-secret').textContent())!.trim();
    expect(secret).toMatch(/^brk_/);
    await page.getByRole('button', { name: 'Copy the key' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.getByRole('tab', { name: 'Python (requests)' }).click();
    await expect.poll(() => page.locator('pre code').textContent()).toContain(`"x-api-key": "${secret}"`);
    await screen(page, 'Sending keys', ' (secret shown)');

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
    await expect.poll(() => page.getByTestId('range-total').textContent()).toBe('$19.50');
    // The account's forecast from GET /spend (month to date + the trailing 7-day average × the days left).
    await expect.poll(() => page.getByTestId('forecast').textContent()).toMatch(/^\$\d[\d,]*\.\d{2}$/);
    await expect.poll(() => page.locator('figure.chart canvas').count()).toBeGreaterThan(0);
    // Before any hover the legend gives the range's total; the providers' sums are GET /spend's.
    await expect.poll(() => page.locator('figure.chart .u-legend').textContent()).toContain('total $19.50');
    expect(await page.locator('tr[data-provider="openai"] td.num').textContent()).toBe('$7.50');
    expect(await page.locator('tr[data-provider="anthropic"] td.num').textContent()).toBe('$12.00');
    await expect.poll(() => page.getByRole('link', { name: '…a9Zz' }).count()).toBe(1);

    // Keys: sort, then label a key inline with the keyboard (Enter saves); Escape gives focus back to its opener.
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await screen(page, 'Keys');
    await page.getByRole('button', { name: 'Edit label of …a9Zz' }).click();
    await page.getByLabel('Label of …a9Zz').press('Escape');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Edit label of …a9Zz');
    await page.getByRole('button', { name: 'Edit label of …o7Qa' }).click();
    // A label past 100 characters is not cut without a word: the field says so.
    await page.getByLabel('Label of …o7Qa').fill('x'.repeat(120));
    await page.getByText('At most 100 characters: this one has 120.').waitFor();
    await page.getByLabel('Label of …o7Qa').fill('Search bot');
    await page.getByLabel('Label of …o7Qa').press('Enter');
    // The saved label names the row (its details link is named by keyName, so it is unique once the label is in).
    await page.getByRole('link', { name: 'Details of Search bot' }).waitFor();
    // Sorted by name across the account: a key without a label by its provider's name ("anthropic" < "Search bot"); the
    // provider written as people write it.
    await page.getByRole('button', { name: /^Key/ }).click();
    await expect.poll(() => page.locator('table.keys tbody tr td.key-cell > div.muted').allTextContents()).toEqual([expect.stringMatching(/^Anthropic/), expect.stringMatching(/^OpenAI/)]);

    // The provider filter: a choice of the providers Burnrate knows, by name.
    await page.getByLabel('Provider', { exact: true }).selectOption({ label: 'Anthropic' });
    await page.waitForURL(/provider=anthropic/);
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toBe('1 key match');
    await page.getByLabel('Provider', { exact: true }).selectOption({ label: 'Any provider' });
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toBe('2 keys');

    // The key's screen: its daily chart and its by-model table.
    await page.getByRole('link', { name: 'Details of Search bot' }).click();
    await screen(page, 'Key Search bot');
    // Its all-time total and its month-end forecast beside the month to date.
    expect(await page.getByTestId('key-total').textContent()).toBe('$7.50');
    expect(await page.getByTestId('key-forecast').textContent()).toMatch(/^\$\d[\d,]*\.\d{2}$/);
    await page.getByRole('cell', { name: 'openai/gpt-4o' }).waitFor();
    expect(await page.getByRole('row', { name: /openai\/gpt-4o/ }).textContent()).toContain('$7.50');
    await page.getByLabel('Range').selectOption('7');
    await page.waitForURL(/range=7/);
    await screen(page, 'Key Search bot', ' (7 days)');

    // A budget below what was spent; the next events raise its alert.
    await page.getByRole('link', { name: 'Budgets' }).click();
    await screen(page, 'Budgets');
    await page.getByLabel('Name', { exact: true }).fill('Team cap');
    // A field error names the field by its label, not by the API's name (monthlyLimit).
    await page.getByLabel('Monthly limit (US dollars)').fill('twenty');
    await page.getByRole('button', { name: 'Create budget' }).click();
    await page.locator('.field-error', { hasText: /^Monthly limit \(US dollars\) / }).waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('Check the field “Monthly limit (US dollars)”.');
    await page.getByLabel('Monthly limit (US dollars)').fill('20');
    await page.getByLabel('Alert at (% of the limit)').fill('50');
    await page.getByRole('button', { name: 'Create budget' }).click();
    await page.getByRole('heading', { name: 'Team cap' }).waitFor();
    // Edited in place (PATCH): Cancel gives focus back to "Edit"; Save changes the budget.
    await page.getByRole('button', { name: 'Edit budget Team cap' }).click();
    await page.getByRole('form', { name: 'Edit budget Team cap' }).getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Edit budget Team cap');
    await page.getByRole('button', { name: 'Edit budget Team cap' }).click();
    const edit = page.getByRole('form', { name: 'Edit budget Team cap' });
    await edit.getByLabel('Alert at (% of the limit)').fill('60');
    await edit.getByRole('button', { name: 'Save budget' }).click();
    await page.getByText('alert at 60%').waitFor();
    await screen(page, 'Budgets', ' (one budget)');
    await ingest(secret, [{ requestId: 'o-more', keyHash: openaiKey, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd: 1 }]);

    // An alert rule (form per type).
    await page.getByRole('link', { name: 'Alert rules' }).click();
    await screen(page, 'Alert rules');
    await page.getByLabel('Type').selectOption('spend_spike');
    await page.getByLabel('Name', { exact: true }).fill('Spikes');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('cell', { name: 'Spikes', exact: true }).waitFor();
    // A rule whose name holds an amount: shown as typed, here and in its alert (never "Daily over $5.00").
    await page.getByLabel('Type').selectOption('cost_threshold');
    await page.getByLabel('Name', { exact: true }).fill('Daily over $5');
    await page.getByLabel('Amount (US dollars)').fill('5');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('cell', { name: 'Daily over $5', exact: true }).waitFor();
    await ingest(secret, [{ requestId: 'o-rule', keyHash: openaiKey, provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd: 0.597586 }]);

    // The alert arrives: the overview lists it, its link (as in alert e-mail: /alerts/<id>) marks it in the inbox.
    await page.getByRole('link', { name: 'Overview' }).click();
    await screen(page, 'Overview', ' (an open alert)');
    await page.getByRole('link', { name: /^Budget "Team cap" exceeded/ }).click();
    await page.waitForURL(/\/alerts\/alt_/);
    await screen(page, 'Alerts', ' (one alert marked)');
    expect(await page.locator('li[aria-current="true"]').textContent()).toContain('Budget "Team cap" exceeded');
    await page.getByRole('link', { name: 'Alerts' }).click();
    await screen(page, 'Alerts');
    // The rule's alert: its name as typed, the amounts as the dashboard writes them (the API wrote them so).
    const ruleAlert = page.getByRole('listitem').filter({ hasText: 'Daily over $5:' });
    expect(await ruleAlert.getByRole('heading', { level: 3 }).textContent()).toBe('Daily over $5: daily spend reached $5.00 Open');
    expect(await ruleAlert.locator('p').first().textContent()).toMatch(/^Spend of the account on [A-Z][a-z]{2} \d{1,2}, \d{4} \(UTC\) is \$\d+\.\d{2}, at or above the rule "Daily over \$5" threshold of \$5\.00\.$/);
    // A short button text; the alert's title is its accessible description. After it, focus goes to the next
    // alert's Acknowledge (or the heading when none is left) and a polite message says what happened.
    const ack = page.getByRole('listitem').filter({ hasText: 'Budget "Team cap" exceeded' }).getByRole('button', { name: 'Acknowledge', exact: true });
    await ack.waitFor();
    expect(await ack.getAttribute('aria-describedby')).toMatch(/^title-alt_/);
    await ack.click();
    await expect.poll(() => ack.count()).toBe(0);
    await page.locator('[aria-live="polite"]', { hasText: 'Acknowledged: Budget "Team cap" exceeded' }).waitFor();
    await expect
      .poll(() => page.evaluate(() => (document.activeElement?.id === 'screen-title' ? 'heading' : document.activeElement?.textContent)))
      .toMatch(/^(heading|Acknowledge)$/);
    await page.getByLabel('Show').selectOption('acknowledged');
    await page.getByText(/Budget "Team cap" exceeded/).first().waitFor();
    await screen(page, 'Alerts', ' (acknowledged)');

    // A stop budget on the key (set through the API: the form is another test's): past its limit at once, the
    // reporter refuses the key. Keys says so on its row, naming the budget, the lever and since when.
    const login = (await (await fetch(`${stack().apiUrl}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) })).json()) as { token: string };
    const stopBudget = await fetch(`${stack().apiUrl}/budgets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
      body: JSON.stringify({ name: 'Search bot stop', monthlyLimit: 5, alertThreshold: 80, scope: 'KEY', keyHash: openaiKey, action: 'stop' }),
    });
    expect(stopBudget.status).toBe(201);
    const stopId = ((await stopBudget.json()) as { id: string }).id;
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await screen(page, 'Keys', ' (a stopped key)');
    const stoppedRow = page.locator('table.keys tbody tr').filter({ has: page.getByRole('link', { name: 'Details of Search bot' }) });
    await expect.poll(() => stoppedRow.getByTestId('stopped-by').textContent()).toMatch(/^Stopped by budget “Search bot stop” \(its calls refused by the reporter, since [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2} [AP]M\)$/);
    expect(await page.getByTestId('stopped-by').count()).toBe(1);
    // The key page says it too; its holder's link opens the budget's card, marked, where the stop is released.
    await stoppedRow.getByRole('link', { name: 'Details of Search bot' }).click();
    await screen(page, 'Key Search bot', ' (stopped)');
    expect(await page.getByTestId('key-stopped').textContent()).toMatch(/^Stopped: this key can’t spendBy budget “Search bot stop”: its calls refused by the reporter, since .* · released on the budget’s card$/);
    await page.getByTestId('key-stopped').getByRole('link', { name: 'budget “Search bot stop”' }).click();
    await screen(page, 'Budgets', ' (a stopped budget linked)');
    const stopCard = page.locator('li[aria-current="true"]');
    expect(await stopCard.getByRole('heading', { level: 3 }).textContent()).toBe('Search bot stop');
    await stopCard.getByText('Spend stopped').waitFor();
    // Released: the card changes with the release's answer, not with a later read of the list (held back here by 10 s),
    // and the key runs again.
    await page.route('**/api/budgets', (route) =>
      route.request().method() === 'GET' ? void new Promise((r) => setTimeout(r, 10_000)).then(() => route.continue()).catch(() => undefined) : route.continue(),
    );
    await stopCard.getByRole('button', { name: 'Release budget Search bot stop for this month' }).click();
    await stopCard.getByText('Released for this month').waitFor({ timeout: 3_000 });
    expect(await stopCard.getByText('Spend stopped').count()).toBe(0);
    await page.unroute('**/api/budgets');
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await screen(page, 'Keys', ' (released)');
    expect(await page.getByTestId('stopped-by').count()).toBe(0);
    // Actions: both acts, newest first, in words: the release by the person, the stop by Burnrate; filters by result.
    await page.getByRole('link', { name: 'Actions', exact: true }).click();
    await screen(page, 'Actions');
    const acts = page.getByRole('list', { name: 'Actions' }).getByRole('listitem');
    await expect.poll(() => acts.count()).toBe(2);
    expect(await acts.nth(0).textContent()).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, .*The reporter lets calls of key Search bot through again DoneFor Budget “Search bot stop” · because released by hand · by Ada Lovelace/);
    expect(await acts.nth(1).textContent()).toMatch(/The reporter refuses calls of key Search bot DoneFor Budget “Search bot stop” · because the limit was reached · by Burnrate/);
    expect(await acts.nth(0).getByRole('link', { name: 'Search bot', exact: true }).getAttribute('href')).toBe(`/keys/${openaiKey}`);
    await page.getByLabel('Result').selectOption({ label: 'Failed' });
    await page.waitForURL(/\/actions\?result=failed$/);
    await page.getByText('No act matches these filters.').waitFor();
    await page.getByLabel('Result').selectOption({ label: 'Any result' });
    await expect.poll(() => acts.count()).toBe(2);

    // A spend-anomaly rule that stops keys (set through the API: its form is in the screenshots): the key suddenly
    // spends $50 and the reporter refuses it. Keys names the rule; its link opens the key's alerts, whose incident
    // draws the key's last day and releases it.
    const anomalyRule = await fetch(`${stack().apiUrl}/alert-rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
      body: JSON.stringify({ type: 'spend_anomaly', name: 'Runaway keys', channels: ['email'], config: { minUsdPerHour: 1, multiplier: 2, action: 'stop' } }),
    });
    expect(anomalyRule.status).toBe(201);
    await ingest(secret, [{ requestId: 'o-runaway', keyHash: openaiKey, keyHint: 'o7Qa', provider: 'openai', model: 'gpt-4o', inputTokens: 1000, outputTokens: 100, costUsd: 50, timestamp: new Date().toISOString() }]);
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await screen(page, 'Keys', ' (a runaway key)');
    await expect.poll(() => stoppedRow.getByTestId('stopped-by').textContent()).toMatch(/^Stopped by spend-anomaly rule “Runaway keys” \(its calls refused by the reporter, since /);
    await stoppedRow.getByRole('link', { name: 'spend-anomaly rule “Runaway keys”' }).click();
    await screen(page, 'Alerts', ' (the runaway key)');
    const runaway = page.getByRole('listitem').filter({ hasText: 'Runaway keys: key' });
    await runaway.getByText("Incident: the key's last 24 hours").click();
    const incident = runaway.getByTestId('incident');
    await incident.getByRole('img', { name: /^Spend of the last 24 hours by hour against the usual \$/ }).waitFor();
    expect(await incident.getByText(/^Stopped$/).count()).toBe(1);
    page.once('dialog', (d) => void d.accept());
    await incident.getByRole('button', { name: 'Release the key' }).click();
    await incident.getByText(/^Released$/).waitFor();
    expect(await incident.getByRole('button', { name: 'Release the key' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await screen(page, 'Keys', ' (the runaway key released)');
    await expect.poll(() => page.getByTestId('stopped-by').count()).toBe(0);

    // Another runaway key, new (no usual spend): stopped by the same rule, released on its own page; the acts name the rule.
    const runawayKey = sha256(`sk-runaway-${randomBytes(4).toString('hex')}`);
    // (A key's rate exists from the second ingest that sees it on the day.)
    for (const [i, costUsd] of [0.01, 5].entries()) {
      await ingest(secret, [{ requestId: `runaway-${i}`, keyHash: runawayKey, keyHint: 'r4nw', provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd }]);
    }
    await page.goto(`${origin()}/keys/${runawayKey}`);
    await screen(page, 'Key …r4nw', ' (stopped by a rule)');
    const notice = page.getByTestId('key-stopped');
    expect(await notice.textContent()).toMatch(/^Stopped: this key can’t spendBy spend-anomaly rule “Runaway keys”: its calls refused by the reporter, since .*Release the key$/);
    expect(await notice.getByRole('link', { name: 'spend-anomaly rule “Runaway keys”' }).getAttribute('href')).toBe(`/alerts?status=all&type=spend_anomaly&keyHash=${runawayKey}`);
    page.once('dialog', (dialog) => void dialog.accept());
    await notice.getByRole('button', { name: 'Release the key' }).click();
    await page.getByTestId('key-released').waitFor();
    expect(await notice.textContent()).toBe('ReleasedReleased: its calls go through again.');
    await page.getByRole('link', { name: 'Actions', exact: true }).click();
    await screen(page, 'Actions', ' (a rule’s acts)');
    await expect.poll(() => acts.count()).toBe(6);
    expect(await acts.nth(0).textContent()).toMatch(/The reporter lets calls of key r4nw through again DoneFor Spend-anomaly rule “Runaway keys” · because released by hand · by Ada Lovelace/);
    expect(await acts.nth(1).textContent()).toMatch(/The reporter refuses calls of key r4nw DoneFor Spend-anomaly rule “Runaway keys” · because the key spent far more than usual · by Burnrate/);
    // A failed act stands out, with the provider's answer: one recorded as the enforcement writer records a refusal
    // (a real refusal needs a provider connection: levers-held.test.ts), shown under the "Failed" filter.
    const me = (await (await fetch(`${stack().apiUrl}/auth/me`, { headers: { authorization: `Bearer ${login.token}` } })).json()) as { account: { accountId: string } };
    const restoreEnv = pointAtStack();
    try {
      await putActions(me.account.accountId, [
        { id: newId('action'), budgetId: stopId, holder: { kind: 'budget', id: stopId }, kind: 'key_deactivated', provider: 'anthropic', keyHash: anthropicKey, projectId: null, reason: 'limit_reached', actor: 'burnrate', result: 'failed', detail: 'Anthropic answered 403 permission_error: the admin key may only read.', at: new Date().toISOString(), holderName: 'Search bot stop', targetName: 'a9Zz' },
      ]);
    } finally {
      restoreEnv();
    }
    await page.getByLabel('Result').selectOption({ label: 'Failed' });
    await expect.poll(() => acts.count()).toBe(1);
    expect(await acts.nth(0).getAttribute('class')).toBe('act failed');
    expect(await acts.nth(0).textContent()).toMatch(/Key a9Zz set inactive at Anthropic FailedFor Budget “Search bot stop” · because the limit was reached · by BurnrateAnthropic answered 403 permission_error: the admin key may only read\. Burnrate tries again at the next sync\.$/);

    // Prices: the built-in table with a filter; an admin sets an own price (the API's field errors next to the fields).
    await page.getByRole('link', { name: 'Prices' }).click();
    await screen(page, 'Prices');
    const filter = page.getByLabel('Filter by provider or model');
    await filter.fill('gpt-4o-mini');
    const builtinRow = page.getByRole('row', { name: /openai gpt-4o-mini/ });
    expect(await builtinRow.textContent()).toContain('Built-in');
    // Each built-in row names the page it comes from and the day it was checked; Anthropic rows show both cache-write prices.
    expect(await builtinRow.getByRole('link', { name: /^Where the built-in price of openai\/gpt-4o-mini comes from: https:/ }).getAttribute('href')).toMatch(/^https:\/\//);
    expect(await builtinRow.textContent()).toMatch(/checked [A-Z][a-z]{2} \d{1,2}, \d{4}Set own price$/);
    await filter.fill('claude-sonnet-4-5');
    expect(await page.getByRole('row', { name: /anthropic claude-sonnet-4-5/ }).textContent()).toMatch(/^anthropicclaude-sonnet-4-5\$3\.00\$0\.30\$3\.75\$6\.00\$15\.00Built-in/);
    await filter.fill('gpt-4o-mini');
    await page.getByLabel('Provider', { exact: true }).fill('openai');
    await page.getByLabel('Model', { exact: true }).fill('acme-tuned-1');
    await page.getByLabel('Input', { exact: true }).fill('-1');
    await page.getByLabel('Output', { exact: true }).fill('20');
    await page.getByRole('button', { name: 'Save price' }).click();
    await page.locator('.field-error', { hasText: 'Input must be ≥ 0.' }).waitFor();
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
    expect(csv[0]).toBe('date,key_hash,key_label,key_name,project_id,project_name,settled,correction,tags,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd');
    expect(csv).toContain(`${today},${openaiKey},Search bot,,,,false,false,{},openai,acme-tuned-1,1,100000,0,50000,2.000000`);
    // An export too large for the synchronous answer (over 25,000 rows: too many events to send here, so the 400
    // is stood in) becomes an export job: its progress, then a one-time link to the same rows, gzip-compressed.
    await page.route('**/api/spend/export?*', (route) =>
      route.fulfill({ status: 400, contentType: 'application/problem+json', body: JSON.stringify({ type: '/problems/export-too-large', title: 'The export is too large.', status: 400, detail: 'The range has more than 25000 rows.' }) }),
    );
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const jobLink = page.getByRole('link', { name: /^Download the CSV \(\d+ rows, gzip/ });
    await jobLink.waitFor({ timeout: 30_000 });
    await page.unroute('**/api/spend/export?*');
    const [gz] = await Promise.all([page.waitForEvent('download'), jobLink.click()]);
    expect(gunzipSync(await readFile(await gz.path())).toString('utf8').split('\r\n')).toEqual(csv);
    // Past 92 days the export is a job from the start; past 366 days none is possible, and the button says so.
    await page.getByLabel('Range').selectOption('180');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    await page.getByRole('link', { name: /^Download the CSV \(\d+ rows, gzip/ }).waitFor({ timeout: 30_000 });
    await page.getByLabel('Range').selectOption('custom');
    await page.getByLabel('From', { exact: true }).fill('2024-01-01');
    await page.getByText('An export covers at most 366 days').waitFor();
    expect(await page.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true);

    // Last month on the Overview, Projects and Keys: a late event of last month's last day; the figures are the API's.
    const lastDay = new Date(Date.parse(`${today.slice(0, 8)}01T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    await ingest(secret, [{ requestId: 'last-month', keyHash: anthropicKey, provider: 'anthropic', model: 'claude-sonnet-4', inputTokens: 10, outputTokens: 10, costUsd: 3.25, timestamp: `${lastDay}T12:00:00Z` }]);
    const lastMonth = lastDay.slice(0, 7);
    await page.getByLabel('Range').selectOption('last-month');
    await screen(page, 'Overview', ' (last month)');
    await expect.poll(() => page.getByTestId('range-total').textContent()).toBe('$3.25');
    await page.getByTestId('month-status').waitFor();
    expect(await page.getByTestId('month-status').getAttribute('data-status')).toBe('open');
    await page.getByRole('link', { name: 'Projects' }).click();
    await screen(page, 'Projects');
    await page.getByLabel('Month').selectOption(lastMonth);
    await page.waitForURL(new RegExp(`month=${lastMonth}`));
    await expect.poll(() => page.locator('table caption').first().textContent()).toContain('$3.25');
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await screen(page, 'Keys');
    await page.getByLabel('Month').selectOption(lastMonth);
    await page.waitForURL(new RegExp(`month=${lastMonth}`));
    await expect.poll(() => page.locator('table.keys tbody tr').first().locator('td.num').first().textContent()).toBe('$3.25');

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
    // The company comes from the server (GET /auth/invitation), never from the URL: a `&company=` is ignored.
    await viewer.goto(`${url}&company=Evil%20Corp`);
    await screen(viewer, 'Join Acme Labs', ' (360 px, dark)');
    expect(await viewer.locator('main').textContent()).not.toContain('Evil Corp');
    // Its expiry written as every date of the dashboard (not the browser's "12/3/2026, 5:18:42 PM").
    expect(await viewer.locator('main').textContent()).toMatch(/The link works until [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2} [AP]M UTC\./);
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
      ['/actions', 'Actions'],
      ['/get-started', 'Get started'],
      ['/ingest-keys', 'Sending keys'],
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
      // The navigation folds behind Menu: the bar takes a tenth of the phone's height at most; Menu opens and closes it.
      if (path === '/') {
        expect((await viewer.locator('header.top').boundingBox())!.height).toBeLessThanOrEqual(74);
        expect(await viewer.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
        await viewer.getByRole('button', { name: 'Menu' }).click();
        await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys', exact: true }).waitFor();
        expect(await viewer.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('true');
        await viewer.getByRole('button', { name: 'Menu' }).click();
        await viewer.getByRole('navigation', { name: 'Main' }).waitFor({ state: 'hidden' });
      }
      // Nothing wider than the phone: tables scroll inside their own box.
      expect(await viewer.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
      const buttons = await viewer.getByRole('button').allTextContents();
      const forbidden = buttons.filter((b) => /Edit|Create|Delete|Acknowledge|Revoke|Remove|Send invitation|Upgrade|Manage|Rotate|Pause|Save price|Set own price/.test(b));
      expect(forbidden, path).toEqual([]);
      // A viewer reads prices (no form to set one) and may export spend (a GET).
      if (path === '/prices') expect(await viewer.getByLabel('Model', { exact: true }).count()).toBe(0);
      if (path === '/') await viewer.getByRole('button', { name: 'Download CSV' }).waitFor();
      // Keys as cards at 360 px: the month to date in view, each card short.
      if (path === '/keys') {
        const card = viewer.locator('table.keys tbody tr').first();
        const money = (await card.locator('td.num').first().boundingBox())!;
        expect(money.x + money.width).toBeLessThanOrEqual(360);
        expect((await card.boundingBox())!.height).toBeLessThan(160);
      }
    }
    await other.close();

    // Billing: upgrade through the local Checkout page, back to the dashboard with the new plan, at the origin the user
    // came from (here the dashboard's loopback twin, localhost for 127.0.0.1), still signed in.
    const twin = origin().replace('//127.0.0.1:', '//localhost:');
    await page.goto(`${twin}/sign-in?next=%2Fbilling`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await screen(page, 'Billing');
    // Plans in words, each upgrade with its price and limits.
    expect(await page.getByTestId('plan').textContent()).toBe('You are on the Free plan, active.');
    expect(await page.getByRole('button', { name: /^Upgrade to Scale/ }).textContent()).toContain('$299 a month · 10,000,000 tracked requests, 1,000 keys, 250 users');
    await page.getByRole('button', { name: 'Upgrade to Growth' }).click();
    await page.waitForURL(/\/checkout\//);
    await page.getByRole('button', { name: 'Pay' }).click();
    // The local Checkout's success page leads back to the dashboard's Billing screen.
    await page.waitForURL(`${twin}/billing?checkout=success`);
    await screen(page, 'Billing', ' (back from Checkout)');
    await expect
      .poll(async () => {
        await page.goto(`${origin()}/billing`);
        await page.getByRole('heading', { level: 1, name: 'Billing' }).waitFor();
        return page.locator('main').textContent();
      }, { timeout: 15_000 })
      .toContain('You are on the Growth plan, active.');
    await page.getByRole('button', { name: 'Manage the subscription' }).waitFor();

    // Settings: the profile says the address is verified.
    await page.getByRole('link', { name: 'Settings' }).click();
    await screen(page, 'Settings', ' (verified)');
    await page.getByText(`${email} (verified)`).waitFor();

    // Tabs share the session: a new tab opens signed in; signing out in one tab signs out the other too.
    const tab = await browser.context.newPage();
    await tab.goto(`${origin()}/keys`);
    await screen(tab, 'Keys', ' (a new tab)');
    // Sign out forgets the session: a screen sends to sign-in; signing in comes back to it.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await screen(page, 'Sign in');
    await tab.waitForURL(/\/sign-in\?next=%2Fkeys/);
    await tab.close();
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

describe('the axe check each screen gets (test/browser/axe.ts)', () => {
  it('finds on a page with known faults exactly what axe’s default run finds, and refuses a page with a frame', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${origin()}/sign-in`);
      await page.setContent(`<!doctype html><html lang="en"><head><title>Faults</title></head><body><main><h1>Faults</h1>
        <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20">
        <button></button><a href="#x"></a><input type="text">
        <p style="color:#bbb;background:#fff">Grey on white</p><div role="buttonish">?</div>
        <ul><div>not a list item</div></ul></main></body></html>`);
      const summary = (violations: { id: string; impact?: string | null; nodes: { target: unknown }[] }[]) =>
        violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target) })).sort((a, b) => a.id.localeCompare(b.id));
      const fast = summary(await axeViolations(page));
      expect(fast).toEqual(summary((await new AxeBuilder({ page }).analyze()).violations));
      expect(fast.map((v) => v.id)).toEqual(expect.arrayContaining(['button-name', 'color-contrast', 'image-alt', 'label', 'link-name', 'list']));
      expect(fast.filter((v) => v.impact === 'serious' || v.impact === 'critical').length).toBeGreaterThanOrEqual(5);

      await page.setContent('<!doctype html><html lang="en"><head><title>Framed</title></head><body><main><h1>Framed</h1><iframe title="inner" srcdoc="<p>in a frame</p>"></iframe></main></body></html>');
      await expect(axeViolations(page)).rejects.toThrow(/checks no frame/);
    } finally {
      await page.close();
    }
  });
});
