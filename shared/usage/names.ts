/** Names of usage shared by the data layer and the domains. */

/** An account's own price is keyed by `<provider>/<model>` (names lower-case, as stored). */
export const priceId = (provider: string, model: string) => `${provider}/${model}`;

/** The key id of a provider's usage without an API key (Console, playground): `<provider>:unattributed`. */
export const UNATTRIBUTED = 'unattributed';

/**
 * The row of a day's spend that its provider breaks down by model only once the day is complete (OpenRouter's today:
 * a key's `usage_daily`, replaced by the day's activity rows tomorrow). Stored under this name; never shown as a
 * model: breakdowns leave it out of their models (`notByModelUsd`), `groupBy=model` groups it as `model: null`, the
 * exports leave their model empty.
 */
export const NOT_BY_MODEL = 'all models today (per model tomorrow)';
/** The model a row is shown with: null for {@link NOT_BY_MODEL}. */
export const shownModel = (model: string): string | null => (model === NOT_BY_MODEL ? null : model);

/** Anthropic's `context_window` past the long-context threshold: such usage is a cell of its own (UsageCell.longContext). */
export const LONG_CONTEXT_WINDOW = '200k-1M';
