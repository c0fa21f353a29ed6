/** Names of usage shared by the data layer and the domains. */

/** An account's own price is keyed by `<provider>/<model>` (names lower-case, as stored). */
export const priceId = (provider: string, model: string) => `${provider}/${model}`;

/** The key id of a provider's usage without an API key (Console, playground): `<provider>:unattributed`. */
export const UNATTRIBUTED = 'unattributed';

/** Anthropic's `context_window` past the long-context threshold: such usage is a cell of its own (UsageCell.longContext). */
export const LONG_CONTEXT_WINDOW = '200k-1M';
