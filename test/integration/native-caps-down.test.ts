/**
 * Native caps hold while Burnrate is down (docs/features/budgets-and-alerts.md, "Native caps"): a stop budget sets the
 * provider's own cap — an OpenAI project's hard limit, an OpenRouter key's limit, an Anthropic workspace's spend
 * limit — then Burnrate does nothing more (no sync, no block list), and an application's calls through the official
 * SDKs (`openai`, `@anthropic-ai/sdk`; OpenRouter through `openai`) are refused by the provider's stand-in itself once
 * the cap is reached, with the provider's documented error, at most one call past it; the key's own switch is never
 * touched (the cap did it, not Burnrate).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_STANDIN_PRICES } from '#local/anthropic-admin.ts';
import { OPENAI_STANDIN_PRICES } from '#local/openai-admin.ts';
import type { SyncResult } from '#shared/sync/all.ts';
import { api, registerUser, setPlan } from './harness.ts';
import { keyHash, newStandInOrg, standInsForFile, syncWhenFree, type Provider } from './standins.ts';

const frozenAt = new Date();
const orgs = standInsForFile();

const sync = (accountId: string, connectionId: string): Promise<SyncResult> => syncWhenFree(accountId, connectionId, frozenAt);

const MODEL = { openai: 'gpt-4.1-2025-04-14', anthropic: 'claude-opus-4-5-20251101', openrouter: 'openai/gpt-4.1' } as const;
const CAP = 5; // dollars
/** About this many dollars of output a call (Anthropic's SDK wants streaming past ~21,000 output tokens). */
const CALL = (provider: Provider) => (provider === 'anthropic' ? 0.5 : 1);

describe.each(['openai', 'openrouter', 'anthropic'] as const)('%s: with Burnrate stopped', (provider: Provider) => {
  it('the stand-in refuses the SDK’s calls past the native cap by itself, at most one call past it', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    // A new project / workspace / key with a first small call an hour ago (Burnrate lists a key once it has spent).
    // Today's seeded usage only: the cap is on a new project / workspace / key, the seed's history plays no part.
    const org = await newStandInOrg(provider, { now: new Date(frozenAt.getTime() - 3_600_000).toISOString(), late: null, historyDays: 1 });
    orgs.push(org);
    const projectId = provider === 'openrouter' ? null : ((await org.control('/projects', { name: 'Capped' })).id as string);
    const model = MODEL[provider];
    const key = await org.control('/keys', { name: 'capped app', projectId, model, ...(provider === 'openrouter' ? { tier: 'OpenAI' } : {}) });
    const first = provider === 'openai' ? { output: 1000, requests: 1 } : provider === 'anthropic' ? { output: 1000 } : { requests: 1, prompt: 10, completion: 10, cost: 10_000 };
    await org.control('/usage', { apiKeyId: key.id, model, ...(provider === 'openrouter' ? { tier: 'OpenAI' } : {}), add: first });
    await org.control('/clock', { now: frozenAt.toISOString() });
    const con = await api('/connections', { method: 'POST', token: user.token, body: { provider, adminKey: org.adminKey } });
    expect(con.status, JSON.stringify(con.body)).toBe(201);
    const connectionId = con.body.id as string;
    await sync(user.accountId, connectionId);
    expect((await api(`/connections/${connectionId}`, { method: 'PATCH', token: user.token, body: { enforcement: 'on' } })).status).toBe(200);
    const scope = provider === 'openrouter' ? { scope: 'KEY', keyHash: keyHash(provider, key.id) } : { scope: 'PROJECT', connectionId, projectId, ...(provider === 'anthropic' ? { nativeCap: true } : {}) };
    const budget = await api('/budgets', { method: 'POST', token: user.token, body: { name: 'cap', monthlyLimit: CAP, alertThreshold: 80, action: 'stop', ...scope } });
    expect(budget.status, JSON.stringify(budget.body)).toBe(201);
    await sync(user.accountId, connectionId);
    const view = ((await api('/budgets', { token: user.token })).body.items as any[]).find((b) => b.id === budget.body.id).enforcement;
    expect(view).toMatchObject({ status: 'armed' });
    if (provider !== 'openai') expect(view.nativeCap).toMatchObject({ status: 'set', provider });

    // From here on Burnrate does nothing: calls through the official SDK until the stand-in refuses.
    const output = Math.round((CALL(provider) / (provider === 'anthropic' ? 25 : 8)) * 1_000_000);
    const messages = [{ role: 'user' as const, content: 'Summarise the quarterly report.' }];
    let spent = provider === 'openai' ? (1000 * OPENAI_STANDIN_PRICES[model]!.output) / 1e9 : provider === 'anthropic' ? (1000 * ANTHROPIC_STANDIN_PRICES[model]!.output) / 1e9 : 0.01;
    let refusal: { status?: number; error?: any } | undefined;
    for (let i = 0; i < 20 && !refusal; i++) {
      try {
        if (provider === 'anthropic') {
          const m = await new Anthropic({ apiKey: key.secret, baseURL: org.url, maxRetries: 0 }).messages.create({ model, max_tokens: output, messages });
          const p = ANTHROPIC_STANDIN_PRICES[model]!;
          spent += (m.usage.input_tokens * p.input + m.usage.output_tokens * p.output) / 1e9;
        } else {
          const client = new OpenAI({ apiKey: key.secret, baseURL: `${org.url}${provider === 'openrouter' ? '/api/v1' : '/v1'}`, maxRetries: 0 });
          const c = await client.chat.completions.create({ model, max_tokens: output, messages });
          const p = OPENAI_STANDIN_PRICES['gpt-4.1-2025-04-14']!;
          spent += provider === 'openrouter' ? (c.usage as unknown as { cost: number }).cost : (c.usage!.prompt_tokens * p.input + c.usage!.completion_tokens * p.output) / 1e9;
        }
      } catch (error) {
        refusal = error as { status?: number; error?: any };
      }
    }
    expect(refusal?.status, String(refusal)).toBe(provider === 'openai' ? 429 : provider === 'openrouter' ? 402 : 400);
    // (The `openai` SDK's `error` is the body's `error` object; `@anthropic-ai/sdk`'s the whole body.)
    if (provider === 'openai') expect(refusal!.error).toMatchObject({ code: 'project_spend_limit_exceeded' });
    if (provider === 'openrouter') expect(refusal!.error).toMatchObject({ code: 402, metadata: { limit_source: 'openrouter_key_limit' } });
    if (provider === 'anthropic') expect(refusal!.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/workspace API usage limits/) } });
    expect(spent).toBeGreaterThanOrEqual(CAP);
    expect(spent).toBeLessThan(CAP + CALL(provider) + 0.01); // at most the one call that started under the cap
    // The provider's cap refused them, not a key switch of Burnrate's.
    expect(((await org.state()).keys as any[]).find((k) => k.id === key.id).status).toBe('active');
  });
});

describe('OpenAI’s documented enforcement lag, as a stand-in setting', () => {
  it('a project past its hard limit is refused only `lagSeconds` after its spend reached it (0 by default)', async () => {
    const org = await newStandInOrg('openai', { now: frozenAt.toISOString(), late: null });
    orgs.push(org);
    const projectId = (await org.control('/projects', { name: 'Lagging' })).id as string;
    const model = MODEL.openai;
    const key = await org.control('/keys', { name: 'app', projectId, model });
    const res = await fetch(`${org.url}/v1/organization/projects/${projectId}/spend_limit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ threshold_amount: 100, currency: 'USD', interval: 'month' }),
    });
    expect(res.status).toBe(200);
    expect((await org.control('/spend-limits', { lagSeconds: 60 })).lagSeconds).toBe(60);
    const client = new OpenAI({ apiKey: key.secret, baseURL: `${org.url}/v1`, maxRetries: 0 });
    const callAt = async (seconds: number) => {
      await org.control('/clock', { now: new Date(frozenAt.getTime() + seconds * 1000).toISOString() });
      try {
        await client.chat.completions.create({ model, max_tokens: 150_000, messages: [{ role: 'user', content: 'Hi' }] }); // $1.20
        return 200;
      } catch (error) {
        return (error as { status?: number }).status;
      }
    };
    expect(await callAt(1)).toBe(200); // $1.20: past the $1.00 limit from now on
    expect(await callAt(30)).toBe(200); // within the lag: still served
    expect(await callAt(62)).toBe(429); // the lag over: refused
  });
});
