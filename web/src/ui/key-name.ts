// The generated types directly (not through api/client.ts), so a unit test can import this without a browser.
import type { components } from '../api/schema.d.ts';

type Key = components['schemas']['Key'];

/**
 * A key's name as people read it (docs/features/budgets-and-alerts.md rule for alert texts): its label, else the
 * provider's name of the key (a connection's key), else its hint, else the first 12 characters of its hash.
 */
export function keyName(key: Pick<Key, 'label' | 'hint' | 'hash'> & { name?: string | null | undefined }): string {
  // A hint that marks its own gap (`sk-…b9d5`, a connection's `sk-abc...def`) is shown as it is; a bare tail (`o7Qa`)
  // as `…o7Qa`.
  return key.label ?? key.name ?? (key.hint ? (/…|\.\.\./.test(key.hint) ? key.hint : `…${key.hint}`) : key.hash.slice(0, 12));
}

/** Where a key's spend comes from, in words: `OpenAI connection` or `sent in events`. */
export function sourceWords(key: Pick<Key, 'source' | 'provider'>): string {
  if (key.source !== 'connection') return 'sent in events';
  return `${PROVIDER_TITLES[key.provider] ?? key.provider} connection`;
}

const PROVIDER_TITLES: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic', openrouter: 'OpenRouter' };

/** A provider status worth saying (anything but active): `deleted at OpenAI`. */
export function providerStatusWords(key: Pick<Key, 'providerStatus' | 'provider'>): string | null {
  if (!key.providerStatus || key.providerStatus === 'active') return null;
  return `${key.providerStatus} at ${PROVIDER_TITLES[key.provider] ?? key.provider}`;
}

/**
 * A connection key's project in words: `project Web app`, `workspace Research`; a name that already says what it is
 * (`Default workspace`, `Default project`) as it is. Null when the key has none.
 */
export function projectWords(key: Pick<Key, 'project' | 'provider'>): string | null {
  if (!key.project) return null;
  const kind = key.provider === 'anthropic' ? 'workspace' : 'project';
  return new RegExp(`\\b${kind}$`, 'i').test(key.project.name) ? key.project.name : `${kind} ${key.project.name}`;
}

/**
 * Anthropic's usage report has no request count: a key imported from an Anthropic connection counts 0 requests
 * (docs/features/budgets-and-alerts.md), so wherever requests are shown its figure reads "n/a".
 */
export function requestsUnknown(key: Pick<Key, 'source' | 'provider'>): boolean {
  return key.source === 'connection' && key.provider === 'anthropic';
}

export const REQUESTS_UNKNOWN_NOTE = 'Requests: n/a for keys of the Anthropic connection (Anthropic’s usage report has no request count).';
