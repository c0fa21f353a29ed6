/**
 * The events' way to Burnrate: a bounded in-memory queue, sent in batches of up to 1,000 events (or after 1 second)
 * to `POST <baseUrl>/ingest`, retried with full-jitter backoff on 429, 5xx and network errors. Nothing here ever
 * throws to the application: a failure is logged once, counted, and the events are dropped.
 */
import { deadline } from './deadline.js';

export interface IngestEvent {
  requestId: string;
  keyHash: string;
  keyHint: string;
  provider: string;
  model: string;
  timestamp: string;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
  cacheWrite1hInputTokens?: number;
  /** The tier the provider ran the call in, when not standard. */
  serviceTier?: 'batch' | 'flex' | 'priority';
  /** Anthropic server tool use. */
  webSearchRequests?: number;
  webFetchRequests?: number;
  /** The application's own customer and feature of the call (`x-burnrate-customer`, `x-burnrate-feature`). */
  customerId?: string;
  feature?: string;
}

export interface Stats {
  /** Events Burnrate took (accepted or recognised as already counted). */
  sent: number;
  /** Events Burnrate refused (see `onRejected`). */
  rejected: number;
  /** Events dropped: the queue was full, or a batch could not be delivered after its retries or by `close()`. */
  dropped: number;
  /** Batches that could not be delivered. */
  failedBatches: number;
  /**
   * Streamed responses not read to their end because one event outgrew the parser's bound (reporter/src/sse.ts):
   * their bytes went to the caller untouched, their usage is not reported. Present only once there was one, so
   * `stats()` keeps its four fields otherwise.
   */
  oversizedStreams?: number;
}

export interface Rejection {
  code: string;
  message: string;
  event: IngestEvent;
}

export interface Logger {
  warn(message: string): void;
}

export interface SenderOptions {
  ingestKey: string;
  baseUrl: string;
  onRejected?: (rejection: Rejection) => void;
  logger?: Logger;
  /** Events per batch (Burnrate takes at most 1,000). */
  batchSize: number;
  /** How long an event waits for its batch to fill. */
  flushIntervalMs: number;
  /** Most events kept in memory; beyond it the oldest are dropped. */
  maxQueue: number;
  /** Attempts per batch before it is dropped. */
  maxAttempts: number;
  /** The base of the retry backoff (ms): the n-th retry waits a random time up to min(8 s, retryDelayMs × 2^n). @default 100 */
  retryDelayMs?: number;
  /** The network call (the platform's fetch, never the reporter's own). */
  fetch: typeof fetch;
  /** How long one `POST /ingest` may take before it is abandoned (and retried like a network error). @default 10000 */
  requestTimeoutMs?: number;
  /**
   * While true, a partial batch's timer starts no send and is not set again until `resumeTimedSends()` (the first
   * read of the block list is under way: a script that has finished is then held by that read only, and flushes on
   * exit within its bound).
   */
  holdTimedSends?: () => boolean;
}

interface IngestAnswer {
  accepted?: number;
  duplicates?: number;
  rejected?: Array<{ index: number; code: string; message: string }>;
}

const RETRYABLE = (status: number) => status === 429 || status >= 500;
/** The default bound of one `POST /ingest` (a Burnrate that accepts and never answers costs at most this). */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Batches sent at once; the rest wait in the bounded queue. */
const MAX_IN_FLIGHT = 2;

export class Sender {
  private queue: IngestEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** A partial batch's timer fired while timed sends were held: its wait starts again at `resumeTimedSends()`. */
  private timedSendHeld = false;
  private inFlight = new Set<Promise<void>>();
  private readonly counts: Stats = { sent: 0, rejected: 0, dropped: 0, failedBatches: 0 };
  private readonly rejectedCodes = new Set<string>();
  private warned = false;
  private closed = false;
  /**
   * Aborts the sleeps and requests of batches still trying when `close()` or a bounded flush runs out of time (a new
   * one replaces it after a bounded flush; each batch keeps the signal it started with).
   */
  private stop = new AbortController();
  /** Wake-ups of the backoff sleeps under way (called when `close()` runs out of time). */
  private readonly sleepers = new Set<() => void>();
  private readonly url: string;

  constructor(private readonly options: SenderOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/ingest`;
  }

  stats(): Stats {
    return { ...this.counts };
  }

  enqueue(event: IngestEvent): void {
    if (this.closed) {
      this.counts.dropped += 1;
      return;
    }
    this.queue.push(event);
    if (this.queue.length > this.options.maxQueue) {
      const over = this.queue.length - this.options.maxQueue;
      this.queue.splice(0, over);
      this.counts.dropped += over;
      this.warnOnce(`Burnrate reporter: queue full (${this.options.maxQueue} events); dropping the oldest.`);
    }
    this.pump(false);
  }

  /** Sends everything queued now and resolves when it has been delivered or given up. */
  async flush(): Promise<void> {
    for (;;) {
      this.pump(true);
      if (this.inFlight.size === 0) return;
      await Promise.race([...this.inFlight]);
    }
  }

  /** Flushes, then stops; resolves within `timeoutMs` whatever happens. What could not be sent is dropped and counted. */
  async close(timeoutMs: number): Promise<void> {
    if (this.closed) return this.flush();
    this.closed = true;
    await this.flushWithin(timeoutMs);
  }

  /**
   * Timed sends may start again (the first read of the block list is over). A partial batch whose timer fired
   * meanwhile waits a whole interval from now, never less: a timer left running through the read could fire in the
   * very turn of the event loop the read ended in, and start a send that holds a finished script for its own bound
   * (10 s, six tries) instead of letting it reach the bounded flush on exit.
   */
  resumeTimedSends(): void {
    if (!this.timedSendHeld) return;
    this.timedSendHeld = false;
    this.pump(false);
  }

  /** One more event was a streamed response too large to read (see Stats.oversizedStreams). */
  noteOversized(): void {
    this.counts.oversizedStreams = (this.counts.oversizedStreams ?? 0) + 1;
  }

  /**
   * Flushes, resolving within `timeoutMs` whatever happens (the flush on process exit): batches still trying then are
   * abandoned and, with what is still queued, dropped and counted. The reporter stays usable.
   */
  async flushWithin(timeoutMs: number): Promise<void> {
    const done = this.flush();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
    });
    const outcome = await Promise.race([done.then(() => 'done' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.stop.abort();
      for (const wake of this.sleepers) wake();
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      this.counts.dropped += this.queue.length;
      this.queue = [];
      await Promise.allSettled([...this.inFlight]);
      if (!this.closed) this.stop = new AbortController();
    }
  }

  /**
   * Starts batches while fewer than MAX_IN_FLIGHT are under way: full ones always, a partial one when `force`
   * (its wait is over, or a flush). Events beyond that wait in the bounded queue, so memory stays bounded while
   * Burnrate is down and batches are retrying. A partial batch left over waits for the timer.
   */
  private pump(force: boolean): void {
    while (this.queue.length > 0 && this.inFlight.size < MAX_IN_FLIGHT && (force || this.queue.length >= this.options.batchSize)) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      const batch = this.queue.splice(0, this.options.batchSize);
      const sending: Promise<void> = this.send(batch).finally(() => {
        this.inFlight.delete(sending);
        this.pump(false);
      });
      this.inFlight.add(sending);
    }
    if (this.queue.length > 0 && !this.timer && !this.timedSendHeld && !this.stop.signal.aborted) {
      this.timer = setTimeout(() => {
        this.timer = null;
        if (this.options.holdTimedSends?.()) this.timedSendHeld = true;
        else this.pump(true);
      }, this.options.flushIntervalMs);
      this.timer.unref?.();
    }
  }

  private async send(batch: IngestEvent[]): Promise<void> {
    const body = JSON.stringify({ events: batch });
    const stop = this.stop.signal;
    const timeoutMs = this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    let lastProblem = '';
    for (let attempt = 0; attempt < this.options.maxAttempts && !stop.aborted; attempt++) {
      if (attempt > 0) await this.backoff(attempt);
      if (stop.aborted) break;
      // Every request is bounded: a Burnrate that accepts and never answers (or stalls the answer) costs at most this.
      // A timer of its own, not AbortSignal.any over AbortSignal.timeout: on Node 20 the collector can drop the
      // combined signal's timeout before it fires, leaving the request open for good.
      const bound = deadline(timeoutMs, stop);
      try {
        const res = await this.options.fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': this.options.ingestKey },
          body,
          signal: bound.signal,
        });
        if (res.ok) {
          this.settle(batch, (await res.json().catch(() => ({}))) as IngestAnswer);
          return;
        }
        await res.body?.cancel().catch(() => undefined);
        lastProblem = `HTTP ${res.status}`;
        if (!RETRYABLE(res.status)) break;
      } catch (error) {
        lastProblem = error instanceof Error ? error.message : String(error);
      } finally {
        bound.clear();
      }
    }
    this.counts.failedBatches += 1;
    this.counts.dropped += batch.length;
    this.warnOnce(`Burnrate reporter: could not report ${batch.length} event(s) to ${this.url} (${lastProblem}); they are dropped and counted in stats().dropped.`);
  }

  private settle(batch: IngestEvent[], answer: IngestAnswer): void {
    const rejected = Array.isArray(answer.rejected) ? answer.rejected : [];
    this.counts.sent += batch.length - rejected.length;
    this.counts.rejected += rejected.length;
    for (const r of rejected) {
      if (this.rejectedCodes.has(r.code)) continue;
      this.rejectedCodes.add(r.code);
      const event = batch[r.index];
      if (!this.options.onRejected) {
        // Nobody handles refusals: say so once per reason, or events would vanish without a word.
        this.warn(
          `Burnrate reporter: Burnrate refused an event (${r.code}): ${r.message} Later refusals for this reason are only counted in stats().rejected; pass onRejected to handle them.`,
        );
        continue;
      }
      if (!event) continue;
      try {
        this.options.onRejected({ code: r.code, message: r.message, event });
      } catch {
        // The application's callback failed: that is not the reporter's to raise.
      }
    }
  }

  /** Full jitter: a random wait between 0 and min(8 s, retryDelayMs × 2^attempt); cut short by `close()`. */
  private backoff(attempt: number): Promise<void> {
    const ms = Math.random() * Math.min(8000, (this.options.retryDelayMs ?? 100) * 2 ** attempt);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.warn(message);
  }

  private warn(message: string): void {
    try {
      (this.options.logger ?? console).warn(message);
    } catch {
      // A logger that throws is not the application's problem either.
    }
  }
}
