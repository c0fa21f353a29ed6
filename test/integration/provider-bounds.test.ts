/**
 * Provider reads that can't loop or swell, and rotations that can't be fooled, on the real local stack and its
 * stand-ins (docs/security.md):
 * - a rotation is accepted only when the new key is proven to be of the same organization: an OpenAI organization
 *   without projects or an OpenRouter account without keys can't be proven (400 `organization-unproven`);
 * - a list that ignores its offset or cursor (the stand-in's `misbehave {ignoreCursor}`) and a 150 MB body
 *   (`misbehave {hugeBodyBytes}`) refuse the connection (502 naming the bound) or fail the sync with a
 *   `statusDetail` naming it. The memory figure of the 150 MB case is `npm run bench:connectors -- bounds`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicClient } from '#shared/connections/anthropic.ts';
import { ProviderLimitExceeded } from '#shared/connections/http.ts';
import { openAiClient } from '#shared/connections/openai.ts';
import { api, pointConnectorsAtStack, registerUser, setPlan, stack, syncHere, type RegisteredUser } from './harness.ts';
import { newStandInOrg, type Provider, type StandInOrg } from './standins.ts';

const sent = new Map<string, number>();
let restore: () => void;
const orgs: StandInOrg[] = [];

async function org(provider: Provider, options: Parameters<typeof newStandInOrg>[1] = {}): Promise<StandInOrg> {
  const made = await newStandInOrg(provider, options);
  orgs.push(made);
  return made;
}

async function connect(user: RegisteredUser, provider: Provider, adminKey: string): Promise<string> {
  const res = await api('/connections', { method: 'POST', token: user.token, body: { provider, adminKey } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const requestsTo = async (o: StandInOrg, path: string) => ((await o.control('/requests')) as { byPath: Record<string, number> }).byPath[path] ?? 0;

beforeAll(async () => {
  restore = await pointConnectorsAtStack(sent, { OPENROUTER_URL: `${stack().openrouter.url}/api/v1` });
});
afterAll(async () => {
  for (const o of orgs) await o.remove();
  restore?.();
});

describe('a rotation is accepted only when the new key is proven to be of the same organization', () => {
  it('an OpenAI organization without projects and an OpenRouter account without keys: 400 organization-unproven, nothing changed', async () => {
    const user = await registerUser();
    for (const provider of ['openai', 'openrouter'] as const) {
      const empty = await org(provider, { empty: true });
      const other = await org(provider, { seed: 'contoso' });
      const id = await connect(user, provider, empty.adminKey);
      const before = await api(`/connections/${id}`, { token: user.token });
      // Another organization's key, with projects / keys of its own: nothing proves it is the same organization.
      const res = await api(`/connections/${id}`, { method: 'PATCH', token: user.token, body: { adminKey: other.adminKey } });
      expect(res.status, `${provider}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.type).toBe('/problems/organization-unproven');
      expect(res.body.errors).toEqual([{ path: 'adminKey', message: expect.stringContaining(provider === 'openai' ? 'no projects' : 'no API keys') }]);
      expect(res.body.detail).toContain('delete this connection and connect again');
      expect(JSON.stringify(res.body)).not.toContain(other.adminKey);
      expect((await api(`/connections/${id}`, { token: user.token })).body).toEqual(before.body);
      // The other way round: a connection of an organization with projects / keys, and a new key of one without.
      const full = await registerUser();
      const fullId = await connect(full, provider, other.adminKey);
      const toEmpty = await api(`/connections/${fullId}`, { method: 'PATCH', token: full.token, body: { adminKey: empty.adminKey } });
      expect(toEmpty.status, JSON.stringify(toEmpty.body)).toBe(400);
      expect(toEmpty.body.type).toBe('/problems/organization-unproven');
      await api(`/connections/${id}`, { method: 'DELETE', token: user.token });
    }
  });

  it('a key of the same organization is taken (its old key revoked by the rotation); another organization is refused', async () => {
    const user = await registerUser();
    for (const provider of ['openai', 'openrouter', 'anthropic'] as const) {
      const mine = await org(provider);
      const other = await org(provider, { seed: 'contoso' });
      const id = await connect(user, provider, mine.adminKey);
      const refused = await api(`/connections/${id}`, { method: 'PATCH', token: user.token, body: { adminKey: other.adminKey } });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.errors[0].message).toContain('different');
      const { adminKey } = await mine.control<{ adminKey: string }>('/admin-key', { rotate: true });
      const same = await api(`/connections/${id}`, { method: 'PATCH', token: user.token, body: { adminKey } });
      expect(same.status, `${provider}: ${JSON.stringify(same.body)}`).toBe(200);
      await api(`/connections/${id}`, { method: 'DELETE', token: user.token });
    }
  });
});

describe('provider reads are bounded', () => {
  it('an OpenRouter /keys that ignores offset: POST /connections answers 502 naming it after 2 pages; a sync fails saying so', async () => {
    const looping = await org('openrouter', { big: { keys: 150, models: 1, days: 1 } });
    await looping.control('/misbehave', { ignoreCursor: true, pathPrefix: '/api/v1/keys' });
    await looping.control('/requests', undefined, 'DELETE');
    const user = await registerUser();
    const res = await api('/connections', { method: 'POST', token: user.token, body: { provider: 'openrouter', adminKey: looping.adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(502);
    expect(res.body.type).toBe('/problems/provider-unavailable');
    expect(res.body.detail).toMatch(/^OpenRouter answered page 2 of \/api\/v1\/keys with items it had listed already/);
    expect(res.body.detail).toContain('Nothing was stored.');
    // The check (one page), then the organization's keys: page 1, page 2 (the same keys), refused.
    expect(await requestsTo(looping, '/api/v1/keys')).toBe(3);
    expect((await api('/connections', { token: user.token })).body.items).toEqual([]);

    // Connected while it behaved, then it loops: the sync stops at the second page and says why.
    await looping.control('/misbehave', undefined, 'DELETE');
    await setPlan(user.accountId, 'SCALE');
    const id = await connect(user, 'openrouter', looping.adminKey);
    await looping.control('/misbehave', { ignoreCursor: true, pathPrefix: '/api/v1/keys' });
    const result = await syncHere(user.accountId, id);
    expect(result.status).toBe('unavailable');
    const conn = (await api(`/connections/${id}`, { token: user.token })).body;
    expect(conn.statusDetail).toMatch(/^The last sync could not finish: OpenRouter answered page 2 of \/api\/v1\/keys with items it had listed already/);
  });

  it('OpenAI and Anthropic reports whose page cursor never moves on: the clients stop at the repeat, naming it; read again once it behaves', async () => {
    const addDays = (d: string, n: number) => new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    for (const [provider, report, list] of [
      ['openai', '/v1/organization/usage/completions', '/v1/organization/projects'],
      ['anthropic', '/v1/organizations/usage_report/messages', '/v1/organizations/api_keys'],
    ] as const) {
      const o = await org(provider, { big: { keys: 120, models: 1, days: 62 } });
      const client = provider === 'openai' ? openAiClient(o.url, o.adminKey, { attempts: 1 }) : anthropicClient(o.url, o.adminKey, { attempts: 1 });
      // 62 days: two pages of 31 daily buckets, the second asked for with the first page's next_page.
      await o.control('/misbehave', { ignoreCursor: true, pathPrefix: report });
      const error = await client.readUsage(addDays(today, -61), addDays(today, 1)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderLimitExceeded);
      expect((error as ProviderLimitExceeded).limit).toBe('repeat');
      expect((error as Error).message).toContain(`gave a page cursor of ${report} it had given before`);
      await o.control('/misbehave', undefined, 'DELETE');
      expect((await client.readUsage(addDays(today, -61), addDays(today, 1))).length).toBeGreaterThan(0);
    }
  });

  it('a 150 MB /keys body: refused while it streams; POST /connections answers 502 naming the 32 MB bound; a sync fails saying so', async () => {
    const swollen = await org('openrouter');
    const user = await registerUser();
    await setPlan(user.accountId, 'SCALE');
    const id = await connect(user, 'openrouter', swollen.adminKey);
    await swollen.control('/misbehave', { hugeBodyBytes: 150 * 1024 * 1024, pathPrefix: '/api/v1/keys' });
    const other = await registerUser();
    const res = await api('/connections', { method: 'POST', token: other.token, body: { provider: 'openrouter', adminKey: swollen.adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(502);
    expect(res.body.detail).toMatch(/^OpenRouter answered \/api\/v1\/keys with a body over 32 MB, the most Burnrate reads of one answer/);
    expect((await api('/connections', { token: other.token })).body.items).toEqual([]);
    const result = await syncHere(user.accountId, id);
    expect(result.status).toBe('unavailable');
    const conn = (await api(`/connections/${id}`, { token: user.token })).body;
    expect(conn.statusDetail).toMatch(/OpenRouter answered \/api\/v1\/keys with a body over 32 MB/);
  });
});
