import { MalformedRequest, PayloadTooLarge } from '#shared/http/errors.ts';

/** API.md: request bodies are at most 1 MB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Keys refused anywhere in a body: they are how prototype pollution travels, and no schema of ours uses them. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function reviver(key: string, value: unknown): unknown {
  if (FORBIDDEN_KEYS.has(key)) throw new MalformedRequest(`The key "${key}" is not allowed.`);
  return value;
}

/** The raw body text of an API Gateway event (decoding base64). */
export function rawBody(body: string | undefined, isBase64Encoded: boolean | undefined): string {
  if (!body) return '';
  return isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
}

/**
 * Parses a JSON object body: too large → 413; empty, malformed, not an object, or with a forbidden key → 400.
 */
export function parseJsonObject(text: string, maxBytes = MAX_BODY_BYTES): Record<string, unknown> {
  if (Buffer.byteLength(text, 'utf8') > maxBytes) throw new PayloadTooLarge(maxBytes);
  if (text.trim() === '') throw new MalformedRequest('A JSON object body is required.');
  let value: unknown;
  try {
    value = JSON.parse(text, reviver);
  } catch (error) {
    if (error instanceof MalformedRequest) throw error;
    throw new MalformedRequest('The body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new MalformedRequest('The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}
