import { randomUUID } from 'node:crypto';

/**
 * JSON as Burnrate writes it on the wire (pure): `JSON.stringify`'s output, except that a `JsonDecimal` is written
 * digit for digit as a JSON number. A money amount past 2^33 dollars has more significant digits than a double
 * carries (8999999999.999999 would read …998); written from its exact decimal, every reader that keeps the text
 * (or parses decimals exactly) reads the amount as it is (docs/security.md: exact on the wire).
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

/**
 * A JsonDecimal is first written as a string holding this token and its digits, then the whole string (quotes
 * included) is replaced by the digits. The token is random per process and never leaves it (every one is replaced),
 * so no text a client sent can pass for one.
 */
const TOKEN = `\u0000json-decimal-${randomUUID()}:`;
const TOKEN_STRING = new RegExp(`"${JSON.stringify(TOKEN).slice(1, -1).replaceAll('\\', '\\\\')}(-?[0-9.]+)"`, 'g');

/**
 * `JSON.stringify(value)` with every `JsonDecimal` written as its text: the native serialiser does the rest (its own
 * rules: toJSON, undefined, escaping), about 3× its plain cost measured on a 1 MB body, and nothing is replaced when
 * the body holds no JsonDecimal.
 */
export function toJson(value: unknown): string {
  let exact = false;
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, item: unknown) {
    const raw = this[key];
    if (!(raw instanceof JsonDecimal)) return item;
    exact = true;
    return `${TOKEN}${raw.text}`;
  }) as string | undefined;
  if (text === undefined) return 'null';
  return exact ? text.replace(TOKEN_STRING, '$1') : text;
}
