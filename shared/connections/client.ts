/**
 * The one small interface a sync needs from a provider (DESIGN.md "Round 3"): check the admin key, list the
 * organization's keys, read usage cells of a range of UTC days, read what the provider bills per day.
 */
import { config } from '#shared/config.ts';
import type { BilledDay, Provider, ProviderKey, UsageCell } from '#shared/connections/model.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { openAiClient } from '#shared/connections/openai.ts';
import { anthropicClient } from '#shared/connections/anthropic.ts';
import { openRouterClient, openRouterOldestDay } from '#shared/connections/openrouter.ts';

export interface ProviderClient {
  readonly provider: Provider;
  /** The ONE read call that checks an admin key (create, rotation): throws ProviderRefused / ProviderUnavailable. */
  check(): Promise<void>;
  /** Every key of the organization (all statuses). */
  listKeys(): Promise<ProviderKey[]>;
  /** Usage of the UTC days `from` ≤ day < `toExclusive`, every page, one cell per (day, key, model, tier). */
  readUsage(from: string, toExclusive: string): Promise<UsageCell[]>;
  /** What the provider bills per UTC day in [from, toExclusive) (days it has no figure for are absent). */
  readBilled(from: string, toExclusive: string): Promise<BilledDay[]>;
  /**
   * Provider key ids known from earlier syncs that `readUsage` must read too, listed or not (OpenRouter reads usage
   * key by key: a key deleted since keeps its recent days instead of reading as empty).
   */
  readAlso?(keyIds: readonly string[]): void;
}

/** The base URL of each provider's admin API: the real hosts, or (locally) `OPENAI_ADMIN_URL` / `ANTHROPIC_ADMIN_URL` / `OPENROUTER_URL`. */
export function providerBaseUrl(provider: Provider): string {
  return config().providerUrls[provider];
}

/** `now`: the sync's clock (OpenRouter's client decides by it which UTC day is today). */
export function providerClient(provider: Provider, adminKey: string, options: ProviderHttpOptions & { now?: () => Date } = {}): ProviderClient {
  const base = providerBaseUrl(provider);
  if (provider === 'openrouter') return openRouterClient(base, adminKey, options);
  return provider === 'openai' ? openAiClient(base, adminKey, options) : anthropicClient(base, adminKey, options);
}

/**
 * The oldest UTC day the provider still reports, seen on `today` (undefined: no such limit). A sync never reads
 * before it: a day the provider no longer holds would read as empty and undo what was imported.
 */
export function firstReadableDay(provider: Provider, today: string): string | undefined {
  return provider === 'openrouter' ? openRouterOldestDay(today) : undefined;
}

/** Sums cells with the same (day, key, model, tier) (a row per project or per page of the same group). */
export function mergeCells(cells: Iterable<UsageCell>): UsageCell[] {
  const byId = new Map<string, UsageCell>();
  for (const c of cells) {
    const id = `${c.date}|${c.keyId ?? ''}|${c.model}|${c.tier}`;
    const seen = byId.get(id);
    if (!seen) byId.set(id, { ...c });
    else {
      seen.requests += c.requests;
      seen.inputTokens += c.inputTokens;
      seen.cachedInputTokens += c.cachedInputTokens;
      seen.cacheWriteInputTokens += c.cacheWriteInputTokens;
      seen.cacheWrite1hInputTokens += c.cacheWrite1hInputTokens;
      seen.outputTokens += c.outputTokens;
    }
  }
  return [...byId.values()];
}

/** A count field of a provider row: a non-negative integer, 0 when absent or null. */
export function count(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new RangeError(`${field} is not a token count`);
  return value;
}
