/**
 * A connection's keys as Burnrate holds them: the key hash of a provider key, the attributes a sync sets on its key
 * item (name, project, provider status, hint) and when the provider last saw it in use.
 */
import { createHash } from 'node:crypto';
// Named, static: a dynamic import() of the package would bundle all of it (every command, the aggregated clients).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName, type Item } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import type { Connection } from '#shared/db/connections.ts';
import { UNATTRIBUTED, type CellChange } from '#shared/connections/diff.ts';
import type { ProviderKey } from '#shared/connections/model.ts';

/** How people read the key of usage without an API key. */
export const UNATTRIBUTED_NAME = 'No API key (Console, playground)';

/** The key hash of a provider key: SHA-256 of `<provider>:<key id>` (`<provider>:unattributed` for usage without one). */
export const connectionKeyHash = (provider: string, keyId: string | null) => createHash('sha256').update(`${provider}:${keyId ?? UNATTRIBUTED}`).digest('hex');

export type KeyAttributes = Record<string, unknown>;

/** The key item's attributes a connection sets (source, provider name, project, status, the redacted value as hint). */
export function keyAttributes(connection: Pick<Connection, 'id'>, keyId: string | null, listed: ProviderKey | undefined, known?: Item): KeyAttributes {
  if (keyId === null) {
    return { source: 'connection', connectionId: connection.id, name: UNATTRIBUTED_NAME, providerKeyId: null, project: null, providerStatus: null };
  }
  if (!listed) {
    // Usage of a key the inventory no longer lists: deleted; its history stays, with what we knew of it.
    return {
      source: 'connection',
      connectionId: connection.id,
      name: (known?.name as string | null | undefined) ?? null,
      providerKeyId: keyId,
      project: (known?.project as unknown) ?? null,
      providerStatus: 'deleted',
      ...(typeof known?.hint === 'string' ? { hint: known.hint } : {}),
    };
  }
  return {
    source: 'connection',
    connectionId: connection.id,
    name: listed.name,
    providerKeyId: keyId,
    project: listed.project,
    providerStatus: listed.status,
    ...(listed.redactedValue ? { hint: listed.redactedValue } : {}),
    ...(listed.limitUsd !== undefined ? { providerLimitUsd: listed.limitUsd } : {}),
  };
}

/** JSON with object keys sorted (a stored map comes back in any order). */
const canonical = (v: unknown): string =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`
    : JSON.stringify(v ?? null);

export const sameAttributes = (attrs: KeyAttributes, item: Item | undefined) =>
  item !== undefined && Object.entries(attrs).every(([k, v]) => canonical(item[k]) === canonical(v));

/** The latest UTC day with usage of each key (by hash) among a batch's cells as the provider reports them now. */
export function latestUsageDays(provider: string, batch: CellChange[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of batch) {
    if (c.cell.requests <= 0 && c.cell.inputTokens <= 0 && c.cell.outputTokens <= 0) continue;
    const hash = connectionKeyHash(provider, c.cell.keyId);
    const seen = out.get(hash);
    if (seen === undefined || c.cell.date > seen) out.set(hash, c.cell.date);
  }
  return out;
}

/**
 * A connection key's `lastSeenAt`: the midnight (UTC) of the latest day the provider reported usage of it (its usage
 * comes per day), never earlier than what the key item holds. A key item's value that is not a midnight was a sync's
 * time (or the moment a key without usage was found) and gives way to the first usage day seen. A key without usage
 * keeps what it has, or (new) the moment it is found.
 */
export function lastSeenWith(known: Item | undefined, usedOn: string | undefined, now: Date): string {
  const held = typeof known?.lastSeenAt === 'string' ? known.lastSeenAt : undefined;
  const heldDay = held?.endsWith('T00:00:00.000Z') ? held : undefined;
  const used = usedOn === undefined ? undefined : `${usedOn}T00:00:00.000Z`;
  if (used !== undefined) return heldDay !== undefined && heldDay > used ? heldDay : used;
  return held ?? now.toISOString();
}

export async function updateKeyAttributes(accountId: string, keyHash: string, attrs: KeyAttributes): Promise<void> {
  const entries = Object.entries(attrs);
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.providerKey(accountId, keyHash),
      UpdateExpression: `SET ${entries.map((_, i) => `#a${i} = :a${i}`).join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#a${i}`, k])),
      ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:a${i}`, v])),
    }),
  );
}