/**
 * `npm run demo:seed` (local/demo-seed.ts) against the real local stack: a newcomer signs up, seeds their own account,
 * and the API shows the demo month — proxy keys of providers without a connection next to every key of the OpenAI
 * and Anthropic stand-ins' organizations, found by two connections. The stand-ins' organizations are this file's own
 * (another file's frozen clock, reset or faults never reach them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '#local/demo-seed.ts';
import { api, registerUser, stack } from './harness.ts';
import { newStandInOrg, type StandInOrg } from './standins.ts';

const PROXY_PROVIDERS = ['deepseek', 'google', 'mistral', 'xai'];

let openai: StandInOrg;
let anthropic: StandInOrg;
let seeded: { token: string } | undefined;
beforeAll(async () => {
  [openai, anthropic] = await Promise.all([newStandInOrg('openai'), newStandInOrg('anthropic')]);
});
afterAll(async () => {
  // The connections first (no scheduled sync of them meets a removed organization), then the organizations.
  const connections = seeded ? ((await api('/connections', { token: seeded.token })).body?.items ?? []) : [];
  for (const c of connections as { id: string }[]) await api(`/connections/${c.id}`, { method: 'DELETE', token: seeded!.token });
  await Promise.all([openai?.remove(), anthropic?.remove()]);
});

describe('demo:seed', () => {
  it('fills the account a newcomer just signed up with: labelled proxy keys, a month of spend, budgets, rules, alerts and both connections', async () => {
    const user = await registerUser();
    seeded = user;
    const demo = await seedDemo(stack().apiUrl, user.email, user.password, {
      openaiAdmin: { url: openai.url, adminKey: openai.adminKey },
      anthropicAdmin: { url: anthropic.url, adminKey: anthropic.adminKey },
    });
    expect(demo.email).toBe(user.email);
    expect(demo.events).toBeGreaterThan(1000);
    expect(demo.alerts).toBeGreaterThan(0);

    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 31 * 86_400_000).toISOString().slice(0, 10);
    const byProvider = await api(`/spend?from=${from}&to=${to}&groupBy=provider`, { token: user.token });
    expect(byProvider.status).toBe(200);
    const groups = byProvider.body.groups as { provider: string; requests: number; costUsd: number }[];
    // Every accepted event lands in the newcomer's own account (the two closing events included), under the proxy's providers.
    const proxied = groups.filter((g) => PROXY_PROVIDERS.includes(g.provider));
    expect(proxied.map((g) => g.provider).sort()).toEqual(PROXY_PROVIDERS);
    expect(proxied.reduce((n, g) => n + g.requests, 0)).toBe(demo.events + 2);
    // OpenAI and Anthropic spend comes from the connections: both providers have spend in the month.
    for (const provider of ['openai', 'anthropic']) expect(groups.find((g) => g.provider === provider)?.costUsd ?? 0).toBeGreaterThan(0);

    const proxyKeys = await api('/keys?source=ingest&sort=name&limit=100', { token: user.token });
    expect(proxyKeys.body.total).toBe(12);
    expect(proxyKeys.body.items.map((k: { label: string }) => k.label)).toContain('Support bot');

    // Both stand-ins connected, each first sync done, every key of both organizations listed with its provider's name.
    expect(demo.connections.map((c) => c.provider)).toEqual(['openai', 'anthropic']);
    const connections = (await api('/connections', { token: user.token })).body.items as { provider: string; status: string; lastSuccessAt: string | null }[];
    expect(connections.map((c) => [c.provider, c.status, c.lastSuccessAt !== null])).toEqual([
      ['openai', 'active', true],
      ['anthropic', 'active', true],
    ]);
    for (const c of demo.connections) expect(c.keys).toBeGreaterThan(3);
    const imported = await api('/keys?source=connection&limit=100', { token: user.token });
    expect(imported.body.total).toBe(demo.connections[0]!.keys + demo.connections[1]!.keys);
    const items = imported.body.items as { name: string | null; provider: string; providerStatus: string | null }[];
    expect(items.some((k) => k.provider === 'openai' && k.name === 'web-prod')).toBe(true);
    for (const provider of ['openai', 'anthropic']) expect(items.some((k) => k.provider === provider && k.providerStatus === 'active')).toBe(true);

    // One source per provider: the account's OpenAI events are refused now.
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'after the seed' } })).body.key as string;
    const refused = await api('/ingest', {
      method: 'POST',
      headers: { 'x-api-key': ingestKey },
      body: { events: [{ requestId: `after-${Date.now()}`, keyHash: 'a'.repeat(64), provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1 }] },
    });
    expect(refused.body.rejected.map((r: { code: string }) => r.code)).toEqual(['provider_connected']);

    expect((await api('/billing/status', { token: user.token })).body.plan).toBe('SCALE');
    expect((await api('/budgets', { token: user.token })).body.items).toHaveLength(3);
    expect((await api('/alert-rules', { token: user.token })).body.items).toHaveLength(2);
  }, 150_000);

  it("refuses, saying why, an existing address whose password doesn't sign in", async () => {
    const user = await registerUser();
    await expect(seedDemo(stack().apiUrl, user.email, 'Not-the-password-1')).rejects.toThrow(/already has a user and the password given does not sign in/);
  });
});
