/** The OpenAI kit of a sync (shared/connections/kit.ts): its client at OpenAI's origin; every day it reported is still there. */
import { providerBaseUrl } from '#shared/connections/endpoints.ts';
import type { ProviderKit } from '#shared/connections/kit.ts';
import { openAiClient } from '#shared/connections/openai.ts';

export const openAiKit: ProviderKit = {
  provider: 'openai',
  client: (adminKey, options) => openAiClient(providerBaseUrl('openai'), adminKey, options),
  firstReadableDay: () => undefined,
};
