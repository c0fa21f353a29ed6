/** How people read a provider's id (`openai` → `OpenAI`); an id Burnrate has no name for reads as itself. Pure. */
export const providerName = (provider: string) =>
  provider === 'openai' ? 'OpenAI' : provider === 'anthropic' ? 'Anthropic' : provider === 'openrouter' ? 'OpenRouter' : provider;
