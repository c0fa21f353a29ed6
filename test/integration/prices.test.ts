/**
 * An account's own prices: used for events ingested after they are set (not before), a dated name falls back to
 * the account's family price, deleting restores the built-in price, at most 200 exactly under racing PUTs.
 */
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, registerUser, setPlan, type RegisteredUser } from './harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
let user: RegisteredUser;
let ingestKey: string;

beforeAll(async () => {
  user = await registerUser();
  await setPlan(user.accountId, 'SCALE'); // room for the many keys below
  ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key;
});

/** Ingests one event of 1M input (100k cached) and 1M output tokens on its own key; returns the key's total in dollars. */
async function costOf(model: string, provider = 'openai'): Promise<number> {
  const keyHash = sha256(randomUUID());
  const event = { requestId: randomUUID(), keyHash, provider, model, inputTokens: 1_000_000, cachedInputTokens: 100_000, outputTokens: 1_000_000 };
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event] } });
  expect(res.body.accepted, JSON.stringify(res.body)).toBe(1);
  return (await api(`/keys/${keyHash}`, { token: user.token })).body.spend.total;
}

describe('own prices', () => {
  it('PUT and GET carry tier rates; an event of that tier is priced at them, the other tiers by the rules', async () => {
    const tiers = { priority: { input: 6, cachedInput: 0.6, output: 30 } };
    const put = await api('/prices/anthropic/claude-opus-4-5', { method: 'PUT', token: user.token, body: { input: 5, cachedInput: 0.5, output: 25, tiers } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.tiers).toEqual({ priority: { input: 6, cachedInput: 0.6, cacheWrite: 6, cacheWrite1h: 6, output: 30 } });
    const listed = (await api('/prices', { token: user.token })).body.items.find((p: any) => p.provider === 'anthropic' && p.model === 'claude-opus-4-5');
    expect(listed).toMatchObject({ source: 'account', tiers: put.body.tiers });
    const spend = async (serviceTier: string) => {
      const keyHash = sha256(randomUUID());
      const event = { requestId: randomUUID(), keyHash, provider: 'anthropic', model: 'claude-opus-4-5', inputTokens: 1_000_000, cachedInputTokens: 100_000, outputTokens: 1_000_000, serviceTier };
      expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event] } })).body.accepted).toBe(1);
      return (await api(`/keys/${keyHash}`, { token: user.token })).body;
    };
    // 900k × $6 + 100k × $0.60 + 1M × $30
    expect(await spend('priority')).toMatchObject({ spend: { total: 35.46 }, unpricedRequests: 0 });
    // batch: half of the standard rates (900k × $5 + 100k × $0.50 + 1M × $25) / 2
    expect(await spend('batch')).toMatchObject({ spend: { total: 14.775 }, unpricedRequests: 0 });
    const bad = await api('/prices/anthropic/claude-opus-4-5', { method: 'PUT', token: user.token, body: { input: 5, output: 25, tiers: { turbo: { input: 1, cachedInput: 1, output: 1 } } } });
    expect(bad.status).toBe(400);
    expect((await api('/prices/anthropic/claude-opus-4-5', { method: 'DELETE', token: user.token })).status).toBe(204);
  });

  it('PUT and GET carry long-context rates; an event past the threshold is priced at them, one below it at the standard rates', async () => {
    const longContext = { aboveInputTokens: 100_000, input: 4, cachedInput: 0.4, output: 20 };
    const put = await api('/prices/anthropic/claude-opus-4-5', { method: 'PUT', token: user.token, body: { input: 2, cachedInput: 0.2, output: 10, longContext } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const view = { aboveInputTokens: 100_000, input: 4, cachedInput: 0.4, cacheWrite: 4, cacheWrite1h: 4, output: 20 };
    expect(put.body.longContext).toEqual(view);
    const listed = (await api('/prices', { token: user.token })).body.items.find((p: any) => p.provider === 'anthropic' && p.model === 'claude-opus-4-5');
    expect(listed).toMatchObject({ source: 'account', longContext: view });
    const spend = async (inputTokens: number) => {
      const keyHash = sha256(randomUUID());
      const event = { requestId: randomUUID(), keyHash, provider: 'anthropic', model: 'claude-opus-4-5', inputTokens, outputTokens: 100_000 };
      expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event] } })).body.accepted).toBe(1);
      return (await api(`/keys/${keyHash}`, { token: user.token })).body.spend.total;
    };
    expect(await spend(150_000)).toBe(0.6 + 2); // 150k × $4 + 100k × $20
    expect(await spend(100_000)).toBe(0.2 + 1); // not past the threshold: 100k × $2 + 100k × $10
    for (const bad of [{ input: 4, cachedInput: 0.4, output: 20 }, { ...longContext, aboveInputTokens: 0 }, { ...longContext, aboveInputTokens: 1.5 }, { ...longContext, turbo: 1 }, 'long']) {
      const res = await api('/prices/anthropic/claude-opus-4-5', { method: 'PUT', token: user.token, body: { input: 2, output: 10, longContext: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
    expect((await api('/prices/anthropic/claude-opus-4-5', { method: 'DELETE', token: user.token })).status).toBe(204);
  });

  it('GET /prices lists the built-in table with both cache-write prices, and each row with its source page and check date', async () => {
    const res = await api('/prices', { token: user.token });
    expect(res.status).toBe(200);
    const builtin = { source: 'builtin', sourceUrl: expect.stringMatching(/^https:\/\//), checkedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), updatedAt: expect.any(String) };
    // With OpenAI's published Priority processing rates.
    const priority = { input: 0.25, cachedInput: 0.125, cacheWrite: 0.25, cacheWrite1h: 0.25, output: 1 };
    expect(res.body.items).toContainEqual({ provider: 'openai', model: 'gpt-4o-mini', input: 0.15, cachedInput: 0.075, cacheWrite: 0.15, cacheWrite1h: 0.15, output: 0.6, tiers: { priority }, longContext: null, ...builtin });
    expect(res.body.items).toContainEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      input: 3,
      cachedInput: 0.3,
      cacheWrite: 3.75,
      cacheWrite1h: 6,
      output: 15,
      tiers: {},
      // Past 200K input tokens (the 1M context window): every token at the long-context rates.
      longContext: { aboveInputTokens: 200_000, input: 6, cachedInput: 0.6, cacheWrite: 7.5, cacheWrite1h: 12, output: 22.5 },
      ...builtin,
      sourceUrl: 'https://platform.claude.com/docs/en/about-claude/pricing',
    });
    for (const item of res.body.items) expect(item.sourceUrl, item.model).toMatch(/^https:\/\//);
  });

  it('PUT and GET carry cacheWrite and cacheWrite1h (each defaults to input); an own price has no source page', async () => {
    const own = { tiers: {}, longContext: null, source: 'account', sourceUrl: null, checkedAt: null, updatedAt: expect.any(String) };
    const put = await api('/prices/selfhosted/cache-model', { method: 'PUT', token: user.token, body: { input: 2, cachedInput: 0.2, cacheWrite: 2.5, cacheWrite1h: 4, output: 10 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const written = { provider: 'selfhosted', model: 'cache-model', input: 2, cachedInput: 0.2, cacheWrite: 2.5, cacheWrite1h: 4, output: 10, ...own };
    expect(put.body).toEqual(written);
    expect((await api('/prices', { token: user.token })).body.items).toContainEqual(written);

    const defaults = await api('/prices/selfhosted/cache-model', { method: 'PUT', token: user.token, body: { input: 1.5, output: 3, cacheWrite1h: 0.000001 } });
    expect(defaults.body).toEqual({ provider: 'selfhosted', model: 'cache-model', input: 1.5, cachedInput: 1.5, cacheWrite: 1.5, cacheWrite1h: 0.000001, output: 3, ...own });
    for (const body of [{ input: 1, output: 1, cacheWrite: -1 }, { input: 1, output: 1, cacheWrite1h: 0.0000001 }, { input: 1, output: 1, cacheWrite: '1' }]) {
      expect((await api('/prices/selfhosted/cache-model', { method: 'PUT', token: user.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await api('/prices/selfhosted/cache-model', { method: 'DELETE', token: user.token })).status).toBe(204);
  });

  it('prices events ingested after the PUT, not before; a dated name uses the family price; DELETE restores the built-in one', async () => {
    // built-in gpt-4o-mini: 0.9M × $0.15 + 0.1M × $0.075 + 1M × $0.60
    const builtin = 0.135 + 0.0075 + 0.6;
    const keyBefore = sha256(randomUUID());
    await api('/ingest', {
      method: 'POST',
      headers: { 'x-api-key': ingestKey },
      body: { events: [{ requestId: randomUUID(), keyHash: keyBefore, provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1_000_000, cachedInputTokens: 100_000, outputTokens: 1_000_000 }] },
    });
    expect((await api(`/keys/${keyBefore}`, { token: user.token })).body.spend.total).toBeCloseTo(builtin, 6);

    const put = await api('/prices/OpenAI/GPT-4o-mini', { method: 'PUT', token: user.token, body: { input: 1, cachedInput: 0.5, output: 2 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toEqual({
      provider: 'openai',
      model: 'gpt-4o-mini',
      input: 1,
      cachedInput: 0.5,
      cacheWrite: 1,
      cacheWrite1h: 1,
      output: 2,
      tiers: {},
      longContext: null,
      source: 'account',
      sourceUrl: null,
      checkedAt: null,
      updatedAt: expect.any(String),
    });
    const own = 0.9 + 0.05 + 2;
    expect(await costOf('gpt-4o-mini')).toBe(own);
    expect(await costOf('gpt-4o-mini-2024-07-18')).toBe(own); // the family's own price, before the built-in one
    expect((await api(`/keys/${keyBefore}`, { token: user.token })).body.spend.total).toBeCloseTo(builtin, 6); // not repriced
    const listed = (await api('/prices', { token: user.token })).body.items.filter((p: { model: string }) => p.model === 'gpt-4o-mini');
    expect(listed).toEqual([expect.objectContaining({ source: 'account', input: 1 })]);

    // An exact dated price wins over the family's.
    await api('/prices/openai/gpt-4o-mini-2024-07-18', { method: 'PUT', token: user.token, body: { input: 0, output: 1 } });
    expect(await costOf('gpt-4o-mini-2024-07-18')).toBe(1);

    expect((await api('/prices/openai/gpt-4o-mini', { method: 'DELETE', token: user.token })).status).toBe(204);
    expect((await api('/prices/openai/gpt-4o-mini', { method: 'DELETE', token: user.token })).status).toBe(404);
    expect(await costOf('gpt-4o-mini')).toBeCloseTo(builtin, 6);
  });

  it('prices a model the built-in table does not know (cachedInput defaults to input); events with costUsd keep theirs', async () => {
    const keyHash = sha256(randomUUID());
    const send = (extra: object) =>
      api('/ingest', {
        method: 'POST',
        headers: { 'x-api-key': ingestKey },
        body: { events: [{ requestId: randomUUID(), keyHash, provider: 'selfhosted', model: 'llama-ft-1', inputTokens: 2_000_000, cachedInputTokens: 1_000_000, outputTokens: 0, ...extra }] },
      });
    await send({});
    expect((await api(`/keys/${keyHash}`, { token: user.token })).body).toMatchObject({ spend: { total: 0 }, unpricedRequests: 1 });
    expect((await api('/prices/selfhosted/llama-ft-1', { method: 'PUT', token: user.token, body: { input: 3, output: 4 } })).body.cachedInput).toBe(3);
    await send({});
    await send({ costUsd: 0.5 });
    expect((await api(`/keys/${keyHash}`, { token: user.token })).body).toMatchObject({ spend: { total: 6.5 }, unpricedRequests: 1 });
  });

  it('refuses bad bodies and names (400), and viewers (403)', async () => {
    for (const body of [{ input: -1, output: 1 }, { input: 1 }, { input: 1, output: 1, extra: 1 }, { input: 0.0000001, output: 1 }, { input: 2_000_000, output: 1 }]) {
      expect((await api('/prices/openai/x', { method: 'PUT', token: user.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await api('/prices/Azure%20AI/x', { method: 'PUT', token: user.token, body: { input: 1, output: 1 } })).status).toBe(400);
  });

  it('at most 200 own prices per account, exactly under 210 racing PUTs; re-setting one takes no slot', async () => {
    const owner = await registerUser();
    const results = await Promise.all(
      Array.from({ length: 210 }, (_, i) => api(`/prices/custom/model-${i}`, { method: 'PUT', token: owner.token, body: { input: 1, output: 1 } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(200);
    expect(results.filter((r) => r.status === 409).map((r) => r.body.type)).toEqual(Array(10).fill(expect.stringContaining('price-limit')));
    const own = (await api('/prices', { token: owner.token })).body.items.filter((p: { source: string }) => p.source === 'account');
    expect(own).toHaveLength(200);
    const setAgain = own[0] as { provider: string; model: string };
    expect((await api(`/prices/${setAgain.provider}/${setAgain.model}`, { method: 'PUT', token: owner.token, body: { input: 2, output: 2 } })).status).toBe(200);
    expect((await api(`/prices/custom/another`, { method: 'PUT', token: owner.token, body: { input: 2, output: 2 } })).status).toBe(409);
    expect((await api(`/prices/${setAgain.provider}/${setAgain.model}`, { method: 'DELETE', token: owner.token })).status).toBe(204);
    expect((await api(`/prices/custom/another`, { method: 'PUT', token: owner.token, body: { input: 2, output: 2 } })).status).toBe(200);
  });
});
