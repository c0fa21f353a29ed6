/**
 * One canonical provider name (API.md part 5, Details): a provider id in an event or a price is matched on a canonical
 * form — NFKC, case-folded, a trailing `.com` dropped, letters and digits only. A name whose canonical form is a
 * known provider's IS that provider (`OpenAI`, `open-ai`, `openai.com`, `ＯｐｅｎＡＩ` → `openai`) for ingestion,
 * prices and the one-source rule; any other name is kept as sent, trimmed and lower-cased (`azure-openai` stays a
 * provider of its own). Pure functions.
 */

/** The providers Burnrate knows by name: the connections' three and those of the built-in price table and the dashboard. */
export const KNOWN_PROVIDERS = ['openai', 'anthropic', 'openrouter', 'google', 'mistral', 'xai', 'deepseek', 'cohere', 'groq'] as const;
const known = new Set<string>(KNOWN_PROVIDERS);

/** The form names are compared on: NFKC, case-folded, without a trailing `.com`, letters and digits only. */
export function canonicalForm(name: string): string {
  // NFKC first (fullwidth letters, the Kelvin sign), then case folding (toLowerCase after NFKC folds what NFKC leaves).
  const folded = name.normalize('NFKC').toLowerCase().normalize('NFKC').trim();
  return folded.replace(/\.com\.?$/u, '').replace(/[^\p{L}\p{N}]/gu, '');
}

/** The provider id a name stands for: a known provider's id when its canonical form is one, else the name trimmed and lower-cased. */
export function providerId(name: string): string {
  const canonical = canonicalForm(name);
  return known.has(canonical) ? canonical : name.trim().toLowerCase();
}

/**
 * Providers' display names: ONE table for every screen, message and export (FOCUS `ProviderName`,
 * `InvoiceIssuerName`, `PublisherName`). An id the table lacks is shown as sent.
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
  'moonshotai': 'Moonshot AI',
  'z-ai': 'Z.ai',
};

/** A provider id's display name (`xai` → `xAI`; OpenRouter's vendor prefixes too: `meta-llama` → `Meta`); unknown: as sent. */
export const displayName = (provider: string): string => DISPLAY_NAMES[provider] ?? DISPLAY_NAMES[provider.toLowerCase()] ?? provider;
