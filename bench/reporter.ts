/**
 * `npm run bench:reporter`: what the reporter costs the application that uses it.
 * - Added latency per call: the time the reporter's `fetch` spends before handing the request on and after the
 *   response comes back (the stand-in's own time excluded), p50 / p99 over JSON and streamed calls.
 * - Events shipped per second from one process: calls through the reporter until Burnrate (a local receiver that
 *   answers as `POST /ingest` does) has every event.
 * - Memory at the queue bound: heap held by 10,000 queued events while Burnrate can't be reached.
 * - Streams, from a provider in a process of its own (bench/sse-provider.ts): 200,000 events in 64 KiB writes, 20,000
 *   events one write each, one 32 MB event without a blank line. The caller's time to first byte and to the end and
 *   its CPU, through plain fetch and through the reporter (both ways: read as it passes when the caller asked for the
 *   usage chunk, filtered when the reporter adds `stream_options`), with the process's peak memory.
 * - A Burnrate that accepts and never answers: how long a script that makes one call and never closes the reporter
 *   takes to exit (the reporter holds it at most 10 s in all: the block list's read, then the exit flush), and the same
 *   with `closeTimeoutMs: 1000` (the bound the reporter's test uses).
 * `BENCH_ONLY=streams` runs the streams alone; `BENCH_STREAM_RUNS` (default 5) timed calls per way and stream.
 * Figures only; nothing here is asserted.
 */
import { fork, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
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

/** `streams`: only the streams (section 4). */
const only = process.env.BENCH_ONLY;

// 1. Added latency: the reporter's own time around the provider call.
for (const stream of only ? [] : [false, true]) {
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
if (!only) {
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
if (!only) {
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

// 4. Streams: the caller's time and CPU through the reporter against plain fetch, the provider in a process of its own.
if (!only || only === 'streams') {
  const RUNS = Number(process.env.BENCH_STREAM_RUNS ?? 5);
  const provider = fork(fileURLToPath(new URL('./sse-provider.ts', import.meta.url)), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const [{ port, sizes }] = (await once(provider, 'message')) as [{ port: number; sizes: { events: number[]; paced: number[]; huge: number } }];
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const timeCall = async (f: typeof fetch, stream: string, options: object) => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const res = await f(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json', 'x-bench-stream': stream },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [], ...options }),
    });
    const reader = res.body!.getReader();
    let first = 0;
    let reads = 0;
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      if (!first) first = performance.now() - start;
      reads += 1;
    }
    const used = process.cpuUsage(cpu);
    return { first, total: performance.now() - start, cpu: (used.user + used.system) / 1000, reads };
  };
  const gc = (globalThis as { gc?: () => void }).gc;
  const asked = { stream_options: { include_usage: true } };
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  const scenarios: [string, string][] = [
    ['events', `200,000 events in 64 KiB writes (${mb(sizes.events[0]!)}, ${mb(sizes.events[1]!)} with "usage":null)`],
    ['paced', `20,000 events, one write each on its own turn (${mb(sizes.paced[0]!)}, ${mb(sizes.paced[1]!)})`],
    ['huge', `one 32 MB event without a blank line (${mb(sizes.huge)})`],
  ];
  for (const [stream, title] of scenarios) {
    const reporter = createReporter({ ingestKey: 'brk_bench', baseUrl: sink.url, logger: { warn: () => undefined } });
    // Each reporter way against the plain fetch of the same request: the copy reader's caller asked for the usage
    // chunk itself, the filter's caller did not (and gets the stream without it).
    const ways: [string, typeof fetch, object, string][] = [
      ['plain fetch', fetch, {}, ''],
      ['plain fetch, include_usage', fetch, asked, ''],
      ['reporter, caller asked include_usage (read as it passes)', reporter.fetch, asked, 'plain fetch, include_usage'],
      ['reporter, adding stream_options (filtered)', reporter.fetch, {}, 'plain fetch'],
    ];
    const results = new Map<string, { first: number; total: number; cpu: number; reads: number }[]>();
    for (const [way, f, options] of ways) {
      await timeCall(f, stream, options); // warm-up
      results.set(way, []);
    }
    gc?.();
    peak = process.memoryUsage().rss;
    // Interleaved, so the machine's load falls on every way alike.
    for (let i = 0; i < RUNS; i++) for (const [way, f, options] of ways) results.get(way)!.push(await timeCall(f, stream, options));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const median = (way: string, k: 'first' | 'total' | 'cpu' | 'reads') => results.get(way)!.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
    console.log(`${title}, medians of ${RUNS}:`);
    for (const [way, , , against] of ways) {
      const ratio = against ? ` = ${(median(way, 'total') / median(against, 'total')).toFixed(2)}x time, ${(median(way, 'cpu') / median(against, 'cpu')).toFixed(2)}x CPU of ${against}` : '';
      console.log(`  ${way}: first byte ${ms(median(way, 'first'))}, whole stream ${ms(median(way, 'total'))}, CPU ${ms(median(way, 'cpu'))}, ${median(way, 'reads')} reads${ratio}`);
    }
    console.log(`  peak RSS ${(peak / 1024 / 1024).toFixed(0)} MiB`);
    await reporter.close();
    console.log(`  reporter stats: ${JSON.stringify(reporter.stats())}`);
  }
  // The caller as an application is: the official openai SDK reading the 200,000-event stream chunk by chunk
  // (`for await`), through the reporter's fetch (filtered: the caller did not ask for usage) against the SDK alone.
  {
    const reporter = createReporter({ ingestKey: 'brk_bench', baseUrl: sink.url, logger: { warn: () => undefined } });
    const sdk = (f?: typeof fetch) => new OpenAI({ apiKey: OPENAI_KEY, baseURL: `http://127.0.0.1:${port}/v1`, defaultHeaders: { 'x-bench-stream': 'events' }, ...(f ? { fetch: f } : {}) });
    const ways: [string, OpenAI][] = [
      ['openai SDK', sdk()],
      ['openai SDK through the reporter (filtered)', sdk(reporter.fetch)],
    ];
    const timeSdk = async (client: OpenAI) => {
      const start = performance.now();
      const cpu = process.cpuUsage();
      let chunks = 0;
      for await (const c of await client.chat.completions.create({ model: 'gpt-4o', messages: [], stream: true })) chunks += c.choices.length;
      const used = process.cpuUsage(cpu);
      return { total: performance.now() - start, cpu: (used.user + used.system) / 1000, chunks };
    };
    const results = new Map<string, { total: number; cpu: number; chunks: number }[]>(ways.map(([w]) => [w, []]));
    for (const [, client] of ways) await timeSdk(client); // warm-up
    for (let i = 0; i < RUNS; i++) for (const [way, client] of ways) results.get(way)!.push(await timeSdk(client));
    const median = (way: string, k: 'total' | 'cpu' | 'chunks') => results.get(way)!.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
    console.log(`200,000 events read by the official openai SDK (for await), medians of ${RUNS}:`);
    for (const [way] of ways) {
      const ratio = way === ways[0]![0] ? '' : ` = ${(median(way, 'total') / median(ways[0]![0], 'total')).toFixed(3)}x time, ${(median(way, 'cpu') / median(ways[0]![0], 'cpu')).toFixed(3)}x CPU of ${ways[0]![0]}`;
      console.log(`  ${way}: whole stream ${ms(median(way, 'total'))}, CPU ${ms(median(way, 'cpu'))}, ${median(way, 'chunks')} chunks${ratio}`);
    }
    await reporter.close();
  }
  clearInterval(sampler);
  provider.kill();
}

// 5. A Burnrate that accepts and never answers: a script that makes one call and never closes the reporter.
for (const closeTimeoutMs of only ? [] : [undefined, '1000']) {
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
