/**
 * Exact money arithmetic: integer MICRO-DOLLARS (µ$, 1 USD = 1_000_000 µ$) ↔ dollars through decimal strings, never
 * `value * 1e6`. No price table here (shared/pricing/pricing.ts has it), so converting an amount costs a function
 * nothing at its start.
 */
import { JsonDecimal } from '#shared/http/json.ts';

const MICROS_PER_USD = 1_000_000n;
const USD_DECIMALS = 6;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

// ---------------------------------------------------------------------------------------------------------------
// Decimal strings ↔ micro-dollars (string arithmetic only; never `value * 1e6`)

/** A decimal as an exact integer coefficient and a scale: value = (negative ? -1 : 1) × coefficient × 10^-scale. */
export interface Decimal {
  readonly negative: boolean;
  readonly coefficient: bigint;
  readonly scale: number;
}

/** Parses "12", "0.075", "-3.5", and the exponent forms `String(number)` produces ("1e-7", "1.5e-7", "1e+21"). */
export function parseDecimal(text: string): Decimal | undefined {
  const match = /^(-)?(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const trimmed = fraction.replace(/0+$/, ''); // "2.50" has two decimals written but one that matters
  return {
    negative: sign === '-',
    coefficient: BigInt(whole + trimmed),
    scale: trimmed.length - Number(exponent),
  };
}

/** The exact integer number of millionths in `decimal`, or undefined if it has more than 6 decimals. */
export function toMillionths(decimal: Decimal): bigint | undefined {
  if (decimal.scale > USD_DECIMALS) return undefined;
  const magnitude = decimal.coefficient * 10n ** BigInt(USD_DECIMALS - decimal.scale);
  return decimal.negative ? -magnitude : magnitude;
}

/** True if `value` is a finite number whose shortest decimal form has at most 6 decimals (0.72 yes, 0.1 + 0.2 no). */
export function hasAtMostSixDecimals(value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const decimal = parseDecimal(String(value));
  return decimal !== undefined && decimal.scale <= USD_DECIMALS;
}

/**
 * Dollars (a JSON number, ≥ 0, at most 6 decimals) → exact integer µ$. Goes through the number's shortest decimal
 * string, so 0.3 is 300_000 and 1e-6 is 1. Throws RangeError for negatives, more than 6 decimals, NaN/Infinity,
 * or a result past Number.MAX_SAFE_INTEGER.
 */
export function usdToMicros(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`Not a finite dollar amount: ${value}`);
  const decimal = parseDecimal(String(value));
  if (decimal === undefined) throw new RangeError(`Not a dollar amount: ${value}`);
  if (decimal.negative) throw new RangeError(`Negative dollar amount: ${value}`);
  const micros = toMillionths(decimal);
  if (micros === undefined) throw new RangeError(`More than 6 decimals in dollar amount: ${value}`);
  if (micros > MAX_SAFE) throw new RangeError(`Dollar amount too large: ${value}`);
  return Number(micros);
}

/** Integer µ$ → the exact decimal of its dollars, at most 6 decimals, no trailing zeros (720_000 → `0.72`, 1 → `0.000001`). */
export function usdText(micros: number | bigint): string {
  if (typeof micros === 'number' && !Number.isSafeInteger(micros)) throw new RangeError(`Not an integer number of micro-dollars: ${micros}`);
  const value = BigInt(micros);
  const magnitude = value < 0n ? -value : value;
  const whole = magnitude / MICROS_PER_USD;
  const fraction = (magnitude % MICROS_PER_USD).toString().padStart(USD_DECIMALS, '0').replace(/0+$/, '');
  return `${value < 0n ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Dollars in a response: a plain number when a double prints it exactly, else its exact decimal (shared/http/json.ts). */
export type Usd = number | JsonDecimal;

/**
 * Integer µ$ → dollars for JSON, exact on the wire: a number whenever the double prints back as the same decimal
 * (every |micros| ≤ 2^33 × 10^6, $8,589,934,592: below it doubles are spaced less than 10^-6 apart), else a
 * `JsonDecimal` that the response writer (`toJson`) writes digit for digit — the money ceiling is $9,000,000,000 per
 * aggregate and sums over ranges go past it. A `number` must be a safe integer; a `bigint` (an exact sum read from
 * storage) may be any size.
 */
export function microsToUsd(micros: number | bigint): Usd {
  const text = usdText(micros);
  const value = Number(text);
  return String(value) === text ? value : new JsonDecimal(text);
}


/** `$12.50`, `$0.075`, `$1,234.5678`: an amount shown once, exact, at least 2 decimals, thousands separated. */
export function formatUsd(micros: number | bigint): string {
  const value = BigInt(micros);
  const [whole = '0', fraction = ''] = usdText(value < 0n ? -value : value).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${value < 0n ? '-' : ''}$${grouped}.${fraction.padEnd(2, '0')}`;
}
