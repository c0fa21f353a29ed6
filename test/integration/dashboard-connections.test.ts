/**
 * Provider connections in the dashboard (issue 20), in Chromium against the real local stack and its OpenAI admin
 * API stand-in (an organization of this file's own, so its forced faults reach no other file): an admin connects the
 * organization from the Connections screen (an inference key first: refused in the user's words; then OpenAI down for
 * one call: "could not be reached", nothing stored), the first sync fails on OpenAI's 5xx (the status and its detail
 * in words), Sync now recovers it, Sync now again at once (a wait in words from Retry-After), the Overview's top keys
 * are named by the provider's key names, the keys of the organization appear on Keys with their provider's name and
 * source, the reconciliation shows computed vs billed with the same totals as the API, the disconnect dialog says what
 * stays; axe on each new screen, light; no sideways scrolling at 360 px. A viewer sees the connection and none of the
 * admin's buttons. Then the admin connects Anthropic (an organization of this file's own, its clock frozen): every key
 * of it is on Keys, each with the stand-in's token counts priced by the table as its spend.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from '../../web/src/ui/format.ts';
import { axeViolations } from '../browser/axe.ts';
import { launchChromium, type LaunchedBrowser } from '../browser/chromium.ts';
import { api, registerUser, setPlan, stack, uniqueEmail, type RegisteredUser } from './harness.ts';
import { linkInMail } from './outbox.ts';
import { keyHash, newStandInOrg, pricedTruth, type StandInOrg } from './standins.ts';

declare const sessionStorage: { setItem(key: string, value: string): void };
declare const document: { querySelector(selector: string): unknown; documentElement: { scrollWidth: number } };

const origin = () => stack().apiUrl.replace(/\/api$/, '');
let browser: LaunchedBrowser;
let admin: RegisteredUser;
let org: StandInOrg;
/** An Anthropic organization of this file's own, its clock frozen and no late arrivals: its truth holds still. */
let anthropicOrg: StandInOrg;
/** An OpenRouter account of this file's own, its clock frozen. */
let openrouterOrg: StandInOrg;
const axeFindings: string[] = [];

beforeAll(async () => {
  [browser, admin, org, anthropicOrg, openrouterOrg] = await Promise.all([
    launchChromium({ width: 1280 }),
    registerUser({ companyName: 'Northwind Buyers' }),
    newStandInOrg('openai'),
    newStandInOrg('anthropic', { now: Math.floor(Date.now() / 1000), late: null }),
    newStandInOrg('openrouter', { now: Math.floor(Date.now() / 1000) }),
  ]);
  // The stand-in's organization has more keys than FREE's five.
  await setPlan(admin.accountId, 'GROWTH');
});
afterAll(async () => {
  await browser?.close();
  // The connection first (no scheduled sync of it meets a removed organization), then the organization.
  const connections = admin ? ((await api('/connections', { token: admin.token })).body?.items ?? []) : [];
  for (const c of connections as { id: string }[]) await api(`/connections/${c.id}`, { method: 'DELETE', token: admin.token });
  await org?.remove();
  await anthropicOrg?.remove();
  await openrouterOrg?.remove();
});

/** Waits for the screen's heading and for loading to settle, then runs axe: serious and critical violations are collected. */
async function screen(page: Page, heading: string | RegExp, note = ''): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.waitForFunction(() => !document.querySelector('[role="status"][aria-live]'), undefined, { timeout: 10_000 });
  for (const v of await axeViolations(page)) {
    if (v.impact === 'serious' || v.impact === 'critical') axeFindings.push(`${heading}${note}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }
}

async function signIn(page: Page, user: RegisteredUser): Promise<void> {
  await page.goto(`${origin()}/sign-in`);
  await page.evaluate((token) => sessionStorage.setItem('burnrate.refreshToken', token), user.refreshToken);
}

describe('Connections in Chromium', () => {
  it('connect OpenAI (down once: 502 in words) → first sync fails in words → Sync now recovers (again: its wait) → top keys by name → keys on Keys → reconciliation → disconnect dialog; a viewer sees no admin buttons → Anthropic: every key, exact', { timeout: 150_000 }, async () => {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('pageerror', (error) => axeFindings.push(`page error: ${error.message}`));
    await signIn(page, admin);
    await page.goto(`${origin()}/`);
    await screen(page, 'Overview', ' (empty)');
    // The empty Overview offers a connection first.
    await page.getByRole('link', { name: 'Connect OpenAI / Anthropic' }).click();
    await screen(page, 'Connections', ' (none)');
    await page.getByText('Where to create an OpenAI admin key').waitFor();

    // An inference key: refused before any call, in the user's words, beside the field; the field is emptied.
    await page.getByLabel('Admin key').fill('sk-proj-abcdefghijklmnopqrstuvwxyz0123456789');
    await page.getByRole('button', { name: 'Connect OpenAI' }).click();
    await page.locator('.field-error').filter({ hasText: 'not an admin key' }).waitFor();
    expect(await page.getByLabel('Admin key').inputValue()).toBe('');

    const adminKey = org.adminKey;
    // OpenAI down (this file's stand-in organization answers its next check 503): nothing stored, the API's words shown.
    await org.control('/faults', { status: 503, count: 1, pathPrefix: '/v1/organization/projects' });
    await page.getByLabel('Admin key').fill(adminKey);
    await page.getByRole('button', { name: 'Connect OpenAI' }).click();
    await page.getByRole('alert').filter({ hasText: 'OpenAI could not be reached' }).waitFor();
    expect(await page.getByLabel('Admin key').inputValue()).toBe('');
    expect((await api('/connections', { token: admin.token })).body.items).toEqual([]);

    // Connected, but OpenAI's usage API fails every attempt of the first sync (the worker tries 5 times).
    await org.control('/faults', { status: 503, count: 5, pathPrefix: '/v1/organization/usage/completions' });
    await page.getByLabel('Admin key').fill(adminKey);
    await page.getByLabel('Name (optional)').fill('Northwind OpenAI');
    await page.getByRole('button', { name: 'Connect OpenAI' }).click();
    await page.getByText('OpenAI is connected.').waitFor();
    const card = page.getByRole('article', { name: /Northwind OpenAI/ });
    await card.getByText('Active').waitFor();
    // The admin key is never echoed: only its last 4 characters.
    expect(await page.content()).not.toContain(adminKey);
    expect(await card.textContent()).toContain(`admin key ending ${adminKey.slice(-4)}`);
    // The screen reloads until the first sync has run: it failed, and says so in words; nothing succeeded yet.
    const failed = card.getByText(/^The last sync could not finish: OpenAI answered 503: .+ What was imported stays; the next sync fetches the rest\.$/);
    await failed.waitFor({ timeout: 60_000 });
    expect(await card.locator('dd').nth(1).textContent()).toBe('not yet');
    // The sync has run: nothing on the screen says it is running any more.
    expect(await page.getByText('first sync is running').count()).toBe(0);
    await screen(page, 'Connections', ' (sync failed)');

    // Sync now (OpenAI answers again): queued, then the detail goes and the sync succeeded.
    await card.getByRole('button', { name: 'Sync now' }).click();
    await card.getByText('Sync queued').waitFor();
    await failed.waitFor({ state: 'detached', timeout: 60_000 });
    await expect.poll(async () => card.locator('dd').nth(1).textContent(), { timeout: 60_000, interval: 100 }).not.toBe('not yet');
    await screen(page, 'Connections', ' (connected)');
    // Again at once: the API's 429, its Retry-After in words.
    await card.getByRole('button', { name: 'Sync now' }).click();
    await card.getByText(/A sync was asked for less than a minute ago\. Sync now works again in (\d+ seconds|1 minute)\./).waitFor();

    // The Overview's top keys: connection keys have no label, so each is named by the provider's name of the key.
    const today = new Date().toISOString().slice(0, 10);
    const top = (await api(`/spend?from=${today.slice(0, 8)}01&to=${today}&groupBy=key`, { token: admin.token })).body.groups as { hash: string }[];
    const names = new Map(((await api('/keys?source=connection&provider=openai&limit=100', { token: admin.token })).body.items as { hash: string; name: string | null }[]).map((k) => [k.hash, k.name]));
    expect(top.length).toBeGreaterThan(1);
    await page.goto(`${origin()}/`);
    await screen(page, 'Overview', ' (connection keys)');
    const topKeys = page.getByRole('region', { name: 'Top keys' });
    for (const { hash } of top.slice(0, 3)) {
      const name = names.get(hash);
      expect(name, hash).toEqual(expect.any(String));
      await topKeys.getByRole('link', { name: name!, exact: true }).waitFor({ timeout: 10_000 });
    }
    await page.goto(`${origin()}/connections`);
    await screen(page, 'Connections');

    // The organization's keys on Keys: the provider's name, project and source.
    await card.getByRole('link', { name: 'Its keys' }).click();
    await screen(page, 'Keys', ' (connection keys)');
    const imported = await api('/keys?source=connection&provider=openai&limit=100', { token: admin.token });
    expect(imported.body.total).toBeGreaterThan(5);
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toContain(`${imported.body.total} keys match`);
    const webProd = page.getByRole('row').filter({ hasText: 'web-prod' });
    await expect.poll(() => webProd.textContent()).toContain('OpenAI connection');
    expect(await webProd.textContent()).toContain('project Web app');

    // The reconciliation: the table's totals are the API's.
    const connection = (await api('/connections', { token: admin.token })).body.items[0];
    await page.goto(`${origin()}/connections/${connection.id}`);
    await screen(page, 'Northwind OpenAI: computed vs billed');
    const recon = (await api(`/connections/${connection.id}/reconciliation?from=${connection.importedFrom}&to=${today}`, { token: admin.token })).body;
    expect(await page.getByTestId('recon-computed').textContent()).toBe(money(recon.total.computedUsd));
    expect(await page.getByTestId('recon-billed').textContent()).toBe(money(recon.total.billedUsd));
    expect(await page.getByTestId('recon-estimated').textContent()).toBe(money(recon.total.estimatedUsd));
    // Each billed line explained: storage (usage in units, estimated from its byte-days) on its own line with its
    // estimate, its bill and why they differ; today not billed yet, never $0.00.
    const storage = page.getByTestId('recon-lines').getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'vector_stores', exact: true }) });
    await storage.waitFor();
    expect(await storage.textContent()).toMatch(/As estimated\.|Priced otherwise than your table/);
    if (recon.days.some((d: { billedUsd: number | null }) => d.billedUsd === null)) await page.getByText('not billed yet').first().waitFor();

    // Disconnect asks first and says what stays; "Keep it connected" keeps it.
    await page.getByRole('link', { name: '← Connections' }).click();
    await screen(page, 'Connections');
    await page.getByRole('button', { name: 'Disconnect' }).click();
    const dialog = page.getByRole('dialog', { name: 'Disconnect Northwind OpenAI?' });
    await dialog.getByText('The spend already imported and the keys stay').waitFor();
    await screen(page, 'Connections', ' (disconnect dialog)');
    await dialog.getByRole('button', { name: 'Keep it connected' }).click();
    await dialog.waitFor({ state: 'hidden' });

    // 360 px: nothing scrolls sideways.
    await page.setViewportSize({ width: 360, height: 780 });
    for (const path of ['/connections', `/connections/${connection.id}`]) {
      await page.goto(`${origin()}${path}`);
      await page.locator('h1').waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    }
    // …and the bill's lines fit the screen: each line's estimate, bill and reason in view, not behind a sideways scroll.
    const lines = page.getByTestId('recon-lines');
    expect(await lines.evaluate((t: { parentElement: { scrollWidth: number; clientWidth: number } }) => t.parentElement.scrollWidth - t.parentElement.clientWidth)).toBeLessThanOrEqual(0);

    // A viewer of the account (invited, the link of the e-mail accepted): the connection, no admin button, no form.
    const viewerEmail = uniqueEmail('conn-viewer');
    expect((await api('/invitations', { method: 'POST', token: admin.token, body: { email: viewerEmail, role: 'viewer' } })).status).toBe(201);
    const { token } = await linkInMail(viewerEmail, '/accept-invitation');
    const accepted = await api('/auth/accept-invitation', { method: 'POST', body: { token, password: 'Viewer1pass', firstName: 'Vic', lastName: 'Viewer' } });
    expect(accepted.status).toBe(201);
    const other = await browser.another();
    const viewer = other.pages()[0] ?? (await other.newPage());
    await signIn(viewer, { ...admin, refreshToken: accepted.body.refreshToken });
    await viewer.goto(`${origin()}/connections`);
    await screen(viewer, 'Connections', ' (viewer)');
    await viewer.getByRole('article', { name: /Northwind OpenAI/ }).getByText('Active').waitFor();
    expect(await viewer.getByRole('button').allTextContents()).toEqual(['Sign out']);
    await viewer.getByText('Only an admin can connect a provider').waitFor();

    // Get started with OpenAI connected: the quick start says why it reports Anthropic calls (OpenAI's events are
    // refused), and the panel turns green only for an event ingestion accepted: not for a refused OpenAI event, not for
    // a sync of the connection's keys.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${origin()}/get-started`);
    await screen(page, 'Get started', ' (OpenAI connected)');
    await page.getByRole('button', { name: 'Create a sending key' }).click();
    const secret = (await page.getByTestId('ingest-secret').textContent())!.trim();
    await page.getByTestId('refused-note').filter({ hasText: 'OpenAI is connected' }).waitFor();
    expect(await page.getByTestId('refused-note').textContent()).toContain('The snippets below report an Anthropic call instead.');
    const nodeSnippet = (await page.locator('#snippet-panel pre code').textContent())!;
    expect(nodeSnippet).toContain(`import Anthropic from '@anthropic-ai/sdk';`);
    expect(nodeSnippet).not.toContain(`from 'openai'`);
    expect(await page.locator('#snippet-panel p.muted').first().textContent()).toContain('npm install @anthropic-ai/sdk <path to your Burnrate clone>/reporter');
    // The account has keys, but none from events: the first event accepted is its first.
    await page.getByTestId('first-event').filter({ hasText: 'Waiting for your first event…' }).waitFor();
    const send = (events: object[]) =>
      fetch(`${stack().apiUrl}/ingest`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': secret }, body: JSON.stringify({ events }) }).then((r) => r.json() as Promise<any>);
    const refused = await send([{ requestId: 'gs-openai', keyHash: 'a'.repeat(64), keyHint: 'oAAA', provider: 'openai', model: 'gpt-4o-mini', inputTokens: 10, outputTokens: 10, costUsd: 0.5 }]);
    expect(refused.rejected.map((r: { code: string }) => r.code)).toEqual(['provider_connected']);
    // A sync of the connection (when one may be asked for now), its keys' figures refreshed.
    const asked = await api(`/connections/${connection.id}/sync`, { method: 'POST', token: admin.token });
    if (asked.status === 202) {
      const askedAt = new Date().toISOString();
      await expect.poll(async () => ((await api(`/connections/${connection.id}`, { token: admin.token })).body.lastSyncAt ?? '') > askedAt, { timeout: 60_000, interval: 100 }).toBe(true);
    }
    const taken = await send([{ requestId: 'gs-anthropic', keyHash: 'b'.repeat(64), keyHint: 'x7Qb', provider: 'anthropic', model: 'claude-3-5-haiku-latest', inputTokens: 10, outputTokens: 10, costUsd: 0.0015 }]);
    expect(taken.accepted).toBe(1);
    const panel = page.getByTestId('first-event');
    await panel.filter({ hasText: 'received' }).waitFor({ timeout: 20_000 });
    expect(await panel.textContent()).toBe('First event received: $0.0015 from key …x7Qb.');

    // Anthropic from the same screen: within a minute every key of its organization is on Keys, each key's spend the
    // API's (today: the stand-in's token counts priced by the table).
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${origin()}/connections`);
    await screen(page, 'Connections');
    await page.getByLabel('Provider', { exact: true }).selectOption('anthropic');
    await page.getByText('Where to create an Anthropic admin key').waitFor();
    await page.getByLabel('Admin key').fill(anthropicOrg.adminKey);
    await page.getByRole('button', { name: 'Connect Anthropic' }).click();
    // Both providers connected: the form gives way to the new connection's card.
    await page.getByRole('article', { name: /Anthropic organization/ }).getByText('Active').waitFor();
    const anthropicConnection = async () => ((await api('/connections', { token: admin.token })).body.items as { provider: string; lastSuccessAt: string | null }[]).find((c) => c.provider === 'anthropic');
    await expect.poll(async () => (await anthropicConnection())?.lastSuccessAt ?? null, { timeout: 60_000, interval: 100 }).not.toBeNull();
    const want = pricedTruth('anthropic', await anthropicOrg.control(`/truth?from=${anthropicOrg.importFrom}&to=${today}`));
    const perKey = new Map<string, bigint>();
    for (const [cell, c] of want) perKey.set(cell.split('|')[0]!, (perKey.get(cell.split('|')[0]!) ?? 0n) + c.costMicros);
    const listed = (await api('/keys?source=connection&provider=anthropic&limit=100', { token: admin.token })).body as { total: number; items: { hash: string }[] };
    const listedHashes = new Set(listed.items.map((k) => k.hash));
    // Every key the organization lists, and every key (or none: Console use) with usage, deleted ones included.
    for (const k of (await anthropicOrg.state()).keys as { id: string; status: string }[]) if (k.status !== 'deleted') expect(listedHashes, k.id).toContain(keyHash('anthropic', k.id));
    for (const hash of perKey.keys()) expect(listedHashes, hash).toContain(hash);
    await page.goto(`${origin()}/keys?source=connection&provider=anthropic`);
    await screen(page, 'Keys', ' (Anthropic connection keys)');
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toContain(`${listed.total} keys match`);
    // Each key's spend as the API has it: its days Anthropic billed settled to the bill (allocated to the keys, code
    // execution on "No API key"), today the table's estimate; together, the connection's computed total.
    const shown = (await page.locator('table.keys tbody td[data-label="All time"]').allTextContents()).map((t) => t.trim()).sort();
    const byApi = (listed as unknown as { items: { hash: string; spend: { total: number } }[] }).items;
    expect(shown).toEqual(byApi.map((k) => money(k.spend.total)).sort());
    const { id: anthropicId } = (await api('/connections', { token: admin.token })).body.items.find((c: { provider: string }) => c.provider === 'anthropic');
    const anthropicRecon = (await api(`/connections/${anthropicId}/reconciliation?from=${anthropicOrg.importFrom}&to=${today}`, { token: admin.token })).body;
    expect(byApi.reduce((sum, k) => sum + BigInt(Math.round(k.spend.total * 1e6)), 0n)).toBe(BigInt(Math.round(anthropicRecon.total.computedUsd * 1e6)));
    const todays = (await api(`/spend?from=${today}&to=${today}&groupBy=key&provider=anthropic`, { token: admin.token })).body.groups as { hash: string; costUsd: number }[];
    const todayWant = new Map<string, bigint>();
    for (const [cell, c] of want) if (cell.split('|')[1] === today) todayWant.set(cell.split('|')[0]!, (todayWant.get(cell.split('|')[0]!) ?? 0n) + c.costMicros);
    // The connection's keys (a key that sent events before Anthropic was connected keeps its own spend).
    const connectionKeys = new Set(byApi.map((k) => k.hash));
    // Today's own usage, without corrections: OpenAI's first sync closed last month (every connection then had settled
    // it), so Anthropic's history of that month is booked today as corrections (a closed month never changes).
    for (const g of todays.filter((t) => connectionKeys.has(t.hash))) {
      const rows = (await api(`/keys/${g.hash}?from=${today}&to=${today}`, { token: admin.token })).body.breakdown.byModel as { costUsd: number; correction?: boolean }[];
      const own = rows.filter((r) => r.correction !== true).reduce((sum, r) => sum + BigInt(Math.round(r.costUsd * 1e6)), 0n);
      expect(money(Number(own) / 1e6), g.hash).toBe(money(Number(todayWant.get(g.hash) ?? 0n) / 1e6));
    }

    // Both providers connected and synced, a range without spend: the Overview says so, with each connection's last
    // sync, and offers no connection it already has (not "No spend yet… Connect OpenAI / Anthropic").
    await page.goto(`${origin()}/?range=custom&from=2025-01-01&to=2025-01-07`);
    await screen(page, 'Overview', ' (both connected, a range without spend)');
    // Days before what the connections could import are unknown, never "no spend": the note names each provider's gap.
    await page.getByText('Nothing could be imported for this range: see the note above.').waitFor();
    expect(await page.getByTestId('no-spend-in-range').count()).toBe(0);
    const coverage = (await api('/spend?from=2025-01-01&to=2025-01-07', { token: admin.token })).body.coverage as { complete: boolean; notes: { code: string; provider?: string }[] };
    expect(coverage.complete).toBe(false);
    expect(coverage.notes.filter((n) => n.code === 'history_unavailable').map((n) => n.provider).sort()).toEqual(['anthropic', 'openai']);
    expect(await page.locator('main').getByText('No spend yet').count()).toBe(0);
    expect(await page.locator('main').getByRole('link', { name: 'Connect OpenAI / Anthropic' }).count()).toBe(0);
    expect(axeFindings).toEqual([]);
  });

  it('OpenRouter: connected with its management key → its keys on Keys, the disabled one too → the project view, with a budget for a project', { timeout: 120_000 }, async () => {
    // After the test above (its OpenAI connection's projects are the project view's).
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, admin);
    // OpenAI's and Anthropic's months of requests fill GROWTH's tracked requests: SCALE, so OpenRouter's history fits.
    await setPlan(admin.accountId, 'SCALE');
    await page.goto(`${origin()}/connections`);
    await screen(page, 'Connections', ' (OpenRouter form)');
    await page.getByLabel('Provider', { exact: true }).selectOption('openrouter');
    await page.getByText('Where to create an OpenRouter management key').waitFor();
    await page.getByLabel('Management key').fill(openrouterOrg.adminKey);
    await page.getByRole('button', { name: 'Connect OpenRouter' }).click();
    await page.getByRole('article', { name: /OpenRouter organization/ }).getByText('Active').waitFor();
    const connection = async () => ((await api('/connections', { token: admin.token })).body.items as { provider: string; lastSuccessAt: string | null }[]).find((c) => c.provider === 'openrouter');
    await expect.poll(async () => (await connection())?.lastSuccessAt ?? null, { timeout: 60_000, interval: 100 }).not.toBeNull();

    const state = await openrouterOrg.state();
    const listedKeys = (state.keys as { id: string; name: string; status: string }[]).filter((k) => k.status !== 'deleted');
    await page.goto(`${origin()}/keys?provider=openrouter`);
    await screen(page, 'Keys', ' (OpenRouter keys)');
    // The organization's keys, and its usage no listed key explains (OpenRouter's activity without a key), as the API lists them.
    const openrouterKeys = (await api('/keys?provider=openrouter&limit=100', { token: admin.token })).body as { total: number; items: { hash: string }[] };
    expect(openrouterKeys.total - listedKeys.length).toBeLessThanOrEqual(1);
    await expect.poll(() => page.getByTestId('keys-total').textContent()).toContain(`${openrouterKeys.total} keys match`);
    for (const k of listedKeys) await page.locator('table.keys tbody').getByText(k.name).first().waitFor();
    await page.getByText('inactive at OpenRouter').first().waitFor();
    await page.screenshot({ path: 'docs/screenshots/keys-openrouter-light.png', fullPage: true });
    // The key page of an OpenRouter key: its credit limit and its hash at OpenRouter.
    const limited = listedKeys.find((k) => k.name === 'Production')!;
    await page.goto(`${origin()}/keys/${keyHash('openrouter', limited.id)}`);
    await page.getByRole('heading', { level: 1, name: /Production/ }).waitFor();
    await page.getByText('Credit limit at OpenRouter').waitFor();
    await page.getByText('$5,000.00').first().waitFor();
    // Its history (the activity's days, per model) as well as today.
    await page.getByRole('cell', { name: 'openrouter/openai/gpt-4.1' }).first().waitFor();
    await page.getByText(limited.id).waitFor();
    await page.screenshot({ path: 'docs/screenshots/key-openrouter-light.png', fullPage: true });

    const today = new Date().toISOString().slice(0, 10);
    await page.goto(`${origin()}/projects`);
    await screen(page, 'Projects');
    await page.getByRole('link', { name: 'OpenRouter keys without a project' }).waitFor();
    const spend = await api(`/spend?groupBy=project&from=${today.slice(0, 8)}01&to=${today}`, { token: admin.token });
    const project = (spend.body.groups as { provider: string; project: { id: string; name: string } | null }[]).find((g) => g.provider === 'openai' && g.project)!.project!;
    await page.getByRole('link', { name: project.name, exact: true }).click();
    await page.getByRole('heading', { level: 2, name: new RegExp(project.name) }).waitFor();
    const keys = await api(`/keys?projectId=${encodeURIComponent(project.id)}&provider=openai&limit=100`, { token: admin.token });
    await expect.poll(() => page.getByRole('region', { name: `Keys of ${project.name}` }).locator('tbody tr').count()).toBe(keys.body.items.length);
    const budget = page.getByRole('link', { name: 'Set a budget for this project' });
    expect(await budget.getAttribute('href')).toContain(`scope=PROJECT&projectId=${encodeURIComponent(project.id)}`);
    await screen(page, 'Projects', ' (a project chosen)');
    await page.screenshot({ path: 'docs/screenshots/projects-light.png', fullPage: true });

    // Budgets that stop spend. The admin lets budgets act on the OpenAI connection (its switch on Connections).
    const projectUrl = page.url();
    const openai = ((await api('/connections', { token: admin.token })).body.items as { id: string; provider: string; name: string }[]).find((c) => c.provider === 'openai')!;
    await page.goto(`${origin()}/connections`);
    const card = page.getByRole('article', { name: new RegExp(openai.name) });
    await card.getByRole('button', { name: 'Let budgets stop spend' }).click();
    await card.getByText('Yes: project and account budgets set projects’ hard limits at OpenAI').waitFor();
    // The Projects screen's link opens the new-budget form filled in: the scope, the project (by name), a name.
    await page.goto(projectUrl);
    await page.getByRole('link', { name: 'Set a budget for this project' }).click();
    await screen(page, 'Budgets', ' (a project budget filled in)');
    const title = `${project.name} (OpenAI)`;
    expect(await page.getByLabel('Applies to').inputValue()).toBe('PROJECT');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(title);
    const picker = page.getByLabel('Project or workspace', { exact: true });
    await expect.poll(() => picker.inputValue()).toBe(`${openai.id}|${project.id}`);
    await expect.poll(() => picker.locator('option:checked').textContent()).toContain(`${project.name} — OpenAI project, connection ${openai.name}`);
    // A stop budget below what the project spent: OpenAI's limit is set by the sync it queues, and enforced at once.
    await page.getByLabel('Monthly limit (US dollars)').fill('0.01');
    await page.getByLabel('Stop spend at the limit').check();
    await page.getByText('Sets the project’s own hard spend limit at OpenAI').waitFor();
    await page.getByRole('button', { name: 'Create budget' }).click();
    const budgetCard = page.getByRole('list', { name: 'Budgets' }).getByRole('listitem').filter({ has: page.getByRole('heading', { name: title }) });
    await budgetCard.waitFor();
    const budgetId = async () => ((await api('/budgets', { token: admin.token })).body.items as { id: string; name: string }[]).find((b) => b.name === title)!.id;
    const enforcement = async () => ((await api('/budgets', { token: admin.token })).body.items as { name: string; enforcement: { status: string } | null }[]).find((b) => b.name === title)?.enforcement?.status;
    await expect.poll(enforcement, { timeout: 30_000, interval: 250 }).toBe('stopped');
    await page.reload();
    await budgetCard.getByText('Spend stopped').waitFor();
    await budgetCard.getByText(/since /).waitFor();
    await budgetCard.getByText(/hard spend limit \$0\.01 a month, enforced by OpenAI/).waitFor();
    // Every key of the capped project says so on Keys and on its page, naming the budget and the lever.
    const budgetsUrl = page.url();
    await page.goto(`${origin()}/keys?provider=openai&q=${keys.body.items[0].hash.slice(0, 12)}`);
    await screen(page, 'Keys', ' (keys of a capped project)');
    const capped = page.getByTestId('stopped-by').first();
    await expect.poll(() => capped.textContent()).toMatch(new RegExp(`^Stopped by budget “${title.replace(/[()]/g, '\\$&')}” \\(its project’s spend limit at OpenAI is reached, since `));
    await page.goto(`${origin()}/keys/${keys.body.items[0].hash}`);
    await page.getByTestId('key-stopped').getByRole('link', { name: `budget “${title}”` }).waitFor();
    expect(await page.getByTestId('key-stopped').textContent()).toContain('its project’s spend limit at OpenAI is reached');
    // And the project's own view lists its keys stopped, from the same GET /keys.
    await page.goto(projectUrl);
    const projectKeys = page.getByRole('region', { name: `Keys of ${project.name}` });
    const stoppedNow = ((await api(`/keys?projectId=${encodeURIComponent(project.id)}&provider=openai&limit=100`, { token: admin.token })).body.items as { stoppedBy: unknown[] }[]).filter((k) => k.stoppedBy.length > 0);
    expect(stoppedNow.length).toBeGreaterThan(0);
    await expect.poll(() => projectKeys.getByTestId('stopped-by').count()).toBe(stoppedNow.length);
    expect(new Set(await projectKeys.getByTestId('stopped-by').allTextContents()).size).toBe(1);
    await page.goto(budgetsUrl);
    await budgetCard.getByText('Spend stopped').waitFor();
    // Release for this month: the card says so as soon as the release answers (no reload); the limit comes off at
    // OpenAI with the sync it queues.
    await budgetCard.getByRole('button', { name: `Release budget ${title} for this month` }).click();
    await budgetCard.getByText('Released for this month').waitFor({ timeout: 5_000 });
    expect(await budgetCard.getByText('Spend stopped').count()).toBe(0);
    expect(await budgetCard.getByRole('button', { name: /Release budget/ }).count()).toBe(0);
    expect(await enforcement()).toBe('released');
    // The budget says released as soon as its release answers; the limit comes off at OpenAI with the sync it queued.
    await expect.poll(async () => (await org.get(`/v1/organization/projects/${project.id}/spend_limit`)).status, { timeout: 30_000, interval: 250 }).toBe(404);
    // The actions list: what was done, why, and by whom.
    // Saved past its limit: the act that set the limit stopped spend, so its reason is "limit reached" (not "budget changed").
    await budgetCard.getByText('Actions', { exact: true }).click();
    const acts = budgetCard.getByRole('list', { name: 'Actions of this budget' });
    await acts.getByText(/Project limit removed \(released, by a person\)/).waitFor();
    await acts.getByText(/Project limit set \(limit reached\)/).waitFor();
    expect(((await api(`/enforcement-actions?budgetId=${await budgetId()}`, { token: admin.token })).body.items as unknown[]).length).toBe(await acts.getByRole('listitem').count());
    await screen(page, 'Budgets', ' (a stop budget released)');
    expect(axeFindings).toEqual([]);
  });
});
