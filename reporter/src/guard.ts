/**
 * The guard: Burnrate's list of keys whose stop budget is past its limit (`GET <baseUrl>/ingest/blocks`), read at
 * start and every `refreshAfterSeconds` (≤ 30), so a call made with a blocked key — any call, whatever its path — is
 * answered here, without calling the provider: status 429 in the provider's own error shape, code `budget_exceeded`,
 * the budget's name, and `x-should-retry: false` so the official SDKs raise at once instead of retrying. The guard
 * never delays a call: until the first list has been read, calls go through; the list applies from the moment it is
 * read. When Burnrate can't be reached the last list is kept for 10 minutes, then calls go through again: the guard
 * never fails closed on its own.
 */
import { deadline } from './deadline.js';
import type { Logger } from './sender.js';
import type { Provider } from './usage.js';

export interface Block {
  keyHash: string;
  /** The budget holding the block (null when an anomaly rule holds it). */
  budgetId: string | null;
  /** The holder's name: the budget's, or the spend-anomaly rule's. */
  budgetName: string | null;
  /** Who holds the block: a stop budget, or a spend-anomaly rule (`anomaly`: the key suddenly spent far more than usual). */
  holder?: { kind: 'budget' | 'anomaly'; id: string };
  since: string;
}

export interface GuardOptions {
  ingestKey: string;
  baseUrl: string;
  fetch: typeof fetch;
  logger: Logger;
  /** `block` (default): refuse blocked keys' calls; `observe`: let them through, warn once per key. */
  enforce: 'block' | 'observe';
  /** The clock (ms), injectable for tests. */
  now: () => number;
  /** How long one read of the list may take (ms). @default READ_TIMEOUT_MS */
  readTimeoutMs?: number;
  /** Called once, when the first read of the list is over (read, refused or given up). */
  onFirstRead?: () => void;
}

/** How long the last list is trusted while Burnrate can't be reached. */
export const KEEP_LIST_MS = 10 * 60_000;
const MAX_REFRESH_S = 30;
/** The default bound of one read of the list (a Burnrate that never answers holds a finished script at most this). */
export const READ_TIMEOUT_MS = 2500;

export class Guard {
  private blocked = new Map<string, Block>();
  private readAt: number | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private firstSettled = false;
  private warned = new Set<string>();

  constructor(private readonly options: GuardOptions) {
    void this.refresh().finally(() => {
      this.firstSettled = true;
      this.options.onFirstRead?.();
    });
  }

  /** Reads the list now; schedules the next read. Never throws. */
  async refresh(): Promise<void> {
    let next = MAX_REFRESH_S;
    const bound = deadline(Math.min(this.options.readTimeoutMs ?? READ_TIMEOUT_MS, READ_TIMEOUT_MS));
    try {
      const res = await this.options.fetch(`${this.options.baseUrl.replace(/\/$/, '')}/ingest/blocks`, {
        headers: { 'x-api-key': this.options.ingestKey, accept: 'application/json' },
        // A Burnrate that never answers is given up after READ_TIMEOUT_MS, so no read of the list is left hanging to
        // hold a finished script open. A timer of the reporter's own (see deadline.ts), cleared once the list and its
        // body are read.
        signal: bound.signal,
      });
      if (res.ok) {
        const body = (await res.json()) as { blocked?: Block[]; refreshAfterSeconds?: number };
        this.blocked = new Map((body.blocked ?? []).map((b) => [b.keyHash, b]));
        this.readAt = this.options.now();
        if (typeof body.refreshAfterSeconds === 'number' && body.refreshAfterSeconds > 0) next = Math.min(MAX_REFRESH_S, body.refreshAfterSeconds);
      } else await res.body?.cancel();
    } catch {
      // Burnrate unreachable: the last list holds (for KEEP_LIST_MS).
    } finally {
      bound.clear();
    }
    if (!this.stopped) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.refresh(), next * 1000);
      this.timer.unref?.();
    }
  }

  /** Whether the first read of the list is still under way (bounded by its timeout). Calls never wait for it. */
  firstReadUnderWay(): boolean {
    return !this.firstSettled && !this.stopped;
  }

  /** The block on this key, if any and if the list is fresh enough to trust. Never waits (no list yet: none). */
  check(keyHash: string): Block | undefined {
    if (this.readAt === null || this.options.now() - this.readAt > KEEP_LIST_MS) return undefined;
    const block = this.blocked.get(keyHash);
    if (block && this.options.enforce === 'observe') {
      if (!this.warned.has(keyHash)) {
        this.warned.add(keyHash);
        this.options.logger.warn(
          block.holder?.kind === 'anomaly'
            ? `Burnrate: the spend-anomaly rule ${block.budgetName ?? block.holder.id} stopped this key; enforce is "observe", so the call goes through.`
            : `Burnrate: budget ${block.budgetName ?? block.budgetId} is past its limit for this key; enforce is "observe", so the call goes through.`,
        );
      }
      return undefined;
    }
    return block;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

/** The answer to a blocked call, as the provider would shape a refusal. */
export function refusal(provider: Provider, block: Block): Response {
  const budget = block.budgetName ? `"${block.budgetName}"` : (block.budgetId ?? 'rule');
  const message =
    block.holder?.kind === 'anomaly'
      ? `Burnrate stopped this key: it suddenly spent far more than usual (spend-anomaly rule ${budget}). Calls with it are refused until someone releases the key in Burnrate.`
      : `Burnrate budget ${budget} reached its limit: calls with this key are stopped until the budget is released or its month ends.`;
  const body =
    provider === 'anthropic'
      ? { type: 'error', error: { type: 'budget_exceeded', message }, request_id: null }
      : { error: { message, type: 'budget_exceeded', param: null, code: 'budget_exceeded' } };
  return new Response(JSON.stringify(body), {
    status: 429,
    headers: {
      'content-type': 'application/json',
      'x-should-retry': 'false',
      ...(block.budgetId ? { 'x-burnrate-budget-id': block.budgetId } : {}),
      ...(block.holder?.kind === 'anomaly' ? { 'x-burnrate-rule-id': block.holder.id } : {}),
    },
  });
}
