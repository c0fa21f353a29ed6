import type { $ZodIssue, $ZodRawIssue, $ZodType } from 'zod/v4/core';
import { config as zodConfig, safeParse } from 'zod/mini';
import { ValidationError, type FieldError } from '#shared/http/errors.ts';

/** `events.3.keyHash`; the request part (`query`, `path`) prefixes non-body paths. */
function joinPath(prefix: string | undefined, path: readonly PropertyKey[]): string {
  const parts = [...(prefix ? [prefix] : []), ...path.map(String)];
  return parts.join('.');
}

export function issuesToFieldErrors(issues: readonly $ZodIssue[], prefix?: string): FieldError[] {
  return issues.flatMap((issue): FieldError[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: joinPath(prefix, [...issue.path, key]),
        message: `${key} is not a field of ${issue.path.length ? joinPath(undefined, issue.path) : 'this request'}; leave it out.`,
      }));
    }
    return [{ path: joinPath(prefix, issue.path), message: issue.message }];
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Messages a person can act on: every issue a schema did not word itself says which field and what was expected.

/** What the schema's own checks say about the bounds (`z.minLength(1)`, `z.maximum(100)`, `z.int()`). */
interface Bounds {
  min?: number;
  max?: number;
  integer?: boolean;
}

type SchemaLike = { _zod?: { def?: Record<string, unknown> & { checks?: Array<{ _zod: { def: Record<string, unknown> } }> } } };

function boundsOf(schema: SchemaLike | undefined): Bounds {
  const bounds: Bounds = {};
  for (const check of schema?._zod?.def?.checks ?? []) {
    const d = check._zod.def;
    switch (d.check) {
      case 'min_length':
      case 'greater_than':
        bounds.min = Number(d.minimum ?? d.value);
        break;
      case 'max_length':
      case 'less_than':
        bounds.max = Number(d.maximum ?? d.value);
        break;
      case 'length_equals':
        bounds.min = bounds.max = Number(d.length);
        break;
      case 'number_format':
        bounds.integer = true;
        break;
    }
  }
  return bounds;
}

const range = ({ min, max }: Bounds, unit: string): string =>
  min !== undefined && max !== undefined
    ? min === max
      ? ` of exactly ${min} ${unit}`
      : ` of ${min}–${max} ${unit}`
    : min !== undefined
      ? ` of at least ${min} ${unit}`
      : max !== undefined
        ? ` of at most ${max} ${unit}`
        : '';

const list = (values: readonly unknown[]): string => {
  const shown = values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return shown.length <= 1 ? (shown[0] ?? 'nothing') : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
};

/** The noun of an array's items: `events` → `events`, `channels.0` → …; `items` when the path says nothing. */
const itemsNoun = (path: readonly PropertyKey[]) => {
  const last = path.at(-1);
  return typeof last === 'string' ? last : 'items';
};

/** What a value of `schema` must be: `a string of 1–100 characters`, `an integer from 0 to 10`, `one of a or b`. */
export function expectation(schema: SchemaLike | undefined, path: readonly PropertyKey[] = []): string {
  const def = schema?._zod?.def ?? {};
  const bounds = boundsOf(schema);
  switch (def.type) {
    case 'string':
      return `a string${range(bounds, 'characters')}`;
    case 'number': {
      const noun = bounds.integer ? 'an integer' : 'a number';
      if (bounds.min !== undefined && bounds.max !== undefined) return `${noun} from ${bounds.min} to ${bounds.max}`;
      if (bounds.min !== undefined) return `${noun} of at least ${bounds.min}`;
      if (bounds.max !== undefined) return `${noun} of at most ${bounds.max}`;
      return noun;
    }
    case 'boolean':
      return 'true or false';
    case 'array':
      return `an array${range(bounds, itemsNoun(path))}`;
    case 'object':
      return 'a JSON object';
    case 'enum':
      return `one of ${list(Object.values((def.entries as Record<string, unknown>) ?? {}))}`;
    case 'literal':
      return `${list((def.values as unknown[]) ?? [])}`;
    case 'null':
      return 'null';
    case 'nullable':
      return `${expectation(def.innerType as SchemaLike, path)} or null`;
    case 'optional':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      return expectation(def.innerType as SchemaLike, path);
    case 'pipe':
      return expectation(def.in as SchemaLike, path);
    case 'union':
      return list(((def.options as SchemaLike[]) ?? []).map((o) => expectation(o, path)));
    default:
      return 'a valid value';
  }
}

/** `events.3.keyHash` → `events.3.keyHash`; the body itself → `The body`. */
const fieldName = (path: readonly PropertyKey[] | undefined) => (path?.length ? joinPath(undefined, path) : 'The body');

/**
 * The message of an issue no schema worded: `firstName must be a string of 1–100 characters.`,
 * `events must be an array of 1–1000 events.` — the field, and what was expected, from the schema itself.
 */
export function issueMessage(issue: $ZodRawIssue): string {
  const iss = issue as $ZodRawIssue & { inst?: SchemaLike; schema?: SchemaLike; path?: PropertyKey[]; input?: unknown };
  const path = iss.path ?? [];
  const name = fieldName(path);
  const schema = iss.schema ?? iss.inst;
  const expected = expectation(schema, path);
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return `${name} is required: ${expected}.`;
      return `${name} must be ${expected}.`;
    case 'too_small':
    case 'too_big': {
      const origin = (iss as { origin?: string }).origin;
      if (origin === 'number' || origin === 'int' || origin === 'bigint') return `${name} must be ${expected}.`;
      // Bounds of a string or an array: the issue carries the one that failed; the schema may hold both.
      return `${name} must be ${expected}.`;
    }
    case 'invalid_value':
      return `${name} must be ${list((iss as { values?: unknown[] }).values ?? [])}.`;
    case 'invalid_format': {
      const format = (iss as { format?: string }).format;
      if (format === 'regex') return `${name} has characters or a form that is not allowed.`;
      return `${name} must be a valid ${format ?? 'value'}.`;
    }
    case 'not_multiple_of':
      return `${name} must be a multiple of ${String((iss as { divisor?: unknown }).divisor)}.`;
    case 'invalid_union':
      return `${name} must be ${expected}.`;
    case 'invalid_key':
      return `${name} has a field name that is not allowed.`;
    case 'invalid_element':
      return `${name} holds a value that is not allowed.`;
    default:
      return `${name} is not valid here: send ${expected}.`;
  }
}

// One place for every schema of the service: schemas that word their own messages keep them; the rest get these.
zodConfig({ customError: (issue) => issueMessage(issue) });

/** A lone (unpaired) UTF-16 surrogate: in `u` mode a well-formed pair is one code point, so only lone ones match. */
const LONE_SURROGATE = /\p{Cs}/u;
const MAX_UNICODE_ERRORS = 20;

/**
 * THE Unicode rule of the API, for every string of every request part (values and object keys, at any depth):
 * it must be well-formed (no lone surrogate — JSON's `"\ud800"` or a query's `%ED%A0%80` would otherwise reach
 * storage, logs and e-mail as text no other system can encode). Returns one error per offending string.
 */
export function malformedStrings(value: unknown, path: readonly PropertyKey[] = [], prefix?: string, found: FieldError[] = []): FieldError[] {
  if (found.length >= MAX_UNICODE_ERRORS) return found;
  const message = (at: readonly PropertyKey[], what: string) => ({
    path: joinPath(prefix, at),
    message: `${what} must be well-formed Unicode text (it contains a lone surrogate).`,
  });
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) found.push(message(path, joinPath(undefined, path) || 'The value'));
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => malformedStrings(item, [...path, i], prefix, found));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) found.push(message(path, `A field name in ${joinPath(prefix, path) || 'the body'}`));
      else malformedStrings(item, [...path, key], prefix, found);
    }
  }
  return found;
}

const WHERE = { body: 'body', query: 'query string', path: 'path' } as const;

/**
 * Parses `value` with a zod schema or throws a 400 listing every problem with its path. Every request part goes
 * through here, so the Unicode rule above is checked first, once, for all of them.
 */
export function validate<T>(schema: $ZodType<T>, value: unknown, part: 'body' | 'query' | 'path'): T {
  const prefix = part === 'body' ? undefined : part;
  const unicode = malformedStrings(value, [], prefix);
  if (unicode.length) throw new ValidationError(`The request ${WHERE[part]} is not well-formed Unicode.`, unicode);
  const result = safeParse(schema, value);
  if (result.success) return result.data;
  const errors = issuesToFieldErrors(result.error.issues, prefix);
  throw new ValidationError(`The request ${WHERE[part]} has ${errors.length} invalid field${errors.length === 1 ? '' : 's'}.`, errors);
}
