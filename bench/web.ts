/**
 * `npm run bench:web`: Lighthouse 13 (npm `lighthouse`, Debian's Chromium) on the dashboard's sign-in, Overview and
 * Keys screens of a fresh local stack seeded with the demo month (local/demo-seed.ts). Prints performance,
 * accessibility and best-practices scores, the JavaScript bytes transferred and the time to interactive, and
 * exits 1 when a score is under its target (performance 90, accessibility 95, best practices 95).
 *
 * Lighthouse's default (mobile) settings: a Moto G Power-sized screen, simulated slow 4G and a 4× slower CPU.
 * Signed-in screens are audited in the tab that signed in (storage kept), as a user opens them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { navigation } from 'lighthouse';
import puppeteer from 'puppeteer-core';
import { seedDemo } from '#local/demo-seed.ts';
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
  await browser.close();
  console.table(rows);
  console.log(`Targets: ${Object.entries(TARGETS).map(([c, t]) => `${c} ≥ ${t}`).join(', ')} — ${failed ? 'NOT met' : 'met'}.`);
} finally {
  await stack.stop();
  await rm(stack.dataDir, { recursive: true, force: true });
  await rm(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
