/**
 * axe-core on a screen of the dashboard, as every browser journey runs it on each screen it visits.
 *
 * The dashboard is one document without frames, so axe runs in the page itself (`axe.run` over the document, as
 * @axe-core/playwright's legacy mode does) instead of in each frame and then once more in a new blank page to merge the
 * frames' results (its default, made for cross-origin frames): the same rules on the same nodes. A page with a frame is
 * refused, so nothing is left unchecked. axe is put into a document once (the minified build of the axe-core
 * @axe-core/playwright depends on), and runs again there on each screen the app shows without loading a new document;
 * @axe-core/playwright loads the whole unminified axe twice for every check. Only violations are described node by
 * node (`resultTypes`); what passed is not. `test/integration/dashboard.test.ts` holds this to axe's default run
 * (`new AxeBuilder({ page }).analyze()`) on a page with known faults.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';

export type AxeViolation = Awaited<ReturnType<AxeBuilder['analyze']>>['violations'][number];

const require = createRequire(import.meta.url);
/** axe-core as @axe-core/playwright resolves it (its own dependency), its minified build. */
const AXE_SOURCE = readFileSync(createRequire(require.resolve('@axe-core/playwright')).resolve('axe-core/axe.min.js'), 'utf8');
/** What @axe-core/playwright configures after loading axe into a page without frames. */
const AXE_CONFIGURE = `;axe.configure({ allowedOrigins: ["<same_origin>"], branding: { application: 'playwright' } });`;

// In the page (this project's tsconfig has no DOM lib).
declare const window: { axe?: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } };
declare const document: unknown;

export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const frames = page.frames().length;
  if (frames !== 1) throw new Error(`axe in the page checks no frame, and this page has ${frames - 1}: use new AxeBuilder({ page }).analyze()`);
  if (!(await page.evaluate(() => typeof window.axe?.run === 'function'))) await page.evaluate(AXE_SOURCE + AXE_CONFIGURE);
  return page.evaluate(async () => (await window.axe!.run(document, { resultTypes: ['violations'] })).violations);
}
