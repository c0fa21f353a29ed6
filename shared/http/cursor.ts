/**
 * Opaque pagination cursors: the position in a list, bound to the account and the list, signed with HMAC-SHA256.
 * A cursor that was tampered with, forged, or issued to another account or another list is a 400 —
 * and since every Query is scoped by the caller's own partition, it could never reach another account's data anyway.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { config } from '#shared/config.ts';
import { ValidationError } from '#shared/http/errors.ts';

interface Payload {
  a: string; // account
  l: string; // list
  p: unknown; // position
}

function sign(data: string): Buffer {
  const secret = config().cursorSecret;
  if (!secret) throw new Error('CURSOR_SECRET is not set');
  return createHmac('sha256', secret).update(data).digest();
}

export function encodeCursor(accountId: string, list: string, position: unknown): string {
  const data = Buffer.from(JSON.stringify({ a: accountId, l: list, p: position } satisfies Payload)).toString('base64url');
  return `${data}.${sign(data).toString('base64url')}`;
}

const invalid = () => new ValidationError('The cursor is not valid for this list.', [{ path: 'query.cursor', message: 'Invalid cursor.' }]);

/** The position encoded in `cursor`, or a 400 when it is not a cursor this service issued for this account and list. */
export function decodeCursor(cursor: string, accountId: string, list: string): unknown {
  const [data, mac, ...rest] = cursor.split('.');
  if (!data || !mac || rest.length > 0 || cursor.length > 2048) throw invalid();
  const expected = sign(data);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  let payload: Payload;
  try {
    payload = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as Payload;
  } catch {
    throw invalid();
  }
  if (payload.a !== accountId || payload.l !== list) throw invalid();
  return payload.p;
}

/**
 * The DynamoDB start key a list's cursor carries, checked to be exactly the key of one of the account's own items:
 * `keyOf(id)` with `id` the part of its sort key after `skPrefix`, and `id` a valid id of its kind. Else a 400.
 */
export function itemStartKey(
  cursor: string | undefined,
  accountId: string,
  list: string,
  skPrefix: string,
  isValidId: (id: string) => boolean,
  keyOf: (id: string) => { pk: string; sk: string },
): Record<string, unknown> | undefined {
  if (!cursor) return undefined;
  const key = decodeCursor(cursor, accountId, list) as Record<string, unknown> | null;
  const id = typeof key?.sk === 'string' && key.sk.startsWith(skPrefix) ? key.sk.slice(skPrefix.length) : '';
  const expected = keyOf(id);
  if (!isValidId(id) || key?.pk !== expected.pk || key.sk !== expected.sk) throw invalid();
  return key!;
}
