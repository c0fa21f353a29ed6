/**
 * The connections domain's shapes: what a provider client returns (keys, usage cells, billed days), independent of
 * the provider. Token counts follow Burnrate's event fields (docs/features/connections.md).
 */
export type Provider = 'openai' | 'anthropic' | 'openrouter';
export const PROVIDERS: readonly Provider[] = ['openai', 'anthropic', 'openrouter'];

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

/** The counts of one (UTC day, provider key, model, tier) as the provider reports them, in Burnrate's terms. */
export interface Counts {
  requests: number;
  /** All input tokens: uncached, cache reads and cache writes. */
  inputTokens: number;
  cachedInputTokens: number;
  /** 5-minute cache writes (OpenAI: its cache writes). */
  cacheWriteInputTokens: number;
  cacheWrite1hInputTokens: number;
  outputTokens: number;
  /** Web searches (Anthropic `server_tool_use.web_search_requests`), priced per 1,000 from the table. */
  webSearchRequests: number;
  /** A cell of units, not tokens (OpenAI images, speech, storage, …: shared/connections/units.ts): how many. */
  quantity: number;
}

export const COUNT_FIELDS = ['requests', 'inputTokens', 'cachedInputTokens', 'cacheWriteInputTokens', 'cacheWrite1hInputTokens', 'outputTokens', 'webSearchRequests', 'quantity'] as const;

export const zeroCounts = (): Counts => ({ requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: 0, webSearchRequests: 0, quantity: 0 });

export { LONG_CONTEXT_WINDOW } from '#shared/usage/names.ts';

/** One imported cell: a UTC day × provider key (null: no key, the Console or playground) × model × tier (× Anthropic's long-context window). */
export interface UsageCell extends Counts {
  date: string;
  keyId: string | null;
  model: string;
  /**
   * `standard`, `batch`, another service tier (OpenAI: `flex`, `priority`, `scale`; Anthropic: its `service_tier` as
   * reported), each priced at its tier's price (shared/pricing `normalizeTier`), or `embeddings` (OpenAI's embeddings
   * endpoint: its rows never merge with completions of the same model; priced as standard), or the name of an OpenAI
   * usage endpoint beyond tokens (`images`, `vector_stores`, …: shared/connections/units.ts; priced per unit).
   */
  tier: string;
  /** The project (OpenAI) or workspace (Anthropic) the provider reported with the row. */
  projectId: string | null;
  /**
   * Anthropic usage past the long-context threshold (`context_window: "200k-1M"`): its own cell, priced at the
   * model's long-context rates. Absent (never `false`) for the standard window, so cells stored before the window was
   * read keep their identity.
   */
  longContext?: true;
  /**
   * What the provider itself reports the cell cost, in micro-dollars (OpenRouter bills in dollars): the cell is
   * counted at this figure, not priced from the table. Absent: priced from the price table.
   */
  reportedCostMicros?: bigint;
}

/** What the provider's cost endpoint says about one UTC day: its result rows (shared/connections/settle.ts). */
export type { BilledDay, BillRow } from '#shared/connections/settle.ts';
