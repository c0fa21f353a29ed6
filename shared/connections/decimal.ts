/** Provider money as exact micro-dollars: decimal strings parsed with BigInt, never `value * 1e6`. */

/** round-half-up(`text` × 10^`shift`) for a plain decimal (`-12.345`, `123.78912`). Throws on anything else. */
export function scaleDecimal(text: string, shift: number): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) throw new RangeError(`not a decimal: ${text.slice(0, 40)}`);
  const [, sign, whole, fraction = ''] = m;
  const digits = fraction.padEnd(shift + 1, '0');
  const kept = BigInt(`${whole}${digits.slice(0, shift)}`);
  const roundUp = Number(digits[shift]) >= 5 ? 1n : 0n;
  const magnitude = kept + roundUp;
  return sign === '-' ? -magnitude : magnitude;
}

/**
 * Provider amounts are summed per day in units of 10^-14 $ ("picos" below: every digit of a cents string with up to 12
 * decimals) and rounded to micro-dollars once, at the end: a day of many rows with fractional cents is exact to the
 * micro-dollar, not off by a rounding per row.
 */
export const PICOS_PER_MICRO = 100_000_000n;

/** Anthropic's `amount`: a decimal string in CENTS (`"123.45"` = $1.2345) → 10^-14 $. */
export const centsToPicos = (cents: string): bigint => scaleDecimal(cents, 12);

/** OpenAI's `amount.value`: a JSON number in dollars → 10^-14 $ (read through its 12-decimal string). */
export function dollarsToPicos(value: number): bigint {
  if (!Number.isFinite(value)) throw new RangeError('not a finite amount');
  return scaleDecimal(value.toFixed(12), 14);
}

/** 10^-14 $ → micro-dollars, half up (half away from zero for a negative credit). */
export function picosToMicros(picos: bigint): bigint {
  const half = PICOS_PER_MICRO / 2n;
  return picos >= 0n ? (picos + half) / PICOS_PER_MICRO : -((-picos + half) / PICOS_PER_MICRO);
}

/** Anthropic's `amount` in cents → micro-dollars (one amount). */
export const centsToMicros = (cents: string): bigint => picosToMicros(centsToPicos(cents));
