/**
 * What keeps a running sync obedient to the people who own the connection: a pause or a DELETE stops it within one
 * provider request, and its writes to the connection never undo a change made meanwhile.
 * - `check()` reads the connection again (strongly consistent) and throws `SyncStopped` when it is gone, paused, or
 *   no longer at the version (`updatedAt`) the sync read: called before every provider request and between slices.
 * - `write(fields)` writes the sync's own fields to the connection only if it still exists, unpaused, at that version
 *   (else `SyncStopped`); an `updatedAt` it writes is never earlier than the one it replaces.
 * - `stop()` drops what the sync holds of the connection (its sealed and opened admin key go with the client).
 */
import { getConnection, setConnectionFields, type Connection } from '#shared/db/connections.ts';

/** The connection was deleted, paused or changed while the sync ran: the sync ends here, writing nothing more to it. */
export class SyncStopped extends Error {
  override name = 'SyncStopped';
  constructor(readonly reason: 'deleted' | 'paused' | 'changed') {
    super(`the connection was ${reason} during the sync`);
  }
}

export class SyncGuard {
  private version: string;
  private stopped: SyncStopped | undefined;

  constructor(private readonly conn: Pick<Connection, 'accountId' | 'id' | 'status' | 'updatedAt'>) {
    this.version = conn.updatedAt;
  }

  /** Throws `SyncStopped` when the connection is gone, paused or at another version than the sync's. */
  async check(): Promise<void> {
    if (this.stopped) throw this.stopped;
    const now = await getConnection(this.conn.accountId, this.conn.id, true);
    const reason = !now ? 'deleted' : now.status === 'paused' ? 'paused' : now.updatedAt !== this.version ? 'changed' : undefined;
    if (reason) throw (this.stopped = new SyncStopped(reason));
  }

  /** An `updatedAt` for a write now: the clock, or 1 ms past the version it replaces if the clock is behind it. */
  nextUpdatedAt(now = new Date()): string {
    const at = now.toISOString();
    return at > this.version ? at : new Date(Date.parse(this.version) + 1).toISOString();
  }

  /** Writes the sync's fields, conditioned on the connection existing, unpaused, at the version read. */
  async write(fields: Partial<Connection>): Promise<void> {
    if (this.stopped) throw this.stopped;
    const next = fields.updatedAt !== undefined ? { ...fields, updatedAt: fields.updatedAt > this.version ? fields.updatedAt : this.nextUpdatedAt() } : fields;
    if (!(await setConnectionFields(this.conn, next, { updatedAt: this.version }))) {
      await this.check();
      throw (this.stopped = new SyncStopped('changed'));
    }
    if (next.updatedAt !== undefined) this.version = next.updatedAt;
  }
}
