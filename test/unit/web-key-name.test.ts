/** The dashboard names a key as API.md's alert texts do: its label, else its hint, else the first 12 characters of its hash. */
import { describe, expect, it } from 'vitest';
import { keyName } from '../../web/src/ui/key-name.ts';

const hash = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

describe('keyName', () => {
  it('takes the label first', () => {
    expect(keyName({ hash, label: 'Search bot', hint: 'o7Qa' })).toBe('Search bot');
  });
  it('else the hint (shown as the key’s tail)', () => {
    expect(keyName({ hash, label: null, hint: 'o7Qa' })).toBe('…o7Qa');
    // A hint that marks its own gap is not given a second one (was "…sk-…b9d5").
    expect(keyName({ hash, label: null, hint: 'sk-…b9d5' })).toBe('sk-…b9d5');
    expect(keyName({ hash, label: null, hint: 'sk-...a1B2' })).toBe('sk-...a1B2');
  });
  it('else the first 12 characters of the hash', () => {
    expect(keyName({ hash, label: null, hint: null })).toBe('9f86d081884c');
  });
});
