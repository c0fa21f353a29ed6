/** `npm start` rebuilds the dashboard exactly when its build is missing or older than one of its sources. */
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webBuildIsStale } from '#local/web.ts';

let dir: string;
afterEach(() => rm(dir, { recursive: true, force: true }));

async function file(path: string, secondsAgo: number): Promise<void> {
  const full = join(dir, path);
  await mkdir(join(full, '..'), { recursive: true });
  await writeFile(full, 'x');
  const when = new Date(Date.now() - secondsAgo * 1000);
  await utimes(full, when, when);
}

describe('webBuildIsStale', () => {
  it('is stale without a build, fresh after one, stale again when a nested source changes', async () => {
    dir = await mkdtemp(join(tmpdir(), 'burnrate-web-'));
    await file('src/screens/keys/index.tsx', 300);
    await file('index.html', 300);
    await file('vite.config.ts', 300);
    expect(await webBuildIsStale(dir)).toBe(true);
    await file('dist/index.html', 200);
    // Directories' own times count too: make them old.
    for (const d of ['src', 'src/screens', 'src/screens/keys']) await utimes(join(dir, d), new Date(Date.now() - 300_000), new Date(Date.now() - 300_000));
    expect(await webBuildIsStale(dir)).toBe(false);
    await file('src/screens/keys/index.tsx', 100);
    expect(await webBuildIsStale(dir)).toBe(true);
    await file('dist/index.html', 50);
    expect(await webBuildIsStale(dir)).toBe(false);
    await file('public/favicon.svg', 10);
    expect(await webBuildIsStale(dir)).toBe(true);
  });
});
