/**
 * Picks the provider implementation of the one small interface a sync needs (provider-client.ts): check the admin
 * key, list the organization's keys, read usage cells of a range of UTC days, read what the provider bills per day.
 */
import { config } from '#shared/config.ts';
import type { Provider } from '#shared/connections/model.ts';
import type { ProviderHttpOptions } from '#shared/connections/http.ts';
import { openAiClient } from '#shared/connections/openai.ts';
import { anthropicClient } from '#shared/connections/anthropic.ts';
import type { ProviderClient } from '#shared/connections/provider-client.ts';

/** The interface and the implementations' helpers live in provider-client.ts; their names stay available here. */
export { count, mergeCells, type ProviderClient } from '#shared/connections/provider-client.ts';

/** The base URL of each provider's admin API: the real hosts, or (locally) `OPENAI_ADMIN_URL` / `ANTHROPIC_ADMIN_URL`. */
export function providerBaseUrl(provider: Provider): string {
  return config().providerUrls[provider];
}

export function providerClient(provider: Provider, adminKey: string, options: ProviderHttpOptions = {}): ProviderClient {
  const base = providerBaseUrl(provider);
  return provider === 'openai' ? openAiClient(base, adminKey, options) : anthropicClient(base, adminKey, options);
}
