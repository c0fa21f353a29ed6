/**
 * The reporter's guard against the local stack, with the official OpenAI and Anthropic SDKs: a key whose stop budget
 * is past its limit is refused by the reporter itself (the provider stand-in sees no call), the SDK raises its normal
 * rate-limit error naming the budget after exactly one attempt (default retries on); Burnrate unreachable for 11
 * minutes (an injected clock, no real waiting) → calls flow again.
 */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReporter } from '../../reporter/src/index.ts';
import { ANTHROPIC_KEY, OPENAI_KEY, startInferenceStandin, type Standin } from '../../reporter/test/inference-standin.ts';
import { api, registerUser, stack, type RegisteredUser } from './harness.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const silent = { warn: () => undefined };

let standin: Standin;
let user: RegisteredUser;
let ingestKey: string;

/** Spend on `key` past a $1 stop budget named `name` (the key exists after its first event). */
async function stopKey(key: string, provider: string, name: string): Promise<string> {
  const hash = sha256(key);
  const event = (costUsd: number) => ({ requestId: `req-${Math.random()}`, keyHash: hash, provider, model: 'm', inputTokens: 1, outputTokens: 1, costUsd });
  expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event(0.01)] } })).status).toBe(200);
  const created = await api('/budgets', { method: 'POST', token: user.token, body: { name, monthlyLimit: 1, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event(2)] } })).status).toBe(200);
  return created.body.id;
}

beforeAll(async () => {
  standin = await startInferenceStandin();
  user = await registerUser();
  ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'guard' } })).body.key;
  await stopKey(OPENAI_KEY, 'openai', 'OpenAI app cap');
  await stopKey(ANTHROPIC_KEY, 'anthropic', 'Claude app cap');
});
afterAll(() => standin.close());

/** Every request the stand-in saw, whatever its path (an upper-case or doubled-slash path is a call too). */
const callsToStandin = () => standin.seen.length;

/** A key of the same provider that no budget stops. */
const OTHER_OPENAI_KEY = 'sk-proj-standin-openai-1111111111111111111111oThR';
const OTHER_ANTHROPIC_KEY = 'sk-ant-api03-standin-anthropic-111111111111111111OtHr';

/**
 * The twelve calls of the review, each through an official SDK and `reporter.fetch`: the paths where usage is read
 * (chat, messages) and ten where it is not, with the path spelled as the provider would not (case, `//`, `%2F`).
 * `path`: the path the SDK really asks for (checked against what reached `reporter.fetch`).
 */
function twelveCalls(openaiKey: string, anthropicKey: string, fetch: typeof globalThis.fetch) {
  const openai = (base = '/v1') => new OpenAI({ apiKey: openaiKey, baseURL: `${standin.url}${base}`, fetch, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: anthropicKey, baseURL: standin.url, fetch, maxRetries: 0 });
  const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };
  return [
    { path: '/v1/chat/completions', provider: 'openai', call: () => openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) },
    { path: '/v1/messages', provider: 'anthropic', call: () => anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }) },
    { path: '/v1/images/generations', provider: 'openai', call: () => openai().images.generate({ model: 'gpt-image-1', prompt: 'a cat' }) },
    { path: '/v1/completions', provider: 'openai', call: () => openai().completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Hi' }) },
    { path: '/v1/audio/speech', provider: 'openai', call: () => openai().audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hi' }) },
    { path: '/v1/batches', provider: 'openai', call: () => openai().batches.create({ input_file_id: 'file-abc', endpoint: '/v1/chat/completions', completion_window: '24h' }) },
    {
      path: '/v1/messages/batches',
      provider: 'anthropic',
      call: () => anthropic.messages.batches.create({ requests: [{ custom_id: 'a', params: { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] } }] }),
    },
    { path: '/v1/responses/compact', provider: 'openai', call: () => openai().responses.compact({ model: 'gpt-5.1', input: 'Hi' } as never) },
    { path: '/v1/realtime/sessions', provider: 'openai', call: () => openai().beta.realtime.sessions.create({ model: 'gpt-4o-realtime-preview' }) },
    { path: '/V1/Chat/Completions', provider: 'openai', call: () => openai('/V1').post('/Chat/Completions', { body: chatBody }) },
    { path: '/v1//chat/completions', provider: 'openai', call: () => openai().post('//chat/completions', { body: chatBody }) },
    { path: '/v1/chat%2Fcompletions', provider: 'openai', call: () => openai().post('/chat%2Fcompletions', { body: chatBody }) },
  ] as const;
}

/** `reporter.fetch`, recording the path of every call handed to it. */
function recording(reporter: { fetch: typeof fetch }, paths: string[]): typeof fetch {
  return (input, init) => {
    paths.push(new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).pathname);
    return reporter.fetch(input, init);
  };
}

describe('the reporter refuses a stopped key’s calls itself', () => {
  it('refuses all twelve calls of a blocked key, whatever the path and its spelling, and none reaches the provider', async () => {
    const reporter = createReporter({ ingestKey, baseUrl: stack().apiUrl, logger: silent });
    await reporter.refreshBlocks();
    const paths: string[] = [];
    for (const c of twelveCalls(OPENAI_KEY, ANTHROPIC_KEY, recording(reporter, paths))) {
      const before = callsToStandin();
      const error = await c.call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(paths.at(-1), c.path).toBe(c.path);
      if (c.provider === 'openai') {
        expect(error, c.path).toBeInstanceOf(OpenAI.RateLimitError);
        expect((error as InstanceType<typeof OpenAI.RateLimitError>).code, c.path).toBe('budget_exceeded');
        expect((error as Error).message, c.path).toContain('"OpenAI app cap"');
      } else {
        expect(error, c.path).toBeInstanceOf(Anthropic.RateLimitError);
        expect((error as InstanceType<typeof Anthropic.RateLimitError>).error, c.path).toMatchObject({ type: 'error', error: { type: 'budget_exceeded' } });
      }
      expect(callsToStandin(), `${c.path} reached the provider`).toBe(before);
    }
    await reporter.close();
  });

  it('lets the same twelve calls of keys without a block through to the provider, untouched', async () => {
    const reporter = createReporter({ ingestKey, baseUrl: stack().apiUrl, logger: silent });
    await reporter.refreshBlocks();
    const paths: string[] = [];
    for (const c of twelveCalls(OTHER_OPENAI_KEY, OTHER_ANTHROPIC_KEY, recording(reporter, paths))) {
      const before = callsToStandin();
      // The stand-in answers what it serves and 404 for the rest: either way the call reached it.
      const error = await c.call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error instanceof OpenAI.RateLimitError || error instanceof Anthropic.RateLimitError, c.path).toBe(false);
      expect(callsToStandin(), c.path).toBe(before + 1);
      expect(standin.seen.at(-1)!.raw.length, c.path).toBeGreaterThan(0);
    }
    await reporter.close();
  });

  it('OpenAI SDK (default retries): one attempt, a RateLimitError naming the budget, code budget_exceeded, no provider call', async () => {
    let attempts = 0;
    const reporter = createReporter({ ingestKey, baseUrl: stack().apiUrl, logger: silent });
    await reporter.refreshBlocks();
    const counting: typeof fetch = (input, init) => {
      attempts += 1;
      return reporter.fetch(input, init);
    };
    const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: counting });
    const before = callsToStandin();
    const error = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).status).toBe(429);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('budget_exceeded');
    expect((error as Error).message).toContain('"OpenAI app cap"');
    expect(attempts).toBe(1);
    expect(callsToStandin()).toBe(before);
    await reporter.close();
  });

  it('Anthropic SDK (default retries): one attempt, a RateLimitError naming the budget, no provider call', async () => {
    let attempts = 0;
    const reporter = createReporter({ ingestKey, baseUrl: stack().apiUrl, logger: silent });
    await reporter.refreshBlocks();
    const anthropic = new Anthropic({
      apiKey: ANTHROPIC_KEY,
      baseURL: standin.url,
      fetch: (input, init) => {
        attempts += 1;
        return reporter.fetch(input, init);
      },
    });
    const before = callsToStandin();
    const error = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as InstanceType<typeof Anthropic.RateLimitError>).error).toMatchObject({
      type: 'error',
      error: { type: 'budget_exceeded', message: expect.stringContaining('"Claude app cap"') },
    });
    expect(attempts).toBe(1);
    expect(callsToStandin()).toBe(before);
    await reporter.close();
  });

  it('enforce "observe" lets the call through', async () => {
    const reporter = createReporter({ ingestKey, baseUrl: stack().apiUrl, logger: silent, enforce: 'observe' });
    const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch });
    const before = callsToStandin();
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    expect(callsToStandin()).toBe(before + 1);
    await reporter.close();
  });

  it('Burnrate unreachable: the last list holds for 10 minutes, then calls flow again (never fails closed)', async () => {
    let now = Date.now();
    let burnrateDown = false;
    // The network as the reporter sees it: Burnrate's address stops answering while `burnrateDown`.
    const network: typeof fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (burnrateDown && url.startsWith(stack().apiUrl)) return Promise.reject(new TypeError('fetch failed'));
      return fetch(input, init);
    };
    const reporter = createReporter({ ingestKey, baseUrl: stack().apiUrl, logger: silent, fetch: network, now: () => now });
    await reporter.refreshBlocks();
    const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch, maxRetries: 0 });
    const call = () => openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    await expect(call()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    burnrateDown = true;
    now += 9 * 60_000;
    await reporter.refreshBlocks();
    await expect(call()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    now += 2 * 60_000; // 11 minutes without Burnrate
    await reporter.refreshBlocks();
    const before = callsToStandin();
    await call();
    expect(callsToStandin()).toBe(before + 1);
    // Burnrate back: the list is read again and holds again.
    burnrateDown = false;
    await reporter.refreshBlocks();
    await expect(call()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await reporter.close();
  });
});
