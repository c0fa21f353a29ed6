/**
 * The reporter with the official SDKs (`openai`, `@anthropic-ai/sdk`) against stand-ins of the providers' inference
 * endpoints, and a recording receiver in place of Burnrate (its faults — down, 500, 429 — are the point here; the
 * real stack is in stack.test.ts). What the caller receives must be byte for byte what it gets without the reporter.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createReporter, type Reporter } from '../src/index.ts';
import { ANTHROPIC_KEY, OPENAI_KEY, USAGE, startInferenceStandin, type Standin } from './inference-standin.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A receiver of `POST /api/ingest` that records every batch and answers as told. */
interface Receiver {
  url: string;
  batches: Array<{ key: string | undefined; events: any[] }>;
  answer: (events: any[]) => { status: number; body: unknown };
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    batches: [],
    answer: (events) => ({ status: 200, body: { accepted: events.length, duplicates: 0, rejected: [] } }),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    // The reporter's block-list read, answered as Burnrate answers it when nothing is blocked.
    if (req.method === 'GET' && req.url?.endsWith('/ingest/blocks')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ blocked: [], refreshAfterSeconds: 30 }));
      return;
    }
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const events = JSON.parse(text).events as any[];
      receiver.batches.push({ key: req.headers['x-api-key'] as string | undefined, events });
      const { status, body } = receiver.answer(events);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}

let standin: Standin;
let receiver: Receiver;
const silent = { warn: () => undefined };

beforeAll(async () => {
  standin = await startInferenceStandin();
  receiver = await startReceiver();
});
afterAll(async () => {
  await standin.close();
  await receiver.close();
});

/**
 * A reporter on the test receiver. Retries wait at most 2–32 ms (retryDelayMs: 1) instead of 0.2–3.2 s: the tests
 * check how many tries are made and what is delivered or dropped, not how long the backoff sleeps.
 */
function reporterFor(options: Partial<Parameters<typeof createReporter>[0]> = {}): Reporter {
  return createReporter({ ingestKey: 'brk_test', baseUrl: receiver.url, logger: silent, retryDelayMs: 1, ...options });
}

/** Every event received since `from` (batch index). */
const eventsSince = (from: number) => receiver.batches.slice(from).flatMap((b) => b.events);

describe('with the official OpenAI SDK', () => {
  it('reports a chat completion: hash and last 4 of the key, response id, model, tokens with cache reads', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    await reporter.flush();
    const [event] = eventsSince(from);
    expect(receiver.batches[from]?.key).toBe('brk_test');
    expect(event).toEqual({
      requestId: completion.id,
      keyHash: sha256(OPENAI_KEY),
      keyHint: OPENAI_KEY.slice(-4),
      provider: 'openai',
      model: 'gpt-4o-mini',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      inputTokens: USAGE.chat.prompt_tokens,
      outputTokens: USAGE.chat.completion_tokens,
      cachedInputTokens: USAGE.chat.prompt_tokens_details.cached_tokens,
      // OpenAI's cache writes (prompt_tokens_details.cache_write_tokens), part of the input as the importer counts them.
      cacheWriteInputTokens: USAGE.chat.prompt_tokens_details.cache_write_tokens,
    });
    expect(JSON.stringify(receiver.batches.slice(from))).not.toContain(OPENAI_KEY);
    expect(reporter.stats()).toEqual({ sent: 1, rejected: 0, dropped: 0, failedBatches: 0 });
    await reporter.close();
  });

  it('adds include_usage to a stream that lacks it and keeps the usage chunk and the "usage":null out of what the caller sees', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(standin.seen.at(-1)?.body.stream_options).toEqual({ include_usage: true });
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? null)).toEqual(['', 'Hello', ' there.', null]);
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    await reporter.flush();
    const [event] = eventsSince(from);
    expect(event).toMatchObject({ requestId: chunks[0].id, inputTokens: 1200, outputTokens: 80, cachedInputTokens: 1024, cacheWriteInputTokens: 128 });
    expect(event).not.toHaveProperty('serviceTier');
    await reporter.close();
  });

  it('passes a stream through untouched byte for byte, whether it added the option or the caller set it', async () => {
    const reporter = reporterFor();
    const call = (f: typeof fetch, extra: object) =>
      f(`${standin.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }], stream: true, ...extra }),
      }).then(async (r) => {
        // The response around the stream is the provider's: status, headers, url.
        const { status, statusText, url, redirected } = r;
        const headers = [...r.headers].filter(([name]) => name !== 'date');
        expect({ status, statusText, url, redirected, headers }).toEqual({ status: 200, statusText: 'OK', url: `${standin.url}/v1/chat/completions`, redirected: false, headers: expect.any(Array) });
        expect(headers).toContainEqual(['content-type', 'text/event-stream; charset=utf-8']);
        return r.text();
      });
    // Ids carry the stand-in's request counter: compare with it taken out.
    const same = (s: string) => s.replace(/chatcmpl-\d+/g, 'chatcmpl-N');
    expect(same(await call(reporter.fetch, {}))).toBe(same(await call(fetch, {})));
    const asked = { stream_options: { include_usage: true } };
    const withReporter = await call(reporter.fetch, asked);
    expect(same(withReporter)).toBe(same(await call(fetch, asked)));
    expect(withReporter).toContain('"choices":[],');
    await reporter.flush();
    expect(reporter.stats().sent).toBe(2);
    await reporter.close();
  });

  it('leaves the provider\'s chunks as they came for another reader of them (a fetch of the caller\'s that clones the response)', async () => {
    let copy: Promise<string> | undefined;
    const cloning: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).includes('/v1/')) return res;
      // As a mocking or recording library does: a response over a stream of its own, cloned for its records. A clone
      // of such a stream hands its reader the very chunks the reporter reads (a clone of fetch's own body copies them).
      const reader = res.body!.getReader();
      const own = new Response(
        new ReadableStream<Uint8Array>({
          async pull(c) {
            const { done, value } = await reader.read();
            if (done) c.close();
            else c.enqueue(value);
          },
        }),
        { status: res.status, headers: res.headers },
      );
      copy = own.clone().text();
      return own;
    };
    const reporter = reporterFor({ fetch: cloning });
    const call = (f: typeof fetch, extra: object) =>
      f(`${standin.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }], stream: true, ...extra }),
      }).then((r) => r.text());
    const same = (s: string) => s.replace(/chatcmpl-\d+/g, 'chatcmpl-N');
    const filtered = await call(reporter.fetch, {});
    expect(same(filtered)).toBe(same(await call(fetch, {})));
    // The clone has the provider's stream as sent, the usage the reporter asked for included, byte for byte.
    expect(same(await copy!)).toBe(same(await call(fetch, { stream_options: { include_usage: true } })));
    await reporter.close();
  });

  it('reports the responses API, JSON and streamed, and embeddings by their x-request-id', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch });
    const whole = await client.responses.create({ model: 'gpt-5-mini', input: 'Hi' });
    const streamed = await client.responses.create({ model: 'gpt-5-mini', input: 'Hi', stream: true });
    let completedId = '';
    for await (const e of streamed) if (e.type === 'response.completed') completedId = e.response.id;
    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'Hi' }).withResponse();
    await reporter.flush();
    const events = eventsSince(from);
    const responses = { inputTokens: 900, outputTokens: 150, cachedInputTokens: 512, cacheWriteInputTokens: 64 };
    expect(events).toEqual([
      expect.objectContaining({ requestId: whole.id, model: 'gpt-5-mini', ...responses }),
      expect.objectContaining({ requestId: completedId, model: 'gpt-5-mini', ...responses }),
      expect.objectContaining({ requestId: embedding.response.headers.get('x-request-id'), model: 'text-embedding-3-small', inputTokens: 42, outputTokens: 0 }),
    ]);
    expect(events[2]).not.toHaveProperty('cachedInputTokens');
    await reporter.close();
  });

  it('sends the tier the response names (flex, priority; default is standard), JSON and streamed', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch });
    const flex = await client.chat.completions.create({ model: 'gpt-5-mini', messages: [{ role: 'user', content: 'Hi' }], service_tier: 'flex' });
    expect(flex.service_tier).toBe('flex');
    const stream = await client.chat.completions.create({ model: 'gpt-5.1', messages: [{ role: 'user', content: 'Hi' }], service_tier: 'priority', stream: true });
    for await (const chunk of stream) void chunk;
    const priority = await client.responses.create({ model: 'gpt-5.1', input: 'Hi', service_tier: 'priority' });
    const auto = await client.responses.create({ model: 'gpt-5.1', input: 'Hi', service_tier: 'auto' });
    expect(auto.service_tier).toBe('default');
    await reporter.flush();
    const events = eventsSince(from);
    expect(events.map((e) => e.serviceTier)).toEqual(['flex', 'priority', 'priority', undefined]);
    expect(events[2]).toMatchObject({ requestId: priority.id, inputTokens: 900, cacheWriteInputTokens: 64 });
    await reporter.close();
  });

  it('reports the usage of a Responses stream that ends in response.failed', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${standin.url}/v1`, fetch: reporter.fetch });
    const stream = await client.responses.create({ model: 'gpt-5-mini', input: 'Hi', stream: true }, { headers: { 'x-standin-outcome': 'failed' } });
    let failedId = '';
    for await (const e of stream) if (e.type === 'response.failed') failedId = e.response.id;
    expect(failedId).not.toBe('');
    await reporter.flush();
    expect(eventsSince(from)).toEqual([expect.objectContaining({ requestId: failedId, inputTokens: 900, outputTokens: 150, cachedInputTokens: 512, cacheWriteInputTokens: 64 })]);
    await reporter.close();
  });
});

describe('with the official Anthropic SDK', () => {
  const expected = {
    provider: 'anthropic',
    keyHash: sha256(ANTHROPIC_KEY),
    keyHint: ANTHROPIC_KEY.slice(-4),
    // input 25 + reads 10,000 + 5m writes 1,000 + 1h writes 2,000
    inputTokens: 13_025,
    cachedInputTokens: 10_000,
    cacheWriteInputTokens: 1000,
    cacheWrite1hInputTokens: 2000,
    outputTokens: 300,
  };

  it('reports a message with cache reads and both cache-write classes', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: standin.url, fetch: reporter.fetch });
    const msg = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    await reporter.flush();
    expect(eventsSince(from)).toEqual([expect.objectContaining({ ...expected, requestId: msg.id, model: 'claude-sonnet-4-5' })]);
    await reporter.close();
  });

  it('reports a streamed message from message_start and the cumulative message_delta, the stream untouched', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: standin.url, fetch: reporter.fetch });
    const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Hello there.' }]);
    expect(final.usage.output_tokens).toBe(300);
    await reporter.flush();
    expect(eventsSince(from)).toEqual([expect.objectContaining({ ...expected, requestId: final.id, model: 'claude-haiku-4-5' })]);
    await reporter.close();
  });

  it('sends the tier (priority) and the web search and web fetch counts of a message', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: standin.url, fetch: reporter.fetch });
    const headers = { 'x-standin-service-tier': 'priority', 'x-standin-server-tools': '3,2' };
    const msg = await client.messages.create({ model: 'claude-opus-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }, { headers });
    expect(msg.usage.service_tier).toBe('priority');
    expect(msg.usage.server_tool_use).toEqual({ web_search_requests: 3, web_fetch_requests: 2 });
    const stream = client.messages.stream({ model: 'claude-opus-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'x-standin-server-tools': '1,0' } });
    const final = await stream.finalMessage();
    await reporter.flush();
    expect(eventsSince(from)).toEqual([
      expect.objectContaining({ ...expected, requestId: msg.id, serviceTier: 'priority', webSearchRequests: 3, webFetchRequests: 2 }),
      expect.objectContaining({ ...expected, requestId: final.id, webSearchRequests: 1 }),
    ]);
    expect(eventsSince(from)[1]).not.toHaveProperty('serviceTier');
    await reporter.close();
  });

  it('counts cache writes that grow during a stream (message_delta without a 5m/1h split) in the class written before', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: standin.url, fetch: reporter.fetch });
    const stream = client.messages.stream(
      { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] },
      { headers: { 'x-standin-cache-growth': '1500', 'x-standin-server-tools': '2,1' } },
    );
    const final = await stream.finalMessage();
    expect(final.usage.cache_creation_input_tokens).toBe(3000 + 1500);
    await reporter.flush();
    // message_start wrote 1,000 5-minute and 2,000 1-hour tokens: the 1,500 that grew are 5-minute writes (the default).
    expect(eventsSince(from)).toEqual([
      expect.objectContaining({ requestId: final.id, inputTokens: 13_025 + 1500, cacheWriteInputTokens: 1000 + 1500, cacheWrite1hInputTokens: 2000, webSearchRequests: 2, webFetchRequests: 1 }),
    ]);
    await reporter.close();
  });

  it('reports nothing for a refused call and hands the SDK its error (429 with retry-after, no retries)', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: standin.url, fetch: reporter.fetch, maxRetries: 0, defaultHeaders: { 'x-standin-status': '429' } });
    await expect(client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(Anthropic.RateLimitError);
    await reporter.flush();
    expect(eventsSince(from)).toEqual([]);
    await reporter.close();
  });
});

describe('a stream the caller reads slowly or stops reading', () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  /**
   * OpenAI in-process (the reporter's `fetch` option): a chat stream of `events` chunks, one per read of its body,
   * counting the reads; `"usage":null` in each chunk and a usage chunk when `include_usage` is asked. Burnrate's calls
   * go to the test receiver.
   */
  const provider = (events: number) => {
    let reads = 0;
    const providerFetch: typeof fetch = async (input, init) => {
      if (!String(input).includes('/v1/')) return fetch(input, init);
      const withUsage = JSON.parse(String(init!.body)).stream_options?.include_usage === true;
      const chunk = (i: number) =>
        `data: {"id":"chatcmpl-pace","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"t${i}"}}]${withUsage ? ',"usage":null' : ''}}\n\n`;
      let i = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(c) {
            reads += 1;
            if (i < events) return c.enqueue(encode(chunk(i++)));
            if (withUsage) c.enqueue(encode('data: {"id":"chatcmpl-pace","object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}\n\n'));
            c.enqueue(encode('data: [DONE]\n\n'));
            c.close();
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    };
    return { fetch: providerFetch, reads: () => reads };
  };

  it('reads the provider\'s stream at the caller\'s pace; when the caller cancels, reads the rest itself and reports its usage', async () => {
    for (const streamOptions of [undefined, { include_usage: true }]) {
      const from = receiver.batches.length;
      const openai = provider(1000);
      const reporter = reporterFor({ fetch: openai.fetch });
      const res = await reporter.fetch('https://api.openai.com/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [], stream: true, ...(streamOptions ? { stream_options: streamOptions } : {}) }),
      });
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('"content":"t0"');
      expect(first.includes('"usage":null')).toBe(streamOptions !== undefined);
      // Everything an in-memory stream would do in the background is done before the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      // As with plain fetch, the provider's stream is not read ahead of the caller (it was read to its end, buffered).
      expect(openai.reads()).toBeLessThanOrEqual(2);
      await reader.cancel();
      await vi.waitFor(() => expect(openai.reads()).toBe(1001));
      await reporter.flush();
      expect(eventsSince(from)).toMatchObject([{ requestId: 'chatcmpl-pace', model: 'gpt-4o', inputTokens: 7, outputTokens: 3 }]);
      await reporter.close();
    }
  });
});

describe('never in the caller\'s way', () => {
  const direct = async (f: typeof fetch, i: number) => {
    const res = await f(`${standin.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: `claude-${i}`, max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    return { status: res.status, text: (await res.text()).replace(/msg_\d+/, 'msg_N') };
  };

  for (const [name, setup] of [
    ['Burnrate answers 500', (r: Receiver) => (r.answer = () => ({ status: 500, body: { title: 'boom' } }))],
    ['Burnrate cannot be reached', () => undefined],
  ] as const) {
    it(`${name}: every call succeeds with the same bytes, nothing is thrown, the loss is counted and close() returns`, async () => {
      const down = name.includes('reached');
      const target = down ? 'http://127.0.0.1:9/api' : receiver.url;
      const saved = receiver.answer;
      setup(receiver);
      const warnings: string[] = [];
      const reporter = createReporter({ ingestKey: 'brk_test', baseUrl: target, logger: { warn: (m) => warnings.push(m) }, batchSize: 5, retryDelayMs: 1 });
      try {
        for (let i = 0; i < 12; i++) expect(await direct(reporter.fetch, i)).toEqual(await direct(fetch, i));
        await reporter.close();
      } finally {
        receiver.answer = saved;
      }
      const stats = reporter.stats();
      expect(stats).toMatchObject({ sent: 0, dropped: 12 });
      expect(stats.failedBatches).toBeGreaterThanOrEqual(3);
      expect(warnings).toHaveLength(1);
    });
  }

  it('keeps at most maxQueue events, dropping the oldest, and sends the rest once Burnrate answers', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor({ maxQueue: 3, flushIntervalMs: 60_000 });
    for (let i = 0; i < 5; i++) await (await direct(reporter.fetch, i)).text;
    await new Promise((resolve) => setTimeout(resolve, 50));
    await reporter.flush();
    expect(reporter.stats()).toMatchObject({ sent: 3, dropped: 2 });
    expect(eventsSince(from).map((e) => e.model)).toEqual(['claude-2', 'claude-3', 'claude-4']);
    await reporter.close();
  });

  it('batches up to 1,000 events per request, even when asked for more', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor({ flushIntervalMs: 60_000, batchSize: 5000 });
    // 1,001 calls, 100 at a time: all at once overflow the stand-in's accept queue on a busy machine (ECONNRESET).
    for (let i = 0; i < 1001; i += 100) await Promise.all(Array.from({ length: Math.min(100, 1001 - i) }, (_, j) => direct(reporter.fetch, i + j)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await reporter.flush();
    expect(receiver.batches.slice(from).map((b) => b.events.length)).toEqual([1000, 1]);
    expect(eventsSince(from).map((e) => e.model)).toEqual(Array.from({ length: 1001 }, (_, i) => `claude-${i}`));
    await reporter.close();
  });

  it('retries a 429 or 5xx answer, then delivers', async () => {
    const from = receiver.batches.length;
    let calls = 0;
    const saved = receiver.answer;
    receiver.answer = (events) => (++calls <= 2 ? { status: calls === 1 ? 429 : 503, body: {} } : saved(events));
    const reporter = reporterFor();
    try {
      await direct(reporter.fetch, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await reporter.flush();
    } finally {
      receiver.answer = saved;
    }
    expect(receiver.batches.length - from).toBe(3);
    expect(reporter.stats()).toEqual({ sent: 1, rejected: 0, dropped: 0, failedBatches: 0 });
    await reporter.close();
  });

  it('calls onRejected once per code, with the first event refused for it', async () => {
    const saved = receiver.answer;
    receiver.answer = (events) => ({
      status: 200,
      body: { accepted: 0, duplicates: 0, rejected: events.map((_, index) => ({ index, code: 'provider_connected', message: 'Its spend comes from the connection.' })) },
    });
    const seen: Array<{ code: string; model: string }> = [];
    const reporter = reporterFor({ onRejected: (r) => seen.push({ code: r.code, model: r.event.model }) });
    try {
      for (let i = 0; i < 3; i++) {
        await direct(reporter.fetch, i);
        await new Promise((resolve) => setTimeout(resolve, 10));
        await reporter.flush();
      }
    } finally {
      receiver.answer = saved;
    }
    expect(seen).toEqual([{ code: 'provider_connected', model: 'claude-0' }]);
    expect(reporter.stats()).toMatchObject({ sent: 0, rejected: 3 });
    await reporter.close();
  });

  it('without onRejected, warns once per code with the reason and how to handle refusals; with it, says nothing', async () => {
    const saved = receiver.answer;
    const codes = ['provider_connected', 'invalid_event'];
    receiver.answer = (events) => ({
      status: 200,
      body: { accepted: 0, duplicates: 0, rejected: events.map((_, index) => ({ index, code: codes[index % 2], message: `Refused: ${codes[index % 2]}.` })) },
    });
    const warnings: string[] = [];
    const quiet: string[] = [];
    const reporter = reporterFor({ logger: { warn: (m) => warnings.push(m) } });
    const handled = reporterFor({ logger: { warn: (m) => quiet.push(m) }, onRejected: () => undefined });
    try {
      for (const r of [reporter, handled]) {
        for (let i = 0; i < 3; i++) {
          await direct(r.fetch, i);
          await direct(r.fetch, i + 10);
          await new Promise((resolve) => setTimeout(resolve, 10));
          await r.flush();
        }
      }
    } finally {
      receiver.answer = saved;
    }
    expect(warnings).toEqual([
      'Burnrate reporter: Burnrate refused an event (provider_connected): Refused: provider_connected. Later refusals for this reason are only counted in stats().rejected; pass onRejected to handle them.',
      'Burnrate reporter: Burnrate refused an event (invalid_event): Refused: invalid_event. Later refusals for this reason are only counted in stats().rejected; pass onRejected to handle them.',
    ]);
    expect(quiet).toEqual([]);
    await reporter.close();
    await handled.close();
  });

  it('lets everything that is not a provider call pass untouched and unreported', async () => {
    const from = receiver.batches.length;
    const reporter = reporterFor();
    const res = await reporter.fetch(`${standin.url}/v1/models`, { headers: { authorization: `Bearer ${OPENAI_KEY}` } });
    expect(res.status).toBe(404);
    await reporter.flush();
    expect(eventsSince(from)).toEqual([]);
    await reporter.close();
  });
});
