/**
 * Picks the provider implementation of the one small interface a sync needs (provider-client.ts): check the admin
 * key, list the organization's keys, read usage cells of a range of UTC days, read what the provider bills per day.
 */
import { providerBaseUrl } from '#shared/connections/endpoints.ts';
import type { Provider } from '#shared/connections/model.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { openAiClient } from '#shared/connections/openai.ts';
import { anthropicClient } from '#shared/connections/anthropic.ts';
import type { ProviderClient } from '#shared/connections/provider-client.ts';
import { openRouterClient, openRouterOldestDay } from '#shared/connections/openrouter.ts';

/** The interface and the implementations' helpers live in provider-client.ts; their names stay available here. */
export { count, mergeCells, type ProviderClient } from '#shared/connections/provider-client.ts';
/** The providers' base URLs live in endpoints.ts (imported alone by what only calls a provider); the name stays available here. */
export { providerBaseUrl } from '#shared/connections/endpoints.ts';

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
