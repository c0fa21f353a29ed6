/**
 * axe-core on a screen of the dashboard, as every browser journey runs it on each screen it visits.
 *
 * The dashboard is one document without frames, so axe runs in the page itself (`axe.run`: @axe-core/playwright's
 * legacy mode) instead of in each frame and then once more in a new blank page to merge the frames' results (its
 * default, made for cross-origin frames): the same rules on the same nodes, in a third of the time. A page with a
 * frame is refused, so nothing is left unchecked. Only violations are described node by node (`resultTypes`); what
 * passed is not. `test/integration/dashboard.test.ts` holds this to axe's default run on a page with known faults.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';

export type AxeViolation = Awaited<ReturnType<AxeBuilder['analyze']>>['violations'][number];

export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const frames = page.frames().length;
  if (frames !== 1) throw new Error(`axe in the page checks no frame, and this page has ${frames - 1}: use new AxeBuilder({ page }).analyze()`);
  return (await new AxeBuilder({ page }).setLegacyMode().options({ resultTypes: ['violations'] }).analyze()).violations;
}
