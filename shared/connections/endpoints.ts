/**
 * Where each provider's admin API is, apart from the clients (client.ts) that read usage: what only calls a provider
 * (the levers, the organization check) imports this and not the usage readers and what they bring (the price tiers).
 */
import { config } from '#shared/config.ts';
import type { Provider } from '#shared/connections/model.ts';

/** The base URL of each provider's admin API: the real hosts, or (locally) `OPENAI_ADMIN_URL` / `ANTHROPIC_ADMIN_URL` / `OPENROUTER_URL`. */
export function providerBaseUrl(provider: Provider): string {
  return config().providerUrls[provider];
}

/** The `anthropic-version` header of Anthropic's Admin API (the client and the lever send it). */
export const ANTHROPIC_VERSION = '2023-06-01';
