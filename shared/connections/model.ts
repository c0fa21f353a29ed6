/**
 * The connections domain's shapes: what a provider client returns (keys, usage cells, billed days), independent of
 * the provider. Token counts follow Burnrate's event fields (docs/features/connections.md). The shapes the data layer
 * stores (a provider's name, a usage cell and its counts) are shared/db's; this module re-exports them.
 */
import type { Provider } from '#shared/db/connections.ts';
import type { Counts, UsageCell } from '#shared/db/import-snapshot.ts';

export type { Counts, Provider, UsageCell };

const PROVIDER_SET: Record<Provider, true> = { openai: true, anthropic: true, openrouter: true };
/** Every provider (a compile error when the stored shape gains one this list lacks). */
export const PROVIDERS = Object.keys(PROVIDER_SET) as readonly Provider[];

/** OpenRouter's activity holds the last 30 completed UTC days (openrouter.ai/docs/api/api-reference/analytics/get-user-activity). */
export const OPENROUTER_HISTORY_DAYS = 30;

/** A provider key as its inventory lists it (OpenAI: a project's API key; Anthropic: an organization API key). */
export interface ProviderKey {
  /** `key_abc` (OpenAI) or `apikey_01…` (Anthropic): the `api_key_id` of usage rows. */
  id: string;
  name: string | null;
  /** The provider's redacted value (`sk-abc...def`, `sk-ant-api03-R2D...igAA`). */
  redactedValue: string | null;
  /** OpenAI project, Anthropic workspace (the default workspace: `Default workspace`, id from `scope` or `default`). */
  project: { id: string; name: string } | null;
  status: ProviderKeyStatus;
  /** OpenRouter: the key's own credit limit in dollars (null: none). Absent for providers without one. */
  limitUsd?: number | null;
}

export type ProviderKeyStatus = 'active' | 'inactive' | 'archived' | 'expired' | 'deleted';

export const COUNT_FIELDS = ['requests', 'inputTokens', 'cachedInputTokens', 'cacheWriteInputTokens', 'cacheWrite1hInputTokens', 'outputTokens', 'webSearchRequests', 'quantity'] as const;

export const zeroCounts = (): Counts => ({ requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: 0, webSearchRequests: 0, quantity: 0 });

export { LONG_CONTEXT_WINDOW } from '#shared/usage/names.ts';

/** What the provider's cost endpoint says about one UTC day: its result rows (shared/connections/settle.ts). */
export type { BilledDay, BillRow } from '#shared/connections/settle.ts';
