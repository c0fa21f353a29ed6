/**
 * Tier names, apart from the price table (pricing.ts re-exports them): the provider clients read a usage row's tier
 * without carrying the table (and its 30 KB) into every function that checks an admin key.
 */
/**
 * The tier a call ran in. `standard` is the API's default (OpenAI `default`/`auto`); `batch` (OpenAI `batch: true`,
 * Anthropic `service_tier: "batch"`), `flex` and `priority` each have their own price (`tierRates`); `scale` (OpenAI's
 * Scale Tier, billed as reserved capacity) has no per-token price in the table and is estimated at the standard price.
 */
export const TIERS = ['standard', 'batch', 'flex', 'priority', 'scale'] as const;
export type Tier = (typeof TIERS)[number];

/**
 * A provider's `service_tier` (or a tier name an event sends) → Burnrate's tier. OpenAI `default`/`auto` and
 * Anthropic `standard`/`standard_only` are `standard`; Anthropic `priority_on_demand` is `priority` and
 * `flex_discount` is `flex`; null/absent is `standard`. An unknown value is `standard` too.
 */
export function normalizeTier(value: string | null | undefined): Tier {
  switch ((value ?? '').toLowerCase()) {
    case 'batch':
      return 'batch';
    case 'flex':
    case 'flex_discount':
      return 'flex';
    case 'priority':
    case 'priority_on_demand':
      return 'priority';
    case 'scale':
      return 'scale';
    default:
      return 'standard';
  }
}

/**
 * The tier of a provider's usage row: OpenAI's `batch: true` is `batch` whatever its `service_tier` says (batch usage
 * reports `service_tier: "default"`: priced at the batch price once, never halved twice); otherwise its
 * `service_tier` (Anthropic `batch`, `priority`, …; OpenAI `default`, `flex`, `priority`, `scale`).
 */
export function tierOf(row: { readonly batch?: boolean | null; readonly service_tier?: string | null }): Tier {
  return row.batch === true ? 'batch' : normalizeTier(row.service_tier);
}
