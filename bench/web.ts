/**
 * `npm run bench:web`: Lighthouse 13 (npm `lighthouse`, Debian's Chromium) on the dashboard's sign-in, Overview and
 * Keys screens of a fresh local stack seeded with the demo month (local/demo-seed.ts). Prints performance,
 * accessibility and best-practices scores, the JavaScript bytes transferred and the time to interactive, and
 * exits 1 when a score is under its target (performance 90, accessibility 95, best practices 95).
 *
 * Lighthouse's default (mobile) settings: a Moto G Power-sized screen, simulated slow 4G and a 4× slower CPU.
 * Signed-in screens are audited in the tab that signed in (storage kept), as a user opens them.
 *
 * Then the same on a SCALE account of KEYS keys × 10 models × DAYS days (default 1,000 × 90, loaded with ingestion's
 * own item builders: bench/scale-account.ts; `KEYS=0` skips it): Lighthouse on Overview and Keys, the time until
 * each screen's content is visible with the CPU really slowed 4× (CDP, not simulated; a warm load, as a user
 * switching screens), and the API calls each screen makes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { navigation } from 'lighthouse';
import puppeteer from 'puppeteer-core';
import { seedDemo } from '#local/demo-seed.ts';
import { intOption } from './lib.ts';
import { scaleAccount } from './scale-account.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/browser/chromium.ts';
import { startStackProcess } from '../test/integration/global-setup.ts';

const TARGETS = { performance: 90, accessibility: 95, 'best-practices': 95 } as const;

const stack = await startStackProcess(undefined, { RATE_LIMITS: 'off' });
const profile = await mkdtemp(join(tmpdir(), 'burnrate-lighthouse-'));
let failed = false;
try {
  const origin = stack.info.apiUrl.replace(/\/api$/, '');
  const demo = await seedDemo(stack.info.apiUrl);
  const browser = await puppeteer.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, `--user-data-dir=${profile}`], headless: true });
  const page = await browser.newPage();
  const rows: Record<string, string | number>[] = [];

  const cdp = await page.createCDPSession();
  const audit = async (name: string, path: string) => {
    // A cold load (no cached files), in the signed-in tab (its sessionStorage kept).
    await cdp.send('Network.clearBrowserCache');
    const result = await navigation(page, `${origin}${path}`, {
      flags: { disableStorageReset: true, onlyCategories: Object.keys(TARGETS) },
    });
    const lhr = result!.lhr;
    const requests = (lhr.audits['network-requests']?.details as { items?: { resourceType?: string; transferSize?: number }[] } | undefined)?.items ?? [];
    const jsBytes = requests.filter((r) => r.resourceType === 'Script').reduce((sum, r) => sum + (r.transferSize ?? 0), 0);
    const row: Record<string, string | number> = { screen: name };
    for (const [category, target] of Object.entries(TARGETS)) {
      const score = Math.round((lhr.categories[category]?.score ?? 0) * 100);
      row[category] = score;
      if (score < target) failed = true;
    }
    row['JS (KB transferred)'] = Math.round(jsBytes / 102.4) / 10;
    row['time to interactive (ms)'] = Math.round(lhr.audits.interactive?.numericValue ?? NaN);
    row['largest contentful paint (ms)'] = Math.round(lhr.audits['largest-contentful-paint']?.numericValue ?? NaN);
    row['layout shift'] = Math.round((lhr.audits['cumulative-layout-shift']?.numericValue ?? NaN) * 1000) / 1000;
    row['blocking (ms)'] = Math.round(lhr.audits['total-blocking-time']?.numericValue ?? NaN);
    rows.push(row);
    const below = Object.values(lhr.categories).flatMap((c) =>
      c.auditRefs
        .map((ref) => lhr.audits[ref.id]!)
        .filter((a) => a.score !== null && a.score < 1 && c.id !== 'performance')
        .map((a) => `${c.id}: ${a.id} (${a.title})`),
    );
    if (below.length) console.log(`${name}: audits not passed:\n  ${below.join('\n  ')}`);
  };

  await audit('Sign in', '/sign-in');
  await page.goto(`${origin}/sign-in`);
  await page.locator('input[type=email]').fill(demo.email);
  await page.locator('input[type=password]').fill(demo.password);
  await page.locator('button[type=submit]').click();
  await page.locator('[data-testid=range-total]').wait();
  await audit('Overview', '/');
  await audit('Keys', '/keys');

  const shape = { keys: intOption('keys', 1000, 0), days: intOption('days', 90) };
  const visible: Record<string, string | number>[] = [];
  if (shape.keys > 0) {
    const big = await scaleAccount(stack.info, shape);
    console.log(`loaded ${shape.keys} keys × 10 models × ${shape.days} days in ${Math.round(big.loadMs / 1000)} s`);
    await page.evaluate(() => (globalThis as any).sessionStorage.clear());
    await page.goto(`${origin}/sign-in`);
    await page.locator('input[type=email]').fill(big.email);
    await page.locator('input[type=password]').fill(big.password);
    await page.locator('button[type=submit]').click();
    await page.locator('[data-testid=range-total]').wait();
    await audit(`Overview, ${shape.keys} keys`, '/');
    await audit(`Keys, ${shape.keys} keys`, '/keys');
    // Content visible with the CPU slowed 4×, and the API calls of each screen (the token refresh not counted).
    const calls: string[] = [];
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith('/api/') && !path.startsWith('/api/auth/')) calls.push(path);
    });
    await page.emulateCPUThrottling(4);
    for (const [name, path, content] of [
      ['Overview', '/', '[data-testid=range-total]'],
      ['Keys', '/keys', 'table.keys tbody tr'],
      ['Keys, search "737"', '/keys?q=737', 'table.keys tbody tr'],
      ['Alerts', '/alerts', '[data-testid=alert-counts]'],
      ['Budgets', '/budgets', 'h2'],
    ] as const) {
      await page.goto(`${origin}/settings`);
      await page.locator('h1').wait();
      calls.length = 0;
      const started = performance.now();
      // A click on the navigation (client-side route), as a user moves between screens.
      await page.evaluate((to) => {
        const w = globalThis as any;
        w.history.pushState(null, '', to);
        w.dispatchEvent(new Event('burnrate:navigate'));
      }, path);
      await page.locator(content).wait();
      const ms = Math.round(performance.now() - started);
      await new Promise((r) => setTimeout(r, 500));
      visible.push({ screen: name, 'content visible, 4× CPU (ms)': ms, 'API calls': calls.length, calls: [...new Set(calls)].join(' ') });
    }
    await page.emulateCPUThrottling(null);
  }
  await browser.close();
  console.table(rows);
  if (visible.length) console.table(visible);
  console.log(`Targets: ${Object.entries(TARGETS).map(([c, t]) => `${c} ≥ ${t}`).join(', ')} — ${failed ? 'NOT met' : 'met'}.`);
} finally {
  await stack.stop();
  await rm(stack.dataDir, { recursive: true, force: true });
  await rm(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
