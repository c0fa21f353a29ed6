/**
 * The scheduler without Scan: every connection that is not paused sits in the sparse index partition
 * `CONNECTIONS#<shard>` (gsi2) under its next sync time. The dispatcher Queries the 16 shards for connections due by
 * now and queues one message per connection; the sync sets the next time when it ends (and the lease keeps a
 * connection queued twice from syncing twice at once).
 */
import { dueConnections, SHARDS } from '#shared/db/connections.ts';
import { queueSyncs } from '#shared/connections/queue.ts';

/** Queues every due connection; returns how many. */
export async function dispatchDue(now = new Date(), perShard = 100): Promise<number> {
  const due = (await Promise.all(Array.from({ length: SHARDS }, (_, shard) => dueConnections(shard, now, perShard)))).flat();
  await queueSyncs(due);
  return due.length;
}
