import { describe, expect, it } from 'vitest';
import { allocateShared } from '#shared/spend/chargeback.ts';

const sum = (m: Map<string, bigint>) => [...m.values()].reduce((a, b) => a + b, 0n);

describe('allocateShared: largest remainder, exact to the micro-dollar', () => {
  it('splits in proportion to direct spend', () => {
    const out = allocateShared([{ value: 'a', directMicros: 3_000_000n }, { value: 'b', directMicros: 1_000_000n }], 1_000_000n)!;
    expect(out).toEqual(new Map([['a', 750_000n], ['b', 250_000n]]));
  });

  it('gives the micro-dollars left over to the largest remainders, and the parts sum to the shared amount', () => {
    // 10 µ$ over three equal values: 3.33… each; one of them (by name) gets the extra micro-dollar.
    const out = allocateShared([{ value: 'c', directMicros: 5n }, { value: 'a', directMicros: 5n }, { value: 'b', directMicros: 5n }], 10n)!;
    expect(out).toEqual(new Map([['c', 3n], ['a', 4n], ['b', 3n]]));
    // 100 µ$ over 1:2:4 → 14.28, 28.57, 57.14: floors 14, 28, 57 (99); the largest remainder (y’s .57) gets the 100th.
    const seven = allocateShared([{ value: 'x', directMicros: 1n }, { value: 'y', directMicros: 2n }, { value: 'z', directMicros: 4n }], 100n)!;
    expect(seven).toEqual(new Map([['x', 14n], ['y', 29n], ['z', 57n]]));
    expect(sum(seven)).toBe(100n);
  });

  it('is exact for any amounts (random cases: every part within 1 µ$ of its exact share, the sum exact)', () => {
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let t = 0; t < 500; t++) {
      const shares = Array.from({ length: 1 + rand(12) }, (_, i) => ({ value: `v${i}`, directMicros: BigInt(rand(1_000_000_000)) * BigInt(1 + rand(1000)) }));
      const shared = BigInt(rand(2_000_000_000)) * BigInt(1 + rand(100000));
      const out = allocateShared(shares, shared);
      const weight = shares.reduce((s, x) => s + x.directMicros, 0n);
      if (weight === 0n) {
        expect(out).toBeUndefined();
        continue;
      }
      expect(sum(out!)).toBe(shared);
      for (const s of shares) {
        const part = out!.get(s.value)!;
        const floor = (shared * s.directMicros) / weight;
        expect(part === floor || part === floor + 1n).toBe(true);
      }
    }
  });

  it('values without positive spend get nothing; with none at all the shared spend stays unallocated', () => {
    expect(allocateShared([{ value: 'a', directMicros: 0n }, { value: 'b', directMicros: 2n }], 7n)).toEqual(new Map([['a', 0n], ['b', 7n]]));
    expect(allocateShared([{ value: 'a', directMicros: 0n }], 7n)).toBeUndefined();
    expect(allocateShared([], 7n)).toBeUndefined();
    expect(allocateShared([], 0n)).toEqual(new Map());
  });

  it('allocates a negative shared amount (a refund) the same way', () => {
    const out = allocateShared([{ value: 'a', directMicros: 1n }, { value: 'b', directMicros: 2n }], -10n)!;
    expect(out).toEqual(new Map([['a', -3n], ['b', -7n]]));
  });
});
