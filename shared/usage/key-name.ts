/**
 * How people read a key's name (docs/features/spend-and-exports.md): its label, else its provider name (a connection's
 * key), else its hint (a bare tail as `…r4nw`), else the first 12 characters of its hash.
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
  // A hint that marks its own gap (`sk-…b9d5`, a connection's `sk-abc...def`) as it is; a bare tail (`r4nw`) as `…r4nw`:
  // the dashboard's rule too (web/src/ui/key-name.ts), so a key reads the same on every screen and in every text.
  if (present(key.hint)) return /…|\.\.\./.test(key.hint) ? key.hint.trim() : `…${key.hint.trim()}`;
  return key.hash.slice(0, HASH_PREFIX_LENGTH);
}
