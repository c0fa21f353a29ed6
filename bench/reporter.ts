/**
 * `npm run bench:reporter`: what the reporter costs the application that uses it.
 * - Added latency per call: the time the reporter's `fetch` spends before handing the request on and after the
 *   response comes back (the stand-in's own time excluded), p50 / p99 over JSON and streamed calls.
 * - Events shipped per second from one process: calls through the reporter until Burnrate (a local receiver that
 *   answers as `POST /ingest` does) has every event.
 * - Memory at the queue bound: heap held by 10,000 queued events while Burnrate can't be reached.
 * Figures only; nothing here is asserted.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createReporter } from '../reporter/src/index.ts';
import { OPENAI_KEY, startInferenceStandin } from '../reporter/test/inference-standin.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(3)} ms`;

async function receiver(): Promise<{ url: string; events: () => number; close: () => void }> {
  let events = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const n = (JSON.parse(text).events as unknown[]).length;
      events += n;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ accepted: n, duplicates: 0, rejected: [] }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, events: () => events, close: () => server.close() };
}

const standin = await startInferenceStandin();
const sink = await receiver();
const chatBody = (stream: boolean) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream });
const call = (f: typeof fetch, stream: boolean) =>
  f(`${standin.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' }, body: chatBody(stream) }).then((r) => r.text());

// 1. Added latency: the reporter's own time around the provider call.
for (const stream of [false, true]) {
  const added: number[] = [];
  let handedOn = 0;
  let cameBack = 0;
  const timed: typeof fetch = async (input, init) => {
    if (!String(input).includes('/v1/')) return fetch(input, init);
    handedOn = performance.now();
    const res = await fetch(input, init);
    cameBack = performance.now();
    return res;
  };
  const reporter = createReporter({ ingestKey: 'brk_bench', baseUrl: sink.url, fetch: timed });
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now();
    const res = await reporter.fetch(`${standin.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' },
      body: chatBody(stream),
    });
    const returned = performance.now();
    await res.text();
    if (i >= 100) added.push(handedOn - start + (returned - cameBack));
  }
  await reporter.close();
  console.log(`added latency per ${stream ? 'streamed' : 'JSON'} call (${added.length} calls): p50 ${ms(pct(added, 50))}, p99 ${ms(pct(added, 99))}, max ${ms(Math.max(...added))}`);
}

// 2. Events shipped per second: every call through the reporter, until the receiver has them all.
{
  const before = sink.events();
  const canned = JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } });
  // The provider answers in-process, so the figure is the reporter's own throughput (reading usage, hashing, batching, sending).
  const provider: typeof fetch = async (input, init) =>
    String(input).includes('/v1/') ? new Response(canned, { headers: { 'content-type': 'application/json' } }) : fetch(input, init);
  const reporter = createReporter({ ingestKey: 'brk_bench', baseUrl: sink.url, fetch: provider, maxQueue: EVENTS });
  const start = performance.now();
  for (let i = 0; i < EVENTS; i++) await (await reporter.fetch('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { authorization: `Bearer ${OPENAI_KEY}` }, body: '{}' })).text();
  await new Promise((resolve) => setTimeout(resolve, 0));
  await reporter.close();
  const seconds = (performance.now() - start) / 1000;
  console.log(`events shipped from one process: ${sink.events() - before} in ${seconds.toFixed(2)} s = ${Math.round((sink.events() - before) / seconds)} events/s (batches of 1,000)`);
}

// 3. Memory at the queue bound, Burnrate unreachable.
{
  const gc = (globalThis as { gc?: () => void }).gc;
  const canned = JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion', model: 'gpt-4o-mini-2024-07-18', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } });
  let n = 0;
  const provider: typeof fetch = async (input, init) =>
    String(input).includes('/v1/')
      ? new Response(canned.replace('chatcmpl-x', `chatcmpl-${String(++n).padStart(24, '0')}`), { headers: { 'content-type': 'application/json' } })
      : fetch(input, init);
  gc?.();
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const reporter = createReporter({ ingestKey: 'brk_bench', baseUrl: 'http://127.0.0.1:9/api', fetch: provider, flushIntervalMs: 3_600_000, logger: { warn: () => undefined } });
  for (let i = 0; i < 15_000; i++) await (await reporter.fetch('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { authorization: `Bearer ${OPENAI_KEY}` }, body: '{}' })).text();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc?.();
  gc?.();
  const held = process.memoryUsage().heapUsed - heapBefore;
  console.log(`memory at the queue bound (10,000 events queued + 2 batches of 1,000 retrying; ${reporter.stats().dropped} of 15,000 dropped): ${(held / 1024 / 1024).toFixed(1)} MiB of heap${gc ? '' : ' (run with --expose-gc for a settled figure)'}`);
  void reporter.close();
}

sink.close();
await standin.close();
process.exit(0);
