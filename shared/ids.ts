import { randomBytes } from 'node:crypto';

/** Crockford's base 32, the alphabet of a ULID (https://github.com/ulid/spec). */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = 0;
let lastRandom = '';

/**
 * A monotonic ULID: 10 characters of the millisecond, 16 of randomness (80 bits). An id made in the same millisecond
 * as the last (or with the clock behind it) takes the last one's time and its randomness plus one, so ids made in one
 * process still sort in the order they were made (newest-first lists rely on it): the spec's monotonic generator.
 */
function ulid(): string {
  const now = Date.now();
  if (now <= lastTime) {
    lastRandom = incremented(lastRandom);
  } else {
    lastTime = now;
    // 256 is a multiple of 32: each byte's low five bits are a uniform character.
    lastRandom = Array.from(randomBytes(16), (byte) => CROCKFORD[byte & 31]).join('');
  }
  let time = '';
  for (let t = lastTime, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  return time + lastRandom;
}

function incremented(text: string): string {
  const chars = [...text];
  for (let i = chars.length - 1; i >= 0; i--) {
    const at = CROCKFORD.indexOf(chars[i]!);
    if (at < CROCKFORD.length - 1) {
      chars[i] = CROCKFORD[at + 1]!;
      return chars.join('');
    }
    chars[i] = CROCKFORD[0]!;
  }
  throw new Error('ULID: the randomness of one millisecond is used up.');
}

/** Public id prefixes (docs/api.md: `br_`, `usr_`, `bud_`, `rul_`, `alt_`, `ink_` + ULID). */
export const ID_PREFIX = {
  account: 'br',
  user: 'usr',
  budget: 'bud',
  rule: 'rul',
  alert: 'alt',
  ingestKey: 'ink',
  invitation: 'inv',
  export: 'exp',
  connection: 'con',
  action: 'act',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${ulid()}`;
}

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
const patterns = Object.fromEntries(
  Object.entries(ID_PREFIX).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}_${ULID}$`)]),
) as Record<IdKind, RegExp>;

export function isId(kind: IdKind, value: string): boolean {
  return patterns[kind].test(value);
}

/**
 * A queue message's body `{<field>: <id>, …}` with exactly the ids `fields` names, each well formed (`accountId` an
 * account id, …); undefined for anything else. Extra fields are dropped.
 */
export function parseIdMessage<F extends string>(body: string, fields: Record<F, IdKind>): Record<F, string> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const out = {} as Record<F, string>;
  for (const [field, kind] of Object.entries(fields) as [F, IdKind][]) {
    const id = (value as Record<string, unknown>)[field];
    if (typeof id !== 'string' || !isId(kind, id)) return undefined;
    out[field] = id;
  }
  return out;
}
