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

/** Anthropic's `amount`: a decimal string in cents (`"123.45"` = $1.2345) → micro-dollars. */
export const centsToMicros = (cents: string): bigint => scaleDecimal(cents, 4);

/** OpenAI's `amount.value`: a JSON number in dollars → micro-dollars (read through a 12-decimal string). */
export function dollarsToMicros(value: number): bigint {
  if (!Number.isFinite(value)) throw new RangeError('not a finite amount');
  return scaleDecimal(value.toFixed(12), 6);
}
