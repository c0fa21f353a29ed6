/**
 * `npm run bench:reporter`: what the reporter costs the application that uses it.
 * - Added latency per call: the time the reporter's `fetch` spends before handing the request on and after the
 *   response comes back (the stand-in's own time excluded), p50 / p99 over JSON and streamed calls.
 * - Events shipped per second from one process: calls through the reporter until Burnrate (a local receiver that
 *   answers as `POST /ingest` does) has every event.
 * - Memory at the queue bound: heap held by 10,000 queued events while Burnrate can't be reached.
 * - Streams that try the parser: one 32 MB event without a blank line, and a normal 200,000-event stream: the
 *   caller's time to first byte and to the end, through plain fetch and through the reporter (both ways: a copy read
 *   beside the caller, and the filter when the reporter adds `stream_options`), with the process's peak memory.
 * - A Burnrate that accepts and never answers: how long a script that makes one call and never closes the reporter
 *   takes to exit (the reporter holds it at most 10 s in all: the block list's read, then the exit flush), and the same
 *   with `closeTimeoutMs: 1000` (the bound the reporter's test uses).
 * Figures only; nothing here is asserted.
 */
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createReporter } from '../reporter/src/index.ts';
import { ANTHROPIC_KEY, OPENAI_KEY, startInferenceStandin } from '../reporter/test/inference-standin.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(3)} ms`;

async function receiver(): Promise<{ url: string; events: () => number; close: () => void }> {
  let events = 0;
  const server = createServer((req, res) => {
    // The reporter's block-list read, answered as Burnrate answers it when nothing is blocked.
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ blocked: [], refreshAfterSeconds: 30 }));
      return;
    }
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

// 4. Streams that try the parser.
{
  const chunkEvent = (i: number) =>
    `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"token ${String(i).padStart(6, '0')}"},"finish_reason":null}]}\n\n`;
  const usageEvent = 'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}\n\ndata: [DONE]\n\n';
  const bodies: Record<string, Buffer> = {
    'one 32 MB event': Buffer.concat([Buffer.from('data: {"choices":[{"delta":{"content":"'), Buffer.alloc(32 * 1024 * 1024, 120), Buffer.from('"}}]}\n\n'), Buffer.from(usageEvent)]),
    '200,000 events': Buffer.from(Array.from({ length: 200_000 }, (_, i) => chunkEvent(i)).join('') + usageEvent),
  };
  let current: Buffer = Buffer.alloc(0);
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let at = 0; at < current.length; at += 64 * 1024) if (!res.write(current.subarray(at, at + 64 * 1024))) await once(res, 'drain');
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const timeCall = async (f: typeof fetch, options: object) => {
    const start = performance.now();
    const res = await f(url, { method: 'POST', headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [], ...options }) });
    const reader = res.body!.getReader();
    let first = 0;
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!first) first = performance.now() - start;
      bytes += value.length;
    }
    return { first, total: performance.now() - start, bytes };
  };
  const gc = (globalThis as { gc?: () => void }).gc;
  for (const [name, body] of Object.entries(bodies)) {
    current = body;
    const reporter = createReporter({ ingestKey: 'brk_bench', baseUrl: sink.url, logger: { warn: () => undefined } });
    const ways: [string, typeof fetch, object][] = [
      ['plain fetch', fetch, { stream_options: { include_usage: true } }],
      ['reporter, copy read beside', reporter.fetch, { stream_options: { include_usage: true } }],
      ['reporter, adding stream_options', reporter.fetch, {}],
    ];
    for (const [way, f, options] of ways) {
      await timeCall(f, options); // warm-up
      gc?.();
      peak = process.memoryUsage().rss;
      const runs: { first: number; total: number; bytes: number }[] = [];
      for (let i = 0; i < 3; i++) runs.push(await timeCall(f, options));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const median = (k: 'first' | 'total') => runs.map((r) => r[k]).sort((a, b) => a - b)[1]!;
      console.log(`${name} (${(body.length / 1024 / 1024).toFixed(1)} MB), ${way}: first byte ${ms(median('first'))}, whole stream ${ms(median('total'))}, peak RSS ${(peak / 1024 / 1024).toFixed(0)} MiB`);
    }
    await reporter.close();
    console.log(`  reporter stats: ${JSON.stringify(reporter.stats())}`);
  }
  clearInterval(sampler);
  server.close();
}

// 5. A Burnrate that accepts and never answers: a script that makes one call and never closes the reporter.
for (const closeTimeoutMs of [undefined, '1000']) {
  const sockets = new Set<Socket>();
  const hung = createServer(() => undefined);
  hung.on('connection', (c) => sockets.add(c));
  hung.listen(0, '127.0.0.1');
  await once(hung, 'listening');
  const script = fileURLToPath(new URL('../reporter/test/fixtures/one-call.ts', import.meta.url));
  const env = { ...process.env, BURNRATE_URL: `http://127.0.0.1:${(hung.address() as AddressInfo).port}/api`, PROVIDER_URL: standin.url, PROVIDER_KEY: ANTHROPIC_KEY };
  // The script's own start (node + tsx + the reporter), measured against a Burnrate that answers, is taken out.
  const run = async (extra: Record<string, string>) => {
    const start = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...env, ...extra }, stdio: 'ignore' });
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    clearTimeout(killer);
    return { seconds: (performance.now() - start) / 1000, code, signal };
  };
  const baseline = await run({ BURNRATE_URL: sink.url });
  const held = await run(closeTimeoutMs ? { CLOSE_TIMEOUT_MS: closeTimeoutMs } : {});
  const bound = closeTimeoutMs ? Number(closeTimeoutMs) / 1000 : 10;
  console.log(
    `hung Burnrate (closeTimeoutMs ${closeTimeoutMs ?? 'default 10000'}): a one-call script without close() exited ${held.signal ? `only when killed (${held.signal})` : `by itself (code ${held.code})`} after ${held.seconds.toFixed(1)} s; against a Burnrate that answers ${baseline.seconds.toFixed(1)} s; held by the reporter ${(held.seconds - baseline.seconds).toFixed(1)} s (bound ${bound} s)`,
  );
  for (const c of sockets) c.destroy();
  hung.close();
}

sink.close();
await standin.close();
process.exit(0);
