// The generated types directly (not through api/client.ts), so a unit test can import this without a browser.
import type { components } from '../api/schema.d.ts';

/** A key's name as people read it (API.md's rule for alert texts): its label, else its hint, else the first 12 characters of its hash. */
export function keyName(key: Pick<components['schemas']['Key'], 'label' | 'hint' | 'hash'>): string {
  // A hint that marks its own gap (`sk-…b9d5`) is shown as it is; a bare tail (`o7Qa`) as `…o7Qa`.
  return key.label ?? (key.hint ? (/…|\.\.\./.test(key.hint) ? key.hint : `…${key.hint}`) : key.hash.slice(0, 12));
}
