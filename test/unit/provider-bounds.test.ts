/**
 * The bounds on provider reads (shared/connections/pages.ts, http.ts `readBody`): pages, items, repeats, body size;
 * and what an organization is known by for a rotation (shared/connections/organization.ts).
 */
import { describe, expect, it } from 'vitest';
import { inPool, itemBudget, MAX_BODY_BYTES, MAX_LIST_ITEMS, MAX_PAGES, ProviderLimitExceeded, readPages } from '#shared/connections/pages.ts';
import { providerHttp, readBody } from '#shared/connections/http.ts';
import { compareOrganizations, MAX_STORED_ORGANIZATION_IDS, organizationAfterSync } from '#shared/connections/organization.ts';

const limitOf = async (p: Promise<unknown>) => {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderLimitExceeded);
  return { limit: (error as ProviderLimitExceeded).limit, message: (error as Error).message };
};

describe('readPages', () => {
  it('reads every page to the end, an item listed twice once', async () => {
    const pages: Record<string, { items: string[]; next?: string }> = { '': { items: ['a', 'b'], next: 'p2' }, p2: { items: ['b', 'c'], next: 'p3' }, p3: { items: ['d'] } };
    expect(await readPages('/list', async (c) => pages[c ?? '']!, { idOf: (x) => x })).toEqual(['a', 'b', 'c', 'd']);
  });

  it('stops at 1,000 pages, naming the bound', async () => {
    let reads = 0;
    const error = await limitOf(readPages('/v1/things', async (c) => ((reads += 1), { items: [reads], next: String(Number(c ?? 0) + 1) })));
    expect(error).toEqual({ limit: 'pages', message: 'The provider\'s /v1/things went on past 1,000 pages, the most Burnrate reads of one list.' });
    expect(reads).toBe(MAX_PAGES);
  });

  it('stops past 100,000 items (a report counts its rows)', async () => {
    const error = await limitOf(readPages('/keys', async (c) => ({ items: Array.from({ length: 1000 }, (_, i) => `${c ?? 0}-${i}`), next: String(Number(c ?? 0) + 1) }), { idOf: (x) => x }));
    expect(error.limit).toBe('items');
    expect(error.message).toContain('more than 100,000 items');
    const rows = await limitOf(readPages('/report', async (c) => ({ items: [{ results: MAX_LIST_ITEMS / 2 }], next: c === undefined ? 'p2' : c === 'p2' ? 'p3' : undefined }), { weight: (b) => b.results }));
    expect(rows.limit).toBe('items');
  });

  it('a cursor given twice, or a page of items all listed before (an ignored offset), is an error', async () => {
    const cursor = await limitOf(readPages('/report', async (c) => ({ items: [1], next: c === 'b' ? 'a' : c === 'a' ? 'b' : 'a' })));
    expect(cursor).toEqual({ limit: 'repeat', message: 'The provider gave a page cursor of /report it had given before (page 3): the list would never end.' });
    const same = await limitOf(readPages('/keys', async (c) => ({ items: ['k1', 'k2'], next: String(Number(c ?? 0) + 2) }), { idOf: (x) => x }));
    expect(same.limit).toBe('repeat');
    expect(same.message).toContain('page 2 of /keys with items it had listed already');
  });
});

describe('readBody', () => {
  const stream = (chunks: number, size: number, pulled: { n: number }) =>
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled.n >= chunks) return controller.close();
        pulled.n += 1;
        controller.enqueue(new Uint8Array(size).fill(0x61));
      },
    });

  it('refuses a body past the bound while it streams, reading no more than the bound and a chunk', async () => {
    const pulled = { n: 0 };
    const res = new Response(stream(1000, 1024 * 1024, pulled));
    const error = await limitOf(readBody(res, MAX_BODY_BYTES, '/api/v1/keys'));
    expect(error).toEqual({ limit: 'body', message: 'The provider answered /api/v1/keys with a body over 32 MB, the most Burnrate reads of one answer; it was refused while it arrived.' });
    expect(pulled.n).toBeLessThanOrEqual(33 + 1);
  });

  it('refuses at once a body whose content-length passes the bound; reads one within it', async () => {
    const pulled = { n: 0 };
    const big = new Response(stream(2, 10, pulled), { headers: { 'content-length': String(MAX_BODY_BYTES + 1) } });
    expect((await limitOf(readBody(big, MAX_BODY_BYTES, '/x'))).limit).toBe('body');
    expect(pulled.n).toBeLessThanOrEqual(1);
    expect(await readBody(new Response('{"data":[]}'), MAX_BODY_BYTES, '/x')).toBe('{"data":[]}');
  });

  it('providerHttp refuses an oversized answer unretried (one request)', async () => {
    let requests = 0;
    const http = providerHttp('https://api.example.com', {}, 'sk-secret', {
      maxBodyBytes: 100,
      fetch: (async () => ((requests += 1), new Response('x'.repeat(1000)))) as typeof fetch,
    });
    expect((await limitOf(http.getJson(new URL('https://api.example.com/v1/x')))).limit).toBe('body');
    expect(requests).toBe(1);
  });
});

describe('organization identity (organization.ts)', () => {
  it('the same only with a shared id; nothing to compare is unproven, never the same', () => {
    expect(compareOrganizations('anthropic', ['org-1'], ['org-1'])).toEqual({ result: 'same' });
    expect(compareOrganizations('anthropic', ['org-1'], ['org-2'])).toEqual({ result: 'other' });
    expect(compareOrganizations('openai', ['proj_a', 'proj_b'], ['proj_b', 'proj_c'])).toEqual({ result: 'same' });
    for (const [known, fresh] of [[[], ['proj_a']], [['proj_a'], []], [null, ['proj_a']], [undefined, []]] as const) {
      const r = compareOrganizations('openai', known, fresh);
      expect(r.result).toBe('unproven');
    }
    expect(compareOrganizations('openrouter', [], ['h1'])).toMatchObject({ reason: expect.stringContaining('no API keys') });
    expect(compareOrganizations('openai', ['p'], [])).toMatchObject({ reason: expect.stringContaining('no projects') });
  });

  it('a sync keeps what the organization is known by current: new keys and projects first, at most 200, unchanged → nothing to write', () => {
    const key = (id: string, project: string | null = null) => ({ id, project: project ? { id: project } : null });
    expect(organizationAfterSync('openrouter', ['h1'], [key('h2'), key('h1')])).toEqual(['h2', 'h1']);
    expect(organizationAfterSync('openrouter', ['h1', 'h2'], [key('h2'), key('h1')])).toBeUndefined();
    expect(organizationAfterSync('openai', ['p1'], [key('k1', 'p2'), key('k2', 'p1')])).toEqual(['p2', 'p1']);
    expect(organizationAfterSync('anthropic', ['org'], [key('k1', 'w1')])).toBeUndefined();
    expect(organizationAfterSync('openrouter', [], [])).toBeUndefined();
    const many = Array.from({ length: 300 }, (_, i) => key(`h${i}`));
    expect(organizationAfterSync('openrouter', ['old'], many)).toHaveLength(MAX_STORED_ORGANIZATION_IDS);
  });
});

describe('fan-out (pages.ts inPool, itemBudget)', () => {
  it('at most n at a time, results by index; the first error starts nothing more', async () => {
    let running = 0;
    let most = 0;
    const out: number[] = [];
    await inPool([5, 1, 3, 2, 4], 2, async (x, i) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, x));
      out[i] = x * 10;
      running -= 1;
    });
    expect(most).toBe(2);
    expect(out).toEqual([50, 10, 30, 20, 40]);
    const started: number[] = [];
    const failed = inPool(Array.from({ length: 100 }, (_, i) => i), 4, async (i) => {
      started.push(i);
      if (i === 1) throw new Error('boom');
      await new Promise((r) => setTimeout(r, 5));
    });
    await expect(failed).rejects.toThrow('boom');
    await new Promise((r) => setTimeout(r, 30));
    expect(started.length).toBeLessThanOrEqual(8);
  });

  it('counts the items of many lists together against the bound', () => {
    const count = itemBudget('API keys of the projects', 10);
    count(6);
    expect(() => count(5)).toThrow(ProviderLimitExceeded);
  });
});
