/**
 * Debian's Chromium driven by playwright-core (no browser downloads here): the flags keep it quiet on a closed
 * network (docs/contributing/testing.md). Each launch gets a fresh profile directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface LaunchedBrowser {
  context: BrowserContext;
  /** A second, separate browser (its own profile and storage): another person. */
  another(): Promise<BrowserContext>;
  close(): Promise<void>;
}

/** A persistent context on a fresh profile (Chromium wants `--user-data-dir` through this API). */
export async function launchChromium(options: { colorScheme?: 'light' | 'dark'; width?: number } = {}): Promise<LaunchedBrowser> {
  const dirs: string[] = [];
  const contexts: BrowserContext[] = [];
  const open = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'burnrate-chromium-'));
    dirs.push(dir);
    const context = await chromium.launchPersistentContext(dir, {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
      headless: true,
      colorScheme: options.colorScheme ?? 'light',
      viewport: { width: options.width ?? 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    contexts.push(context);
    return context;
  };
  const context = await open();
  return {
    context,
    another: open,
    async close() {
      await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}

export type { Browser };
