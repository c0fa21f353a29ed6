/**
 * @burnrate/reporter: a `fetch` to hand to the official OpenAI and Anthropic SDKs (or to call directly) that reports
 * each provider call's usage to Burnrate — the key's SHA-256 (never the key), the provider's response id, the model
 * and the exact token counts — without changing or delaying what the caller receives.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Sender, type IngestEvent, type Logger, type Rejection, type Stats } from './sender.js';
import { Guard, READ_TIMEOUT_MS, refusal } from './guard.js';
import { UsageReader, UsageStripper, watchStream } from './sse.js';
import { withIncludeUsage } from './body.js';
import { fromJsonBody, recognise, StreamUsage, type Endpoint, type Provider, type Usage } from './usage.js';

export type { Logger, Rejection, Stats } from './sender.js';
export type { Usage } from './usage.js';

export interface ReporterOptions {
  /** A Burnrate sending key (the `x-api-key` of `POST /ingest`). */
  ingestKey: string;
  /** Burnrate's API base, ending in `/api` (e.g. `http://localhost:3000/api`). */
  baseUrl: string;
  /**
   * Called once per rejection code (e.g. `provider_connected`) with the first event refused for it. Without it, the
   * reporter warns once per code through `logger` (the reason and what to do).
   */
  onRejected?: (rejection: Rejection) => void;
  /** Where the warnings go (default: `console`): one about a failure to report, one per rejection code without `onRejected`. */
  logger?: Logger;
  /** The fetch the provider calls and the reports go through (default: the platform's `fetch`). */
  fetch?: typeof fetch;
  /** Most events kept in memory while Burnrate can't be reached (default 10,000); the oldest are dropped beyond it. */
  maxQueue?: number;
  /** Events per report (default and maximum 1,000). */
  batchSize?: number;
  /** How long an event waits for its batch (default 1,000 ms). */
  flushIntervalMs?: number;
  /**
   * `block` (default): a call made with a key whose stop budget is past its limit is answered here with a 429 (the
   * provider's error shape, code `budget_exceeded`, `x-should-retry: false`), never sent. `observe`: sent anyway.
   */
  enforce?: 'block' | 'observe';
  /** The clock the block list's age is measured with (ms; default `Date.now`). For tests. */
  now?: () => number;
  /**
   * The most time (ms; default and maximum 10,000) `close()` takes, and the bound of what a finished script is held
   * by the reporter when Burnrate never answers: a read of the block list under way gets a quarter of it, the flush on
   * exit 65% (a tenth is left for the script's own start).
   */
  closeTimeoutMs?: number;
  /**
   * The base of the wait between two tries of a report (ms; default 100): the n-th retry waits a random time up to
   * min(8 s, retryDelayMs × 2^n). Six tries in all.
   */
  retryDelayMs?: number;
}

export interface Reporter {
  /** A drop-in `fetch`: `new OpenAI({ fetch: reporter.fetch })`, `new Anthropic({ fetch: reporter.fetch })`. */
  fetch: typeof fetch;
  /** Sends what is queued; resolves when it has been delivered or given up. */
  flush(): Promise<void>;
  /** Flushes and stops, within 10 seconds even when Burnrate can't be reached (the rest is dropped and counted). */
  close(): Promise<void>;
  stats(): Stats;
  /** Reads Burnrate's block list now (it is read at start and every ≤ 30 s anyway). */
  refreshBlocks(): Promise<void>;
}

const CLOSE_TIMEOUT_MS = 10_000;

export function createReporter(options: ReporterOptions): Reporter {
  if (!options.ingestKey) throw new TypeError('createReporter: ingestKey is required (a Burnrate sending key).');
  if (!options.baseUrl) throw new TypeError('createReporter: baseUrl is required (Burnrate\'s API base, ending in /api).');
  const platformFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const closeTimeoutMs = Math.max(0, Math.min(options.closeTimeoutMs ?? CLOSE_TIMEOUT_MS, CLOSE_TIMEOUT_MS));
  // What can hold a finished script: a read of the block list under way (it ends before `beforeExit` can fire), then
  // the flush on exit. Their bounds add up to 90% of closeTimeoutMs: the rest is left for the script's own start, so a
  // one-call script against a Burnrate that never answers is over within closeTimeoutMs, start included.
  const readTimeoutMs = Math.min(READ_TIMEOUT_MS, closeTimeoutMs / 4);
  const exitFlushMs = closeTimeoutMs * 0.9 - readTimeoutMs;
  const sender = new Sender({
    ingestKey: options.ingestKey,
    baseUrl: options.baseUrl,
    onRejected: options.onRejected,
    logger: options.logger,
    batchSize: Math.max(1, Math.min(options.batchSize ?? 1000, 1000)),
    flushIntervalMs: options.flushIntervalMs ?? 1000,
    maxQueue: Math.max(1, options.maxQueue ?? 10_000),
    maxAttempts: 6,
    retryDelayMs: Math.max(0, options.retryDelayMs ?? 100),
    fetch: platformFetch,
    // The first read of the block list is not waited for by calls, so a batch's timer may fire while it is under way:
    // its send waits for the read to end and a whole interval more (a finished script is then held by the read alone,
    // then flushes on exit).
    holdTimedSends: () => guard.firstReadUnderWay(),
  });

  const guard = new Guard({
    ingestKey: options.ingestKey,
    baseUrl: options.baseUrl,
    fetch: platformFetch,
    logger: options.logger ?? console,
    enforce: options.enforce ?? 'block',
    now: options.now ?? Date.now,
    readTimeoutMs,
    onFirstRead: () => sender.resumeTimedSends(),
  });

  // Flush on process exit: `beforeExit` fires when nothing else is left to do (the batch timer never holds the process).
  // Bounded: with the guard's read that may have held the script just before, a Burnrate that never answers holds a
  // finished script for at most closeTimeoutMs.
  const onBeforeExit = () => void sender.flushWithin(exitFlushMs);
  process.on('beforeExit', onBeforeExit);

  const reportingFetch = async (original: string | URL | Request, originalInit?: RequestInit): Promise<Response> => {
    // The application's marks (`x-burnrate-customer`, `x-burnrate-feature`) and every other `x-burnrate-*` header are
    // taken off the request first: they never leave for the provider.
    const { input, init, marks } = takeMarks(original, originalInit);
    // The guard first, for EVERY call that carries a key, whatever its path or method: a blocked key is refused here
    // (images, batches, realtime sessions, a path in another case, with `//` or `%2F` alike). It never waits for the
    // block list: until the first list is read, calls go through.
    const credential = credentialOf(input, init);
    if (credential) {
      const block = guard.check(credential.keyHash);
      if (block) return refusal(credential.provider, block);
    }
    // Usage is read where the provider reports it (chat, responses, embeddings, messages); everything else passes on.
    const call = inspect(input, init, marks);
    if (!call) return platformFetch(input, init);
    const response = await platformFetch(input, call.init);
    try {
      return observe(call, response, (event) => sender.enqueue(event), () => sender.noteOversized(), options.fetch === undefined);
    } catch {
      return response;
    }
  };

  return {
    fetch: reportingFetch as typeof fetch,
    flush: () => sender.flush(),
    close: async () => {
      process.off('beforeExit', onBeforeExit);
      guard.stop();
      await sender.close(closeTimeoutMs);
    },
    stats: () => sender.stats(),
    refreshBlocks: () => guard.refresh(),
  };
}

interface ProviderCall {
  provider: Provider;
  endpoint: Endpoint;
  keyHash: string;
  keyHint: string;
  /** The model asked for, when the response doesn't name one. */
  requestedModel: string | null;
  /** The init the request is really sent with (with `stream_options.include_usage` when the reporter added it). */
  init: RequestInit | undefined;
  addedUsageOption: boolean;
  marks: Marks;
}

/** Who and what a call was for, as the application marked it (`x-burnrate-customer`, `x-burnrate-feature`). */
interface Marks {
  customerId?: string;
  feature?: string;
}

const MARK_PREFIX = 'x-burnrate-';
// Printable: no control characters (what POST /ingest accepts); a mark that isn't is left out, the call still counted.
const printable = (value: string, max: number) => value.length >= 1 && [...value].length <= max && !/\p{Cc}/u.test(value);

/**
 * Removes every `x-burnrate-*` header from the request (in `init.headers` of any form, or on a `Request`), and reads
 * the marks among them. A request without one is passed on exactly as given.
 */
function takeMarks(input: string | URL | Request, init: RequestInit | undefined): { input: string | URL | Request; init: RequestInit | undefined; marks: Marks } {
  try {
    const marks: Marks = {};
    const read = (headers: Headers) => {
      const customer = headers.get(`${MARK_PREFIX}customer`)?.trim();
      const feature = headers.get(`${MARK_PREFIX}feature`)?.trim();
      if (customer !== undefined && printable(customer, 128)) marks.customerId = customer;
      if (feature !== undefined && printable(feature, 64)) marks.feature = feature;
    };
    const strip = (headers: Headers): boolean => {
      const names = [...headers.keys()].filter((name) => name.toLowerCase().startsWith(MARK_PREFIX));
      for (const name of names) headers.delete(name);
      return names.length > 0;
    };
    let outInput = input;
    let outInit = init;
    if (init?.headers !== undefined) {
      const headers = new Headers(init.headers);
      read(headers);
      if (strip(headers)) outInit = { ...init, headers };
    }
    if (typeof Request !== 'undefined' && input instanceof Request) {
      const headers = new Headers(input.headers);
      if (init?.headers === undefined) read(headers);
      if (strip(headers)) outInput = new Request(input, { headers });
    }
    return { input: outInput, init: outInit, marks };
  } catch {
    return { input, init, marks: {} };
  }
}

/** A provider call with a key to attribute it to, or null (anything else passes straight through). */
function inspect(input: string | URL | Request, init: RequestInit | undefined, marks: Marks = {}): ProviderCall | null {
  try {
    const request = typeof Request !== 'undefined' && input instanceof Request ? input : null;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : (request?.url ?? String(input));
    const kind = recognise(init?.method ?? request?.method ?? 'GET', url);
    if (!kind) return null;
    const headers = new Headers(init?.headers ?? request?.headers);
    const key = keyOf(headers);
    if (!key) return null;
    const body = typeof init?.body === 'string' ? parseJson(init.body) : null;
    const requestedModel = typeof body?.model === 'string' ? body.model : null;
    let sendInit = init;
    let addedUsageOption = false;
    const withUsage = kind.endpoint === 'chat' && body && body.stream === true && usageOptionUnset(body.stream_options) ? withIncludeUsage(init!.body as string) : null;
    if (withUsage !== null) {
      // The body changes by the inserted member only; a content-length the caller set no longer holds: fetch sets it.
      const sendHeaders = new Headers(init!.headers);
      sendHeaders.delete('content-length');
      sendInit = { ...init, headers: sendHeaders, body: withUsage };
      addedUsageOption = true;
    }
    return {
      ...kind,
      keyHash: createHash('sha256').update(key).digest('hex'),
      keyHint: key.slice(-4),
      requestedModel,
      init: sendInit,
      addedUsageOption,
      marks,
    };
  } catch {
    return null;
  }
}

/**
 * The key a call carries and whose shape a refusal takes: Anthropic's when the call is Anthropic's (an
 * `anthropic-version` header, which its SDK always sends, or a key in `x-api-key`), else OpenAI's. Null without a key.
 */
function credentialOf(input: string | URL | Request, init: RequestInit | undefined): { keyHash: string; provider: Provider } | null {
  try {
    const request = typeof Request !== 'undefined' && input instanceof Request ? input : null;
    const headers = new Headers(init?.headers ?? request?.headers);
    const key = keyOf(headers);
    if (!key) return null;
    const anthropic = headers.has('anthropic-version') || (headers.has('x-api-key') && !headers.has('authorization'));
    return { keyHash: createHash('sha256').update(key).digest('hex'), provider: anthropic ? 'anthropic' : 'openai' };
  } catch {
    return null;
  }
}

function keyOf(headers: Headers): string | null {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.get('authorization') ?? '');
  const key = (bearer?.[1] ?? headers.get('x-api-key') ?? '').trim();
  return key || null;
}

function usageOptionUnset(streamOptions: unknown): boolean {
  return !(typeof streamOptions === 'object' && streamOptions !== null && 'include_usage' in streamOptions);
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Reads the usage off the response and returns what the caller gets: a JSON response itself (its usage read off a
 * copy); an event stream as a response of the same status, headers and url whose body is read as it passes to the
 * caller, the same bytes, filtered back to what the caller asked for when the reporter added the usage option.
 * `ownChunks`: the response came from the platform's fetch, so its chunks are the reporter's alone.
 */
function observe(call: ProviderCall, response: Response, report: (event: IngestEvent) => void, oversized: () => void, ownChunks: boolean): Response {
  if (!response.ok || !response.body) return response;
  const at = new Date().toISOString();
  const headerId = response.headers.get('x-request-id') ?? response.headers.get('request-id');
  const emit = (id: string | null, model: string | null, usage: Usage | null) => {
    if (!usage) return;
    report(toEvent(call, id ?? headerId ?? randomUUID(), model ?? call.requestedModel ?? 'unknown', usage, at));
  };

  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    void response
      .clone()
      .json()
      .then((body) => {
        const read = fromJsonBody(call.provider, body);
        emit(read.id, read.model, read.usage);
      })
      .catch(() => undefined);
    return response;
  }

  // The caller's stream, read as it passes (one stage: see watchStream), filtered back to what the caller asked for
  // when the reporter added the usage option.
  const stream = new StreamUsage(call.provider);
  const add = (data: unknown) => stream.add(data);
  const watcher = call.addedUsageOption ? new UsageStripper(add, { ownChunks }) : new UsageReader(add);
  const body = watchStream(response.body, watcher, () => (watcher.oversized ? oversized() : emit(stream.id, stream.model, stream.usage())));
  const headers = new Headers(response.headers);
  if (call.addedUsageOption) headers.delete('content-length');
  const watched = new Response(body, { status: response.status, statusText: response.statusText, headers });
  Object.defineProperty(watched, 'url', { value: response.url });
  Object.defineProperty(watched, 'redirected', { value: response.redirected });
  return watched;
}

function toEvent(call: ProviderCall, requestId: string, model: string, usage: Usage, timestamp: string): IngestEvent {
  const event: IngestEvent = {
    requestId: requestId.slice(0, 128),
    keyHash: call.keyHash,
    keyHint: call.keyHint,
    provider: call.provider,
    model: model.slice(0, 128),
    timestamp,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
  };
  if (usage.cachedInputTokens > 0) event.cachedInputTokens = usage.cachedInputTokens;
  if (usage.cacheWriteInputTokens > 0) event.cacheWriteInputTokens = usage.cacheWriteInputTokens;
  if (usage.cacheWrite1hInputTokens > 0) event.cacheWrite1hInputTokens = usage.cacheWrite1hInputTokens;
  if (usage.serviceTier !== 'standard') event.serviceTier = usage.serviceTier;
  if (usage.webSearchRequests > 0) event.webSearchRequests = usage.webSearchRequests;
  if (usage.webFetchRequests > 0) event.webFetchRequests = usage.webFetchRequests;
  if (call.marks.customerId !== undefined) event.customerId = call.marks.customerId;
  if (call.marks.feature !== undefined) event.feature = call.marks.feature;
  return event;
}
