/**
 * How people read a key's name (docs/features/spend-and-exports.md): its label, else its provider name (a connection's
 * key), else its hint, else the first 12 characters of its hash.
 * ONE rule for every alert text (title, message, e-mail, webhook, Slack). Pure.
 */

/** Characters of the hash that name a key with neither label nor hint. */
export const HASH_PREFIX_LENGTH = 12;

export interface KeyNameParts {
  hash: string;
  label?: string | null;
  /** The provider's name of the key (keys found by a connection). */
  name?: string | null;
  hint?: string | null;
}

const present = (text: string | null | undefined): text is string => typeof text === 'string' && text.trim() !== '';

export function keyDisplayName(key: KeyNameParts): string {
  if (present(key.label)) return key.label.trim();
  if (present(key.name)) return key.name.trim();
  if (present(key.hint)) return key.hint.trim();
  return key.hash.slice(0, HASH_PREFIX_LENGTH);
}
