/**
 * Chargeback (docs/features/tags-and-chargeback.md): the shared spend — untagged keys, usage without a key — allocated to a tag's values in
 * proportion to their own spend, by the largest-remainder method, exact to the micro-dollar. Pure.
 */

export interface Share {
  value: string;
  /** The value's own (direct) spend, µ$. */
  directMicros: bigint;
}

/**
 * Each value's part of `sharedMicros`, proportional to its direct spend: the floor of each exact share, then the
 * micro-dollars left over one each to the largest remainders (ties: the larger direct spend, then the value's name),
 * so the parts sum to `sharedMicros` exactly. Values with no positive spend get nothing; when no value has any, the
 * shared spend can't be allocated (undefined). A negative shared amount (a refund) is allocated the same way.
 */
export function allocateShared(shares: readonly Share[], sharedMicros: bigint): Map<string, bigint> | undefined {
  const weighted = shares.filter((s) => s.directMicros > 0n);
  const weight = weighted.reduce((sum, s) => sum + s.directMicros, 0n);
  if (weight === 0n) return sharedMicros === 0n ? new Map(shares.map((s) => [s.value, 0n])) : undefined;
  const sign = sharedMicros < 0n ? -1n : 1n;
  const amount = sharedMicros * sign;
  const parts = weighted.map((s) => {
    const exact = amount * s.directMicros;
    return { value: s.value, direct: s.directMicros, part: exact / weight, remainder: exact % weight };
  });
  let left = amount - parts.reduce((sum, p) => sum + p.part, 0n);
  const order = [...parts].sort((a, b) => (a.remainder !== b.remainder ? (b.remainder > a.remainder ? 1 : -1) : a.direct !== b.direct ? (b.direct > a.direct ? 1 : -1) : a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  for (const p of order) {
    if (left === 0n) break;
    p.part += 1n;
    left -= 1n;
  }
  const out = new Map(shares.map((s) => [s.value, 0n]));
  for (const p of parts) out.set(p.value, p.part * sign);
  return out;
}
