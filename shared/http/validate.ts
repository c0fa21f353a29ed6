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

/** Parses `value` with a zod schema or throws a 400 listing every problem with its path. */
export function validate<T>(schema: $ZodType<T>, value: unknown, part: 'body' | 'query' | 'path'): T {
  const result = safeParse(schema, value);
  if (result.success) return result.data;
  const errors = issuesToFieldErrors(result.error.issues, part === 'body' ? undefined : part);
  const where = part === 'body' ? 'body' : part === 'query' ? 'query string' : 'path';
  throw new ValidationError(`The request ${where} has ${errors.length} invalid field${errors.length === 1 ? '' : 's'}.`, errors);
}
