/**
 * How people read a provider's id: ONE table for every screen, message and export (FOCUS `ProviderName`,
 * `InvoiceIssuerName`, `PublisherName`), OpenRouter's vendor prefixes included (`meta-llama` → `Meta`). An id the
 * table lacks reads as itself. Pure.
 */
const DISPLAY_NAMES: Readonly<Record<string, string>> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  openrouter: 'OpenRouter',
  google: 'Google',
  mistral: 'Mistral',
  mistralai: 'Mistral',
  xai: 'xAI',
  'x-ai': 'xAI',
  deepseek: 'DeepSeek',
  cohere: 'Cohere',
  groq: 'Groq',
  meta: 'Meta',
  'meta-llama': 'Meta',
  amazon: 'Amazon',
  microsoft: 'Microsoft',
  nvidia: 'NVIDIA',
  qwen: 'Qwen',
  perplexity: 'Perplexity',
  moonshotai: 'Moonshot AI',
  'z-ai': 'Z.ai',
};

export const providerName = (provider: string): string => DISPLAY_NAMES[provider] ?? DISPLAY_NAMES[provider.toLowerCase()] ?? provider;
