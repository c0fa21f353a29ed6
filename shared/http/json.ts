/**
 * JSON as Burnrate writes it on the wire (pure): `JSON.stringify`'s output, except that a `JsonDecimal` is written
 * digit for digit as a JSON number. A money amount past 2^33 dollars has more significant digits than a double
 * carries (8999999999.999999 would read …998); written from its exact decimal, every reader that keeps the text
 * (or parses decimals exactly) reads the amount as it is (API.md part 4 "Hardening decisions": exact on the wire).
 */

/** A JSON number kept as its exact decimal text (`-12.5`, `8999999999.999999`). */
export class JsonDecimal {
  constructor(readonly text: string) {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text)) throw new RangeError(`Not a decimal: ${text}`);
  }

  /** Serialised by plain `JSON.stringify` (a log line): the nearest double. */
  toJSON(): number {
    return Number(this.text);
  }
}

/** `JSON.stringify(value)` with every `JsonDecimal` written as its text (same rules otherwise: toJSON, undefined, …). */
export function toJson(value: unknown): string {
  return write(value, '') ?? 'null';
}

function write(input: unknown, key: string): string | undefined {
  if (input instanceof JsonDecimal) return input.text;
  const value = typeof (input as { toJSON?: unknown } | null)?.toJSON === 'function' ? (input as { toJSON(key: string): unknown }).toJSON(key) : input;
  if (value === null || typeof value !== 'object') return JSON.stringify(value); // primitives; undefined → undefined
  if (Array.isArray(value)) return `[${value.map((item, i) => write(item, String(i)) ?? 'null').join(',')}]`;
  const members: string[] = [];
  for (const [name, item] of Object.entries(value)) {
    const text = write(item, name);
    if (text !== undefined) members.push(`${JSON.stringify(name)}:${text}`);
  }
  return `{${members.join(',')}}`;
}
