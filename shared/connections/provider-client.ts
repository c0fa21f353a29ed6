/**
 * What every provider implementation (openai.ts, anthropic.ts, …) fulfils, and the helpers they share. The
 * implementations import this module and the other helpers (http.ts, decimal.ts, model.ts), never client.ts, which
 * picks one of them.
 */
import { LONG_CONTEXT_WINDOW, type BilledDay, type Provider, type ProviderKey, type UsageCell } from '#shared/connections/model.ts';

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

/** Sums cells with the same (day, key, model, tier, window) (a row per project or per page of the same group). */
export function mergeCells(cells: Iterable<UsageCell>): UsageCell[] {
  const byId = new Map<string, UsageCell>();
  for (const c of cells) {
    const id = `${c.date}|${c.keyId ?? ''}|${c.model}|${c.tier}|${c.longContext ? LONG_CONTEXT_WINDOW : ''}`;
    const seen = byId.get(id);
    if (!seen) byId.set(id, { ...c });
    else {
      seen.requests += c.requests;
      seen.inputTokens += c.inputTokens;
      seen.cachedInputTokens += c.cachedInputTokens;
      seen.cacheWriteInputTokens += c.cacheWriteInputTokens;
      seen.cacheWrite1hInputTokens += c.cacheWrite1hInputTokens;
      seen.outputTokens += c.outputTokens;
      seen.webSearchRequests += c.webSearchRequests;
      seen.quantity += c.quantity;
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
