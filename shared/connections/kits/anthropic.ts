/** The Anthropic kit of a sync (shared/connections/kit.ts): its client at Anthropic's origin; every day it reported is still there. */
import { providerBaseUrl } from '#shared/connections/endpoints.ts';
import type { ProviderKit } from '#shared/connections/kit.ts';
import { anthropicClient } from '#shared/connections/anthropic.ts';

export const anthropicKit: ProviderKit = {
  provider: 'anthropic',
  client: (adminKey, options) => anthropicClient(providerBaseUrl('anthropic'), adminKey, options),
  firstReadableDay: () => undefined,
};
