import type { $ZodIssue, $ZodType } from 'zod/v4/core';
import { safeParse } from 'zod/mini';
import { ValidationError, type FieldError } from '#shared/http/errors.ts';

/** `events.3.keyHash`; the request part (`query`, `path`) prefixes non-body paths. */
function joinPath(prefix: string | undefined, path: readonly PropertyKey[]): string {
  const parts = [...(prefix ? [prefix] : []), ...path.map(String)];
  return parts.join('.');
}

export function issuesToFieldErrors(issues: readonly $ZodIssue[], prefix?: string): FieldError[] {
  return issues.flatMap((issue): FieldError[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: joinPath(prefix, [...issue.path, key]), message: 'Unknown field.' }));
    }
    return [{ path: joinPath(prefix, issue.path), message: issue.message }];
  });
}

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
