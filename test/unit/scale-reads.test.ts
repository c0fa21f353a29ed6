import { describe, expect, it } from 'vitest';
import { previousRange } from '#shared/spend/service.ts';
import { keyMatches, keySortName } from '#shared/keys/service.ts';

describe('previousRange (GET /spend compare=previous)', () => {
  it('a range of N days: the N days just before', () => {
    expect(previousRange('2026-11-15', '2026-11-21')).toEqual({ from: '2026-11-08', to: '2026-11-14' });
    expect(previousRange('2026-11-21', '2026-11-21')).toEqual({ from: '2026-11-20', to: '2026-11-20' });
    expect(previousRange('2026-03-02', '2026-03-31')).toEqual({ from: '2026-01-31', to: '2026-03-01' });
  });
  it('a month to date: the same days of the previous month', () => {
    expect(previousRange('2026-11-01', '2026-11-24')).toEqual({ from: '2026-10-01', to: '2026-10-24' });
    expect(previousRange('2026-01-01', '2026-01-10')).toEqual({ from: '2025-12-01', to: '2025-12-10' });
  });
  it('…cut at the end of a shorter previous month', () => {
    expect(previousRange('2026-03-01', '2026-03-30')).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(previousRange('2028-03-01', '2028-03-29')).toEqual({ from: '2028-02-01', to: '2028-02-29' });
  });
  it('a whole month: the whole previous month', () => {
    expect(previousRange('2026-11-01', '2026-11-30')).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(previousRange('2026-03-01', '2026-03-31')).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(previousRange('2026-02-01', '2026-02-28')).toEqual({ from: '2026-01-01', to: '2026-01-31' });
  });
  it('a range from the 1st that runs past its month is a plain N days', () => {
    expect(previousRange('2026-10-01', '2026-11-05')).toEqual({ from: '2026-08-26', to: '2026-09-30' });
  });
});

describe('GET /keys search and name (pure)', () => {
  const hash = `abcdef${'0'.repeat(58)}`;
  const key = { keyHash: hash, label: 'Backend Prod', hint: 'sk-...XyZ9', name: null };
  it('q: a part of the label or hint in any case, the start of the hash (not its middle)', () => {
    expect(keyMatches(key, 'kend pr')).toBe(true);
    expect(keyMatches(key, 'xyz')).toBe(true);
    expect(keyMatches(key, 'ABCDEF')).toBe(true);
    expect(keyMatches(key, 'cdef')).toBe(false);
    expect(keyMatches({ ...key, name: 'Batch worker' }, 'WORKER')).toBe(true);
    expect(keyMatches({ keyHash: hash }, 'backend')).toBe(false);
  });
  it('name: the label, else the provider’s name, else the hint, else the hash; lower-cased', () => {
    expect(keySortName(key)).toBe('backend prod');
    expect(keySortName({ ...key, label: null, name: 'Batch Worker' })).toBe('batch worker');
    expect(keySortName({ ...key, label: '  ', name: null })).toBe('sk-...xyz9');
    expect(keySortName({ keyHash: hash })).toBe(hash);
  });
});
