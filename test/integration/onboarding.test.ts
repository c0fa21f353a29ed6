/**
 * The onboarding journey in Chromium against the local stack, as a newcomer follows the app alone (issue 21):
 * sign in names the product → sign up → Get started (the two ways in) → the Overview's empty state leads back to it →
 * one click creates a sending key → the Node quick start, copied with its button, runs as pasted (the reporter
 * wrapping the OpenAI SDK, against a stand-in of OpenAI's inference API) → the waiting panel turns green with the
 * amount → the Overview shows the same spend as GET /spend. axe-core on Get started, waiting and received.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceStandin, type Standin } from '../../reporter/test/inference-standin.ts';
import { money } from '../../web/src/ui/format.ts';
import { axeViolations } from '../browser/axe.ts';
import { launchChromium, type LaunchedBrowser } from '../browser/chromium.ts';
import { api, stack, uniqueEmail } from './harness.ts';

// Browser globals inside page.evaluate callbacks (this project's tsconfig has no DOM lib; declared here only).
declare const document: { querySelector(selector: string): unknown; activeElement: { textContent: string | null } | null };
declare const navigator: { clipboard: { readText(): Promise<string> } };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const origin = () => stack().apiUrl.replace(/\/api$/, '');
const PASSWORD = 'Onboard1pass';
/** A made-up OpenAI project key: the stand-in takes any well-formed one; only its hash and last 4 characters leave. */
const PROVIDER_KEY = 'sk-proj-onboarding-made-up-key-0000000000x7Qa';

let browser: LaunchedBrowser;
let standin: Standin;
const findings: string[] = [];

beforeAll(async () => {
  // The quick start imports the built reporter package, as an application would.
  const built = run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'reporter'], { cwd: ROOT });
  [browser, standin] = await Promise.all([launchChromium({ width: 1280 }), startInferenceStandin()]);
  await built;
});
afterAll(async () => {
  await browser?.close();
  await standin?.close();
});

/** Waits for the screen's heading and for loading to settle, then runs axe (serious and critical violations collected). */
async function screen(page: Page, heading: string, note = ''): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.waitForFunction(() => !document.querySelector('[role="status"][aria-live]'), undefined, { timeout: 10_000 });
  for (const v of await axeViolations(page)) {
    if (v.impact === 'serious' || v.impact === 'critical') findings.push(`${heading}${note}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }
}

describe('onboarding in Chromium', () => {
  it('sign up → Get started → sending key → the Node quick start as pasted → the panel turns green → the Overview shows the spend', { timeout: 120_000 }, async () => {
    const page = (browser.context.pages()[0] ?? (await browser.context.newPage()));
    page.on('pageerror', (error) => findings.push(`page error: ${error.message}`));
    const email = uniqueEmail('onboard');
    // The panel's checks (GET /keys?sort=lastSeenAt&limit=1), counted to see that they stop once it is green.
    let checks = 0;
    page.on('request', (request) => {
      if (/\/api\/keys\?.*sort=lastSeenAt.*limit=1(&|$)/.test(request.url())) checks += 1;
    });

    // Sign in says what the product is; a newcomer creates an account from there.
    await page.goto(`${origin()}/sign-in`);
    await screen(page, 'Sign in');
    await page.getByText('Burnrate — spend per API key for OpenAI, Anthropic and more, to the micro-dollar.').waitFor();
    await page.getByRole('link', { name: 'Create your account' }).click();
    await screen(page, 'Create your account');
    await page.getByLabel('Company').fill('Newco');
    await page.getByLabel('First name').fill('Nia');
    await page.getByLabel('Last name').fill('Newcomer');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();

    // Sign-up lands on Get started: connections first (the Connections screen), then sending from code.
    await page.waitForURL(`${origin()}/get-started`);
    await screen(page, 'Get started', ' (waiting)');
    expect(await page.getByRole('heading', { level: 2 }).allTextContents()).toEqual(['Connect OpenAI / Anthropic', 'Send from your code']);
    await page.getByRole('link', { name: 'Connect OpenAI / Anthropic' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Get started' }).waitFor();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Waiting' }).textContent()).toBe('Waiting for your first event…');

    // The Overview's empty state offers both ways, the connection first, and leads back to Get started.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await screen(page, 'Overview', ' (empty)');
    const empty = page.locator('.empty', { hasText: 'No spend yet.' });
    expect(await empty.getByRole('link').allTextContents()).toEqual(['Connect OpenAI / Anthropic', 'Send events from your code']);
    await empty.getByRole('link', { name: 'Send events from your code' }).click();
    await screen(page, 'Get started');

    // One click: a sending key, shown once, with the quick start (Node with the reporter first; curl and Python as tabs).
    await page.getByRole('button', { name: 'Create a sending key' }).click();
    const secret = (await page.getByTestId('ingest-secret').textContent())!.trim();
    expect(secret).toMatch(/^brk_/);
    expect(await page.getByRole('tab').allTextContents()).toEqual(['Node (reporter)', 'curl', 'Python (requests)']);
    expect(await page.getByRole('tab', { selected: true }).textContent()).toBe('Node (reporter)');
    // Tabs as the keyboard knows them: arrows move the selection and the focus, and wrap.
    await page.getByRole('tab', { selected: true }).press('ArrowLeft');
    await expect.poll(() => page.getByRole('tab', { selected: true }).textContent()).toBe('Python (requests)');
    await page.getByRole('tab', { selected: true }).press('ArrowRight');
    expect(await page.getByRole('tab', { selected: true }).textContent()).toBe('Node (reporter)');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Node (reporter)');
    await page.getByRole('button', { name: 'Copy the snippet' }).click();
    const quickstart = await page.evaluate(() => navigator.clipboard.readText());
    expect(quickstart).toBe(await page.locator('#snippet-panel pre code').textContent());
    expect(quickstart).toContain(`ingestKey: '${secret}'`);
    // The install line works as written: the reporter is not on a registry, so the line installs it from the repository.
    const how = (await page.locator('#snippet-panel p.muted').first().textContent())!;
    expect(how).toContain('npm install openai <path to your Burnrate clone>/reporter && node quickstart.mjs');
    expect(how).toContain('@burnrate/reporter is not on npm');
    expect(how).not.toContain('npm install openai @burnrate/reporter');
    await screen(page, 'Get started', ' (key and quick start)');

    // The quick start runs as pasted, with a made-up provider key and OpenAI's base URL pointing at the stand-in.
    const dir = join(ROOT, '.test-data', 'onboarding');
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'quickstart.mjs');
    await writeFile(file, quickstart);
    const { stdout } = await run(process.execPath, [file], { cwd: ROOT, env: { ...process.env, OPENAI_API_KEY: PROVIDER_KEY, OPENAI_BASE_URL: `${standin.url}/v1` } });
    expect(stdout).toContain('Burnrate: { sent: 1, rejected: 0, dropped: 0, failedBatches: 0 }');

    // The waiting panel turns green: the amount and the key's hint, the same figures as the API's.
    const panel = page.getByTestId('first-event');
    await panel.filter({ hasText: 'First event received' }).waitFor({ timeout: 20_000 });
    expect(await panel.getAttribute('class')).toContain('received');
    const checksUntilGreen = checks;
    expect(checksUntilGreen).toBeGreaterThan(0);
    const login = await api('/auth/login', { method: 'POST', body: { email, password: PASSWORD } });
    const spend = (await api('/spend', { token: login.body.token })).body;
    expect(spend.total.requests).toBe(1);
    expect(spend.total.costUsd).toBeGreaterThan(0);
    expect(await panel.textContent()).toBe(`First event received: ${money(spend.total.costUsd)} from key …x7Qa.`);
    const key = (await api(`/keys/${createHash('sha256').update(PROVIDER_KEY).digest('hex')}`, { token: login.body.token })).body;
    expect(key.spend.total).toBe(spend.total.costUsd);
    await screen(page, 'Get started', ' (received)');

    // The Overview shows that spend.
    await page.getByRole('link', { name: 'See it on the Overview' }).click();
    await screen(page, 'Overview', ' (first spend)');
    await expect.poll(() => page.getByTestId('range-total').textContent()).toBe(money(spend.total.costUsd));
    expect(await page.getByTestId('range-total').getAttribute('value')).toBe(String(spend.total.costUsd));

    // The address is not verified yet: where alerts are set up and read, the screen says that alert e-mails are
    // withheld and offers a new link.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alert rules' }).click();
    await screen(page, 'Alert rules', ' (unverified)');
    await page.getByTestId('email-withheld').filter({ hasText: `Alert e-mails are withheld from you until your address ${email} is verified` }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
    await screen(page, 'Alerts', ' (unverified)');
    const withheld = page.getByTestId('email-withheld');
    await withheld.getByRole('button', { name: 'Send a new link' }).click();
    await withheld.getByText('A new link is on its way.').waitFor();

    // No check after the panel turned green: not while it stayed on screen (axe alone outlasts the 2-second
    // interval), nor after the screen was left.
    expect(checks).toBe(checksUntilGreen);
    expect(findings).toEqual([]);
  });
});
