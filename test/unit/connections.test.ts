/** The connections domain's pure parts: admin key shapes, exact provider money, sealing, the snapshot diff, the retry rules. */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKeyProblem, importStart } from '#shared/connections/service.ts';
import { centsToMicros, centsToPicos, dollarsToPicos, picosToMicros } from '#shared/connections/decimal.ts';
import { localWrapper, openSecret, sealSecret } from '#shared/connections/secrets.ts';
import { diffCells, type StoredCell } from '#shared/connections/diff.ts';
import { providerHttp, ProviderBadResponse, ProviderRefused, ProviderUnavailable, redact } from '#shared/connections/http.ts';
import { connectionKeyHash, firstDayToRead } from '#shared/connections/sync.ts';
import type { UsageCell } from '#shared/connections/model.ts';
import { anthropicClient } from '#shared/connections/anthropic.ts';
import { openRouterClient, OPENROUTER_TODAY_MODEL } from '#shared/connections/openrouter.ts';
import { openRouterLever } from '#shared/enforcement/levers.ts';

describe('admin key shapes', () => {
  it('takes admin keys and names inference keys as such', () => {
    expect(adminKeyProblem('openai', 'sk-admin-abcdefghijklmnop')).toBeUndefined();
    expect(adminKeyProblem('anthropic', 'sk-ant-admin01-abcdefghijkl')).toBeUndefined();
    expect(adminKeyProblem('openai', 'sk-proj-abcdefghijklmnop')).toMatch(/inference/);
    expect(adminKeyProblem('anthropic', 'sk-ant-api03-abcdefghijklmnop')).toMatch(/inference/);
    expect(adminKeyProblem('openai', 'sk-ant-admin01-abcdefghijkl')).toMatch(/Anthropic/);
  });
  it('imports from the first day of the previous UTC month', () => {
    expect(importStart(new Date('2026-11-24T06:00:00Z'))).toBe('2026-10-01');
    expect(importStart(new Date('2026-01-01T00:00:00Z'))).toBe('2025-12-01');
  });
});

describe('provider money, exact', () => {
  it("reads Anthropic's cents as decimal strings: $1.2378912 rounds to 1,237,891 µ$", () => {
    expect(centsToMicros('123.78912')).toBe(1_237_891n);
    expect(centsToMicros('0.00005')).toBe(1n);
    expect(centsToMicros('0.000049')).toBe(0n);
  });
  it('sums a day before rounding once', () => {
    const rows = ['0.00004', '0.00004', '0.00004'];
    expect(picosToMicros(rows.reduce((s, r) => s + centsToPicos(r), 0n))).toBe(1n);
    expect(picosToMicros(dollarsToPicos(0.06) * 3n)).toBe(180_000n);
  });
});

describe('sealing admin keys', () => {
  it('opens only with the same account and connection', async () => {
    const wrapper = localWrapper(randomBytes(32).toString('hex'));
    const ctx = { accountId: 'br_A', connectionId: 'con_A' };
    const sealed = await sealSecret('sk-admin-secret-value', ctx, wrapper);
    expect(JSON.stringify(sealed)).not.toContain('sk-admin');
    expect(await openSecret(sealed, ctx, wrapper)).toBe('sk-admin-secret-value');
    await expect(openSecret(sealed, { ...ctx, connectionId: 'con_B' }, wrapper)).rejects.toThrow();
  });
});

describe('the snapshot diff', () => {
  const cell = (over: Partial<UsageCell> = {}): UsageCell => ({
    date: '2026-11-20', keyId: 'key_a', model: 'gpt-4o', tier: 'standard', projectId: null,
    requests: 10, inputTokens: 1000, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: 100, webSearchRequests: 0, quantity: 0, ...over,
  });
  const stored = (c: UsageCell, costMicros: bigint): StoredCell => ({ ...c, costMicros, version: 1 });
  const price = (c: UsageCell) => ({ costMicros: BigInt(c.inputTokens + c.outputTokens), priced: true });
  const id = '2026-11-20#key_a#gpt-4o#standard';

  it('nothing changed: no change; grown: the growth; revised down: a negative difference; gone: the cost given back', () => {
    expect(diffCells([cell()], new Map([[id, stored(cell(), 1100n)]]), price)).toEqual([]);
    const [up] = diffCells([cell({ requests: 12, outputTokens: 150 })], new Map([[id, stored(cell(), 1100n)]]), price);
    expect(up).toMatchObject({ delta: { requests: 2, outputTokens: 50 }, costDelta: 50n, costMicros: 1150n });
    const [down] = diffCells([cell({ requests: 4, inputTokens: 400 })], new Map([[id, stored(cell(), 1100n)]]), price);
    expect(down).toMatchObject({ delta: { requests: -6, inputTokens: -600 }, costDelta: -600n });
    const [gone] = diffCells([], new Map([[id, stored(cell(), 1234n)]]), price);
    expect(gone).toMatchObject({ delta: { requests: -10 }, costDelta: -1234n, costMicros: 0n });
  });
  it('a cost the provider reports (OpenRouter): counted as reported; a revised bill moves the cell with the same tokens; a cost-only cell is a change and goes away', () => {
    const reported = (over: Partial<UsageCell>, costMicros: bigint) => ({ ...cell(over), reportedCostMicros: costMicros });
    const [first] = diffCells([reported({}, 5_000n)], new Map(), price);
    expect(first).toMatchObject({ costDelta: 5_000n, costMicros: 5_000n });
    expect(diffCells([reported({}, 5_000n)], new Map([[id, stored(cell(), 5_000n)]]), price)).toEqual([]);
    const [revised] = diffCells([reported({}, 4_200n)], new Map([[id, stored(cell(), 5_000n)]]), price);
    expect(revised).toMatchObject({ delta: { requests: 0 }, costDelta: -800n, costMicros: 4_200n });
    const today = reported({ requests: 0, inputTokens: 0, outputTokens: 0 }, 777n);
    const [estimate] = diffCells([today], new Map(), price);
    expect(estimate).toMatchObject({ costDelta: 777n });
    const [replaced] = diffCells([], new Map([[id, stored({ ...today }, 777n)]]), price);
    expect(replaced).toMatchObject({ costDelta: -777n, costMicros: 0n });
  });
});

describe('OpenRouter client', () => {
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const key = (i: number, over: Record<string, unknown> = {}) => ({ hash: i.toString(16).padStart(64, '0'), name: `k${i}`, label: `sk-or-v1-${i}...`, disabled: false, limit: null, usage: 1, usage_daily: 0, ...over });

  it('asks the reference’s exact paths and parameters: keys by offset (disabled ones too), activity per key and for the account; dollars exact; today from usage_daily', async () => {
    const asked: string[] = [];
    const keys = [...Array.from({ length: 100 }, (_, i) => key(i + 1, { usage: 0 })), key(101, { disabled: true, limit: 25, usage_daily: 0.000003 }), key(102)];
    const fake = (async (input: URL | string, init?: RequestInit) => {
      const url = new URL(String(input));
      asked.push(`${init?.method ?? 'GET'} ${url.pathname}?${url.searchParams}`);
      expect(new Headers(init?.headers).get('authorization')).toBe(`Bearer sk-or-v1-${'a'.repeat(64)}`);
      if (url.pathname === '/api/v1/keys') return json({ data: keys.slice(Number(url.searchParams.get('offset')), Number(url.searchParams.get('offset')) + 100) });
      const hash = url.searchParams.get('api_key_hash');
      const row = (date: string, model: string, usage: number) => ({ date, model, provider_name: 'X', usage, requests: 2, prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 1 });
      if (hash === null) return json({ data: [row('2026-11-24', 'openai/gpt-4.1', 0.3), row('2026-11-24', 'openai/gpt-4.1', 0.000001)] });
      return json({ data: [row('2026-11-24', 'openai/gpt-4.1', 0.1), row('2026-11-24', 'openai/gpt-4.1', 0.2), row('2026-10-01', 'openai/gpt-4.1', 9)] });
    }) as typeof fetch;
    const client = openRouterClient('https://openrouter.test/api/v1/', `sk-or-v1-${'a'.repeat(64)}`, { fetch: fake, now: () => new Date('2026-11-26T12:00:00Z') });
    const listed = await client.listKeys();
    expect(listed).toHaveLength(102);
    expect(listed.find((k) => k.id === key(101).hash)).toMatchObject({ status: 'inactive', limitUsd: 25, redactedValue: 'sk-or-v1-101...', project: null });
    const cells = await client.readUsage('2026-11-20', '2026-11-27');
    // Two endpoints' rows of one (day, key, model) summed; a day before the range left out; keys that never spent not
    // asked.
    expect(cells.filter((c) => c.model === 'openai/gpt-4.1')).toEqual([
      expect.objectContaining({ date: '2026-11-24', keyId: key(101).hash, requests: 4, inputTokens: 20, outputTokens: 10, reportedCostMicros: 300_000n }),
      expect.objectContaining({ date: '2026-11-24', keyId: key(102).hash, reportedCostMicros: 300_000n }),
    ]);
    expect(cells.filter((c) => c.model === OPENROUTER_TODAY_MODEL)).toEqual([
      expect.objectContaining({ date: '2026-11-26', keyId: key(101).hash, requests: 0, reportedCostMicros: 3n }),
    ]);
    // The account's whole activity of a day per model, keyless rows, exact ($0.300001 in 10^-14 $).
    expect(await client.readBilled('2026-11-20', '2026-11-26')).toEqual([
      { date: '2026-11-24', rows: [{ date: '2026-11-24', keyId: null, projectId: null, line: 'openai/gpt-4.1', model: 'openai/gpt-4.1', picos: 30_000_100_000_000n }] },
    ]);
    expect(asked.sort()).toEqual(
      [
        'GET /api/v1/keys?include_disabled=true&offset=0',
        'GET /api/v1/keys?include_disabled=true&offset=100',
        `GET /api/v1/activity?api_key_hash=${key(101).hash}`,
        `GET /api/v1/activity?api_key_hash=${key(102).hash}`,
        'GET /api/v1/activity?',
      ].sort(),
    );
  });

  it('the key switch (its lever): PATCH /keys/{hash} {disabled}, checked against OpenRouter’s answer', async () => {
    const sent: { method?: string; path: string; body: unknown }[] = [];
    const fake = (async (input: URL | string, init?: RequestInit) => {
      const url = new URL(String(input));
      const body = JSON.parse(String(init?.body)) as { disabled: boolean };
      sent.push({ method: init?.method, path: url.pathname, body });
      return json({ data: key(7, { disabled: body.disabled }) });
    }) as typeof fetch;
    const lever = openRouterLever('https://openrouter.test', `sk-or-v1-${'a'.repeat(64)}`, { fetch: fake });
    await lever.stopKey!(key(7).hash);
    await lever.startKey!(key(7).hash);
    expect(sent).toEqual([
      { method: 'PATCH', path: `/api/v1/keys/${key(7).hash}`, body: { disabled: true } },
      { method: 'PATCH', path: `/api/v1/keys/${key(7).hash}`, body: { disabled: false } },
    ]);
  });
});

describe('keys and days', () => {
  it('hashes <provider>:<key id>, and <provider>:unattributed for usage without a key', () => {
    expect(connectionKeyHash('openai', 'key_abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(connectionKeyHash('openai', null)).toBe(connectionKeyHash('openai', 'unattributed'));
    expect(connectionKeyHash('openai', 'key_abc')).not.toBe(connectionKeyHash('anthropic', 'key_abc'));
  });
  it('reads from the cursor, else the 3 days before today (and days missed since the last success)', () => {
    expect(firstDayToRead({ cursor: '2026-10-01', lastSuccessAt: null, importedFrom: '2026-10-01' }, '2026-11-24')).toBe('2026-10-01');
    expect(firstDayToRead({ cursor: null, lastSuccessAt: '2026-11-24T01:00:00Z', importedFrom: '2026-10-01' }, '2026-11-24')).toBe('2026-11-21');
    expect(firstDayToRead({ cursor: null, lastSuccessAt: '2026-11-10T01:00:00Z', importedFrom: '2026-10-01' }, '2026-11-24')).toBe('2026-11-07');
  });
});

describe('provider HTTP', () => {
  const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers });
  it('waits the Retry-After of a 429 (bounded), backs off on 5xx, gives up as unavailable', async () => {
    const waits: number[] = [];
    const answers = [reply(429, {}, { 'retry-after': '2' }), reply(429, {}, { 'retry-after': '999' }), reply(503, {}), reply(200, { ok: true })];
    const http = providerHttp('http://x', {}, 'sk-admin-x', { fetch: async () => answers.shift()!, sleep: async (ms) => void waits.push(ms), maxRetryAfterMs: 30_000, backoffMs: 10 });
    expect(await http.getJson(new URL('http://x/v1/a'))).toEqual({ ok: true });
    expect(waits.slice(0, 2)).toEqual([2000, 30_000]);
    expect(waits[2]).toBeLessThan(40);
    const down = providerHttp('http://x', {}, 'k', { fetch: async () => reply(500, {}), sleep: async () => undefined, attempts: 3 });
    await expect(down.getJson(new URL('http://x/v1/a'))).rejects.toBeInstanceOf(ProviderUnavailable);
  });
  it('a 401 is a refusal at once, its words redacted of any key', async () => {
    const secret = 'sk-admin-abcdefghijklmnopqrstuvwxyz';
    const http = providerHttp('http://x', {}, secret, { fetch: async () => reply(401, { error: { message: `Incorrect API key provided: ${secret}` } }) });
    const error = await http.getJson(new URL('http://x/v1/a')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderRefused);
    expect((error as ProviderRefused).message).not.toContain(secret);
    expect(redact('key sk-ant-admin01-zzzzzzzzzz here')).toBe('key [redacted] here');
  });
});

describe('provider HTTP: where the admin key may go (docs/security.md: the provider\'s own host only)', () => {
  // Two real servers on loopback: the provider (which may answer a redirect) and somewhere else (which must never
  // see a request, least of all the admin key).
  const seen: { provider: string[]; elsewhere: { url: string; authorization?: string }[] } = { provider: [], elsewhere: [] };
  let provider: Server;
  let elsewhere: Server;
  const base = (s: Server) => `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  beforeAll(async () => {
    elsewhere = createServer((req, res) => {
      seen.elsewhere.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    });
    provider = createServer((req, res) => {
      seen.provider.push(req.url ?? '');
      if (req.url?.startsWith('/v1/moved')) res.writeHead(302, { location: `${base(elsewhere)}/v1/organization/projects` }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    });
    for (const s of [provider, elsewhere]) {
      s.listen(0, '127.0.0.1');
      await once(s, 'listening');
    }
  });
  afterAll(() => Promise.all([provider, elsewhere].map((s) => new Promise((resolve) => s.close(resolve)))));

  const secret = 'sk-admin-never-leaves-the-provider';
  const client = () => providerHttp(base(provider), { authorization: `Bearer ${secret}` }, secret, { sleep: async () => undefined, attempts: 2 });

  it('answers from the provider\'s own origin', async () => {
    expect(await client().getJson(new URL(`${base(provider)}/v1/organization/projects`))).toEqual({ data: [] });
  });

  it('does not follow a redirect: a bad response at once (no retry), the other host never called', async () => {
    seen.provider.length = 0;
    const error = await client().getJson(new URL(`${base(provider)}/v1/moved`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderBadResponse);
    expect((error as Error).message).toMatch(/redirect/i);
    expect((error as Error).message).not.toContain(secret);
    expect(seen.provider).toEqual(['/v1/moved']);
    expect(seen.elsewhere).toEqual([]);
  });

  it('refuses a URL on any other origin before sending anything (another host, port or scheme)', async () => {
    for (const url of [`${base(elsewhere)}/v1/organization/projects`, `${base(provider).replace('http:', 'https:')}/v1/x`, `http://localhost:${(provider.address() as { port: number }).port}/v1/x`]) {
      const error = await client().getJson(new URL(url)).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(ProviderBadResponse);
    }
    expect(seen.elsewhere).toEqual([]);
  });
});

describe('Anthropic key inventory', () => {
  it('names each key’s workspace from the workspace list (every page), the default workspace "Default workspace"', async () => {
    const asked: string[] = [];
    const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    const fake = (async (input: URL | string) => {
      const url = new URL(String(input));
      asked.push(`${url.pathname}?${url.searchParams}`);
      if (url.pathname === '/v1/organizations/workspaces') {
        return url.searchParams.get('after_id') === 'wrkspc_a'
          ? json({ data: [{ type: 'workspace', id: 'wrkspc_old', name: 'Old', archived_at: '2026-01-01T00:00:00Z' }], has_more: false, first_id: 'wrkspc_old', last_id: 'wrkspc_old' })
          : json({ data: [{ type: 'workspace', id: 'wrkspc_a', name: 'Research', archived_at: null }], has_more: true, first_id: 'wrkspc_a', last_id: 'wrkspc_a' });
      }
      return json({
        data: [
          { id: 'apikey_1', name: 'a', status: 'active', workspace_id: 'wrkspc_a' },
          { id: 'apikey_2', name: 'b', status: 'archived', workspace_id: 'wrkspc_old' },
          { id: 'apikey_3', name: 'c', status: 'active', workspace_id: null },
          { id: 'apikey_4', name: 'd', status: 'active', workspace_id: null, scope: { type: 'workspace', workspace_id: 'wrkspc_default' } },
          { id: 'apikey_5', name: 'e', status: 'active', scope: { type: 'workspace', workspace_id: 'wrkspc_a' } },
          { id: 'apikey_6', name: 'f', status: 'active', scope: { type: 'organization' } },
        ],
        has_more: false,
      });
    }) as typeof fetch;
    const keys = await anthropicClient('https://admin.test', 'sk-ant-admin01-x', { fetch: fake }).listKeys();
    expect(Object.fromEntries(keys.map((k) => [k.id, k.project]))).toEqual({
      apikey_1: { id: 'wrkspc_a', name: 'Research' },
      apikey_2: { id: 'wrkspc_old', name: 'Old' },
      apikey_3: { id: 'default', name: 'Default workspace' },
      apikey_4: { id: 'wrkspc_default', name: 'Default workspace' },
      apikey_5: { id: 'wrkspc_a', name: 'Research' },
      apikey_6: null,
    });
    // Archived workspaces asked for; the second page after the first's last_id.
    expect(asked.filter((a) => a.startsWith('/v1/organizations/workspaces'))).toEqual([
      '/v1/organizations/workspaces?include_archived=true&limit=1000',
      '/v1/organizations/workspaces?include_archived=true&limit=1000&after_id=wrkspc_a',
    ]);
  });
});
