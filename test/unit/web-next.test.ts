/** The dashboard's sign-in returns only to a path of its own origin (no open redirect through `?next=`). */
import { describe, expect, it } from 'vitest';
import { safeNext } from '../../web/src/ui/next.ts';

describe('safeNext', () => {
  it('keeps a path of this site with its query', () => {
    expect(safeNext('/keys/abc?range=7')).toBe('/keys/abc?range=7');
    expect(safeNext('/alerts?status=acknowledged')).toBe('/alerts?status=acknowledged');
  });
  it('sends anything else to the overview', () => {
    for (const next of [null, '', 'https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/\t/evil.example']) {
      expect(safeNext(next), JSON.stringify(next)).toBe('/');
    }
  });
});
