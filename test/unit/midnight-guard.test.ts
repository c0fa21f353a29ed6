import { describe, expect, it } from 'vitest';
import { clearOfUtcMidnight } from '../integration/harness.ts';

/** Dated integration files wait for the new UTC day rather than run across midnight. */
describe('clearOfUtcMidnight', () => {
  const at = (iso: string) => () => Date.parse(iso);
  const slept: number[] = [];
  const sleep = async (ms: number) => void slept.push(ms);

  it('waits until just past midnight when the file could cross it', async () => {
    slept.length = 0;
    expect(await clearOfUtcMidnight(300_000, at('2026-11-26T23:57:00Z'), sleep)).toBe(181_000);
    expect(slept).toEqual([181_000]);
  });

  it('waits nothing when the file ends before midnight, or just after it', async () => {
    slept.length = 0;
    expect(await clearOfUtcMidnight(300_000, at('2026-11-26T23:54:59Z'), sleep)).toBe(0);
    expect(await clearOfUtcMidnight(300_000, at('2026-11-27T00:00:01Z'), sleep)).toBe(0);
    expect(slept).toEqual([]);
  });
});
