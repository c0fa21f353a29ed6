/**
 * One canonical provider name (docs/features/connections.md): a provider id in an event or a price is matched on a
 * canonical form — NFKC, case-folded, a trailing `.com`, `.ai`, `.co`, `.io` or `.dev` dropped, letters and digits only.
 * A name whose canonical form is a known provider's IS that provider (`OpenAI`, `open-ai`, `openai.com`, `ＯｐｅｎＡＩ` →
 * `openai`; `openrouter.ai` → `openrouter`: a provider's own domain is the provider, never a second one counting the
 * same requests) for ingestion,
 * prices and the one-source rule; any other name is kept as sent, trimmed and lower-cased (`azure-openai` stays a
 * provider of its own). Pure functions.
 */

/** The providers Burnrate knows by name: the connections' three and those of the built-in price table and the dashboard. */
export const KNOWN_PROVIDERS = ['openai', 'anthropic', 'openrouter', 'google', 'mistral', 'xai', 'deepseek', 'cohere', 'groq'] as const;
const known = new Set<string>(KNOWN_PROVIDERS);

/** The domain endings dropped from a name (one, at its end, with or without a final dot). */
const DOMAIN_ENDING = /\.(?:com|ai|co|io|dev)\.?$/u;
const lettersAndDigits = (s: string) => s.replace(/[^\p{L}\p{N}]/gu, '');

/**
 * The form names are compared on: NFKC, case-folded, without a trailing `.com`, `.ai`, `.co`, `.io` or `.dev`,
 * letters and digits only. A name that is a known provider with its ending kept stays that provider (`x.ai` → `xai`,
 * not `x`).
 */
export function canonicalForm(name: string): string {
  // NFKC first (fullwidth letters, the Kelvin sign), then case folding (toLowerCase after NFKC folds what NFKC leaves).
  const folded = name.normalize('NFKC').toLowerCase().normalize('NFKC').trim();
  const whole = lettersAndDigits(folded.replace(/\.com\.?$/u, ''));
  return known.has(whole) ? whole : lettersAndDigits(folded.replace(DOMAIN_ENDING, ''));
}

/** The provider id a name stands for: a known provider's id when its canonical form is one, else the name trimmed and lower-cased. */
export function providerId(name: string): string {
  const canonical = canonicalForm(name);
  return known.has(canonical) ? canonical : name.trim().toLowerCase();
}
