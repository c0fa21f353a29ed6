/**
 * Numbers between DynamoDB and the code, without loss. The ONE place that decides how a stored number is read.
 *
 * - Reading (`parseStoredNumber`, the document client's `wrapNumbers` function): a number that a JS `number`
 *   holds exactly (a safe integer, or a decimal such as a percentage) is a `number`; an integer past
 *   Number.MAX_SAFE_INTEGER is a `bigint`, exactly (the SDK's default does the same today; pinning it here keeps
 *   it so, and readers below never turn the `bigint` into 0 as `typeof v === 'number' ? v : 0` did).
 * - Using: `readInt` (exact, `bigint`) and `readNumber` (a `number`) accept what `parseStoredNumber` returns. A
 *   missing attribute is 0 (counters are created by their first ADD); a value of any other kind (a string, a map,
 *   ...) throws — it is a bug or corrupt data, and must surface, not read as 0.
 * - Writing: the document client marshals `bigint` exactly, so sums are written as `bigint` (shared/db/usage-writes.ts).
 */

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INTEGER = /^-?\d+$/;

/** The `wrapNumbers` function of the document client's unmarshall options. */
export function parseStoredNumber(text: string): number | bigint {
  const value = Number(text);
  if (Number.isSafeInteger(value)) return value;
  if (INTEGER.test(text)) return BigInt(text);
  // A decimal: this code writes them from doubles (percentages, multipliers), in their shortest form, so
  // Number() gives back exactly the double written.
  if (Number.isFinite(value)) return value;
  throw new RangeError(`The stored number ${text} cannot be read without loss.`);
}

/** An integer attribute, exactly. undefined/null (not written yet) → 0n; a non-integer or a non-number throws. */
export function readInt(value: unknown, what = 'a stored integer'): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (isNumberValue(value) && INTEGER.test(value.value)) return BigInt(value.value);
  throw new TypeError(`${what} is not an integer: ${describe(value)}`);
}

/**
 * A numeric attribute as a `number`. undefined/null → 0. An integer past Number.MAX_SAFE_INTEGER becomes the
 * nearest double: only sums that the product does not bound can be that large (token counts past 9×10^15), and
 * money never is (aggregates stop at MONEY_CEILING_MICROS < 2^53: shared/ingest/ceiling.ts).
 */
export function readNumber(value: unknown, what = 'a stored number'): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'bigint') return Number(value);
  if (isNumberValue(value)) return Number(parseStoredNumber(value.value));
  throw new TypeError(`${what} is not a number: ${describe(value)}`);
}

/** A `bigint` sum as the value to write: a `number` when it is safe (the usual case), else the exact `bigint`. */
export function storedInt(value: bigint): number | bigint {
  return value <= MAX_SAFE && value >= -MAX_SAFE ? Number(value) : value;
}

function isNumberValue(value: unknown): value is { value: string } {
  return typeof value === 'object' && value !== null && typeof (value as { value?: unknown }).value === 'string' && value.constructor?.name === 'NumberValue';
}

function describe(value: unknown): string {
  return typeof value === 'object' ? (value === null ? 'null' : (value.constructor?.name ?? 'object')) : `${typeof value} ${String(value).slice(0, 40)}`;
}
