/**
 * The dashboard's ONE way to write money and dates (issue 18: "money and dates are written three ways").
 * - Money: US dollars with 2 decimals wherever a person reads an amount ($1,234.56, $0.79). Only where 2 decimals
 *   would read $0.00 for an amount that is not zero, 2 significant digits ($0.0012). The exact value (the API's
 *   micro-dollars, up to 6 decimals) goes in the title / accessible description (`exactMoney`) and in CSV.
 * - Dates: "Nov 24, 2026" for a day, "Nov 24, 2026, 3:04 PM" for a moment, "November 2026" for a month, "Nov 24" on a
 *   chart's axis. Every day and time is UTC; each screen says so once (`UTC_NOTE`), not on every value.
 * - Texts are never rewritten: what a user typed (a rule's or budget's name) shows as typed, and the API writes its own
 *   texts (alert titles and messages) in these formats already (shared/alerting/words.ts).
 */
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const usdExact = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
const usdTiny = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 });
const count = new Intl.NumberFormat('en-US');
const dateTime = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const day = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
const shortDay = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
const month = new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });

/** How people write the providers Burnrate knows ("OpenAI", not "openai"); any other provider id as sent. */
const PROVIDER_WORDS: Record<string, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  openrouter: 'OpenRouter',
  google: 'Google',
  mistral: 'Mistral',
  xai: 'xAI',
  deepseek: 'DeepSeek',
  cohere: 'Cohere',
  groq: 'Groq',
  azure: 'Azure OpenAI',
  bedrock: 'Amazon Bedrock',
};

/** The provider ids Burnrate knows, in the order a picker offers them. */
export const KNOWN_PROVIDERS: readonly string[] = Object.keys(PROVIDER_WORDS);

/** A provider id as a person reads it: the known providers by their own spelling, others as sent. */
export function providerWords(provider: string): string {
  return PROVIDER_WORDS[provider] ?? provider;
}

/** Said once per screen (and in each chart's caption) instead of after every date. */
export const UTC_NOTE = 'Days and times are UTC.';

/** $1,234.56 and $0.79; $0.0012 only where 2 decimals would read $0.00. */
export function money(value: number): string {
  if (value !== 0 && Math.abs(value) < 0.005) return usdTiny.format(value);
  return usd.format(value);
}

/** The exact amount, every micro-dollar ($0.785181, $131.14183, $2.00): titles, accessible descriptions. */
export function exactMoney(value: number): string {
  return usdExact.format(value);
}

/** A price per million tokens, exact: at least 2 and up to 6 decimals ($1.875, $0.01875, $10.00). */
export function unitPrice(value: number): string {
  return usdExact.format(value);
}

export function number(value: number): string {
  return count.format(value);
}

/** A moment: `Nov 24, 2026, 3:04 PM` (UTC, said once per screen). */
export function when(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

/** `2026-11-23` → `Nov 23, 2026`. */
export function utcDay(date: string): string {
  return day.format(new Date(`${date}T00:00:00Z`));
}

/** `2026-11-23` → `Nov 23` (a chart's axis, where the year is in the caption). */
export function axisDay(date: string): string {
  return shortDay.format(new Date(`${date}T00:00:00Z`));
}

/** An alert's period: `2026-11` → `November 2026`, `2026-11-23` → `Nov 23, 2026`, `2026-W47` stays. */
export function period(value: string): string {
  if (/^\d{4}-\d{2}$/.test(value)) return month.format(new Date(`${value}-01T00:00:00Z`));
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return utcDay(value);
  return value;
}

/** Today's UTC date, YYYY-MM-DD, `offset` days away. */
export function isoDay(offset = 0): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

export function monthStart(): string {
  return `${isoDay().slice(0, 8)}01`;
}

export function percent(ratio: number): string {
  return `${Math.round(ratio)}%`;
}

/** A change against a previous period: `+12%`, `−3%`, `0%`; null when there was nothing to compare with. */
export function change(now: number, before: number): string | null {
  if (before <= 0) return null;
  const pct = Math.round(((now - before) / before) * 100);
  return pct > 0 ? `+${pct}%` : pct < 0 ? `−${Math.abs(pct)}%` : '0%';
}
