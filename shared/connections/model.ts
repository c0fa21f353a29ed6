/**
 * The connections domain's shapes: what a provider client returns (keys, usage cells, billed days), independent of
 * the provider. Token counts follow Burnrate's event fields (API.md part 4 "Mapping").
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
}

export const COUNT_FIELDS = ['requests', 'inputTokens', 'cachedInputTokens', 'cacheWriteInputTokens', 'cacheWrite1hInputTokens', 'outputTokens'] as const;

export const zeroCounts = (): Counts => ({ requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: 0 });

/** One imported cell: a UTC day × provider key (null: no key, the Console or playground) × model × tier. */
export interface UsageCell extends Counts {
  date: string;
  keyId: string | null;
  model: string;
  /**
   * `standard`, `batch` (half price), another service tier of the provider (`priority`, `flex`, ...), or
   * `embeddings` (OpenAI's embeddings endpoint: its rows never merge with completions of the same model).
   */
  tier: string;
  /** The project (OpenAI) or workspace (Anthropic) the provider reported with the row. */
  projectId: string | null;
  /**
   * What the provider itself reports the cell cost, in micro-dollars (OpenRouter bills in dollars): the cell is
   * counted at this figure, not priced from the table. Absent: priced from the price table.
   */
  reportedCostMicros?: bigint;
}

/** What the provider bills the organization on one UTC day, in micro-dollars. */
export interface BilledDay {
  date: string;
  billedMicros: bigint;
}
