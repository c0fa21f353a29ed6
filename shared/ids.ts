import { monotonicFactory } from 'ulid';

/** Monotonic: ids made in the same millisecond still sort in the order they were made (newest-first lists rely on it). */
const ulid = monotonicFactory();

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
