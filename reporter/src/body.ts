/**
 * Adding `stream_options.include_usage` to a caller's request body without re-serialising it: the member is
 * inserted into the JSON text and every other byte stays as the caller wrote it (a `seed` of 9007199254740993 or a
 * `temperature` of 1.0000000000000001 would not survive JSON.parse + JSON.stringify). Pure functions, no I/O.
 */

/** A top-level member of a JSON object text: its name (decoded) and where its value starts and ends. */
interface Member {
  name: string;
  valueStart: number;
  valueEnd: number;
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** The end (exclusive) of the string token that starts at `i` (a `"`), or -1 when it never closes. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return -1;
}

/** The end (exclusive) of the JSON value starting at `i` (no validation beyond nesting and strings), or -1. */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) {
      j = stringEnd(text, j) - 1;
      if (j < 0) return -1;
      if (depth === 0) return j + 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return j; // the end of a scalar just before the parent's closing bracket
      depth--;
      if (depth === 0) return j + 1;
    } else if (depth === 0 && (c === 0x2c || isSpace(c))) return j;
  }
  return depth === 0 ? text.length : -1;
}

/** The opening brace of the top-level object and its members, or null when `text` is not one object. */
function members(text: string): { open: number; close: number; members: Member[] } | null {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x7b) return null;
  const open = i;
  const found: Member[] = [];
  i++;
  for (;;) {
    while (i < text.length && (isSpace(text.charCodeAt(i)) || text.charCodeAt(i) === 0x2c)) i++;
    if (i >= text.length) return null;
    if (text.charCodeAt(i) === 0x7d) return { open, close: i, members: found };
    if (text.charCodeAt(i) !== 0x22) return null;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return null;
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    i = keyEnd;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 0x3a) return null;
    i++;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    const end = valueEnd(text, i);
    if (end < 0 || end === i) return null;
    found.push({ name, valueStart: i, valueEnd: end });
    i = end;
  }
}

const USAGE_MEMBER = '"include_usage":true';

/**
 * `text` with `stream_options.include_usage: true` added (inserted as the first member of the body, or of its
 * `stream_options` object; a `null` `stream_options` becomes `{"include_usage":true}`), every other byte unchanged.
 * Null when the text can't be read as one object, or its `stream_options` is something else.
 */
export function withIncludeUsage(text: string): string | null {
  let parsed: { open: number; members: Member[] } | null;
  try {
    parsed = members(text);
  } catch {
    return null;
  }
  if (!parsed) return null;
  // JSON.parse keeps the last of duplicate names: so does the provider's parser, and so does this.
  const options = parsed.members.filter((m) => m.name === 'stream_options').at(-1);
  if (!options) {
    const rest = parsed.members.length > 0 ? ',' : '';
    return `${text.slice(0, parsed.open + 1)}"stream_options":{${USAGE_MEMBER}}${rest}${text.slice(parsed.open + 1)}`;
  }
  const value = text.slice(options.valueStart, options.valueEnd);
  if (value === 'null') return `${text.slice(0, options.valueStart)}{${USAGE_MEMBER}}${text.slice(options.valueEnd)}`;
  if (!value.startsWith('{')) return null;
  const inner = members(value);
  if (!inner) return null;
  const at = options.valueStart + 1;
  return `${text.slice(0, at)}${USAGE_MEMBER}${inner.members.length > 0 ? ',' : ''}${text.slice(at)}`;
}
