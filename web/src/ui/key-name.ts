import type { Schemas } from '../api/client.ts';

/** A key's name as people read it: its label, else its hint, else the start of its hash. */
export function keyName(key: Pick<Schemas['Key'], 'label' | 'hint' | 'hash'>): string {
  return key.label ?? (key.hint ? `…${key.hint}` : key.hash.slice(0, 12));
}
