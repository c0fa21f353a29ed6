/** The OpenRouter kit of a sync (shared/connections/kit.ts): its client, and its activity's 30 completed days. */
import { providerBaseUrl } from '#shared/connections/endpoints.ts';
import type { ProviderKit } from '#shared/connections/kit.ts';
import { openRouterClient, openRouterOldestDay } from '#shared/connections/openrouter.ts';

export const openRouterKit: ProviderKit = {
  provider: 'openrouter',
  client: (managementKey, options) => openRouterClient(providerBaseUrl('openrouter'), managementKey, options),
  firstReadableDay: (today) => openRouterOldestDay(today),
};
