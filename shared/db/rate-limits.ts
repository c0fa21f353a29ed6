/**
 * Request counters of the abuse limits (shared/auth/limits.ts): one small item per limit and subject
 * (`LIMIT#<kind>#<subject>`) holding the current window — `hits` and `windowEnd` (epoch ms) — with a TTL at the
 * window's end. Every change is ONE conditional write, so the count is exact across all Lambda containers and
 * concurrent requests: a hit is counted only while the window is live and below the maximum; an expired (or
 * absent) window is replaced by a fresh one that starts with this hit. Nothing is held in memory.
 *
 * A window starts with its first hit and lasts `windowMs` (not aligned to the clock hour): "at most N in a window"
 * then means exactly that, wherever the requests fall on the clock.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client.ts';
import type { Key } from '#shared/db/keys.ts';

export type HitResult = { allowed: true; hits: number; windowEnd: number } | { allowed: false; retryAfterSeconds: number };

const isConditionFailure = (error: unknown): error is Error & { Item?: Record<string, unknown> } =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** A number attribute of an item from a condition failure (raw `{N: "3"}`) or the document client (`3`). */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (value && typeof value === 'object' && 'N' in value) return Number((value as { N: string }).N);
  return undefined;
}

/** Seconds until `windowEnd`, rounded up, at least 1. */
export const retryAfter = (windowEnd: number, now: number) => Math.max(1, Math.ceil((windowEnd - now) / 1000));

/**
 * Counts one hit against `max` per `windowMs`; refused (nothing written) when the live window is full.
 * Normally one UpdateItem; the first hit of a window takes a second (conditional) PutItem.
 */
export async function hit(key: Key, max: number, windowMs: number, now = new Date()): Promise<HitResult> {
  const t = now.getTime();
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      const res = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: 'ADD hits :one',
          ConditionExpression: 'windowEnd > :now AND hits < :max',
          ExpressionAttributeValues: { ':one': 1, ':now': t, ':max': max },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { allowed: true, hits: Number(res.Attributes?.hits), windowEnd: Number(res.Attributes?.windowEnd) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    // No live window with room: start a new one, unless a live one exists (then it is full).
    const windowEnd = t + windowMs;
    try {
      await db().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...key, type: 'RateLimit', hits: 1, windowEnd, expiresAt: Math.ceil(windowEnd / 1000) },
          ConditionExpression: 'attribute_not_exists(pk) OR windowEnd <= :now',
          ExpressionAttributeValues: { ':now': t },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { allowed: true, hits: 1, windowEnd };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const liveEnd = numberOf(error.Item?.windowEnd);
      const hits = numberOf(error.Item?.hits);
      // Full: refused. Otherwise another request started the window between our two writes: count in it.
      if (liveEnd !== undefined && hits !== undefined && hits >= max) return { allowed: false, retryAfterSeconds: retryAfter(liveEnd, t) };
    }
  }
  throw new Error(`rate limit ${key.pk}: the window kept changing under concurrent requests`);
}

/**
 * Gives one hit back to the window it was counted in (a login attempt that succeeded is not a failed login); a
 * window that has been replaced since is left alone.
 */
export async function release(key: Key, windowEnd: number): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'ADD hits :minus',
        ConditionExpression: 'windowEnd = :end AND hits > :zero',
        ExpressionAttributeValues: { ':minus': -1, ':end': windowEnd, ':zero': 0 },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
