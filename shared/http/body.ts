import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { MalformedRequest, PayloadTooLarge, UnsupportedMediaType } from '#shared/http/errors.ts';

/** docs/api.md: request bodies are at most 1 MB. */
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

/** `application/json` or any `application/*+json`, parameters (charset) ignored. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const headers = event.headers ?? {};
  return headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
}

/**
 * The JSON object body of an operation that takes one: too large → 413; empty → 400 (or `{}` when the body is
 * optional); not JSON by its Content-Type → 415 problem+json; then {@link parseJsonObject}.
 */
export function jsonBody(event: APIGatewayProxyEventV2, maxBytes: number, optional = false): Record<string, unknown> {
  const text = rawBody(event.body, event.isBase64Encoded);
  if (Buffer.byteLength(text, 'utf8') > maxBytes) throw new PayloadTooLarge(maxBytes);
  if (text.trim() === '') {
    if (optional) return {};
    throw new MalformedRequest('A JSON object body is required.');
  }
  const contentType = header(event, 'content-type');
  if (!isJsonMediaType(contentType)) throw new UnsupportedMediaType(contentType);
  return parseJsonObject(text, maxBytes);
}

/**
 * An operation without a body: none, or the empty object `{}` that many clients send anyway, is accepted; any
 * other body is refused (400), never ignored silently. Too large → 413.
 */
export function noBody(event: APIGatewayProxyEventV2, maxBytes: number): void {
  const text = rawBody(event.body, event.isBase64Encoded);
  if (Buffer.byteLength(text, 'utf8') > maxBytes) throw new PayloadTooLarge(maxBytes);
  if (text.trim() === '') return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) return;
  throw new MalformedRequest('This operation takes no body: send none, or {}.');
}
