/**
 * One sync of one connection (API.md part 4 "What a sync reads and how it counts"): under the connection's lease,
 * read the provider's key inventory and, slice by slice of UTC days, its usage and billed costs; diff each slice
 * against the import snapshot and write the differences through the chunk writer's builders, each transaction
 * conditioned on the snapshot cells it replaces. A slice finished is a cursor saved: a backfill that runs out of
 * time resumes there with the next run.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Item } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { tableName } from '#shared/db/client.ts';
import { listProviderKeys } from '#shared/db/discovered-keys.ts';
import { getAccount, type Account } from '#shared/db/accounts.ts';
import { trackedRequests } from '#shared/db/usage.ts';
import { listOwnPrices } from '#shared/db/prices.ts';
import { recentDays } from '#shared/db/rolling.ts';
import { acquireLease, getConnection, loadCells, loadReconDays, releaseLease, setBilledDays, setConnectionFields, toStoredCell, type Connection } from '#shared/db/connections.ts';
import { aggregateItems, compose, planCounterItems, writeActions, type Built } from '#shared/db/usage-writes.ts';
import { addContribution, contributionCost, emptyAggregates, keyUpdateOf, MAX_ACTIONS, type Aggregates, type ChunkContext } from '#shared/ingest/chunks.ts';
import { currentPeriod, type Period } from '#shared/billing/plans.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { priceId, priceUsage, type OwnPriceLookup } from '#shared/pricing/pricing.ts';
import { addDays, isoDate, isoMonth } from '#shared/time/periods.ts';
import { logger } from '#shared/http/logger.ts';
import { evaluateAfterIngest, type Discovered } from '#shared/alerting/evaluate.ts';
import { raisePlanLimitAlert, type PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import { providerClient, type ProviderClient } from '#shared/connections/client.ts';
import { cellId, diffCells, UNATTRIBUTED, type CellChange, type StoredCell } from '#shared/connections/diff.ts';
import { ProviderBadResponse, ProviderRefused, ProviderUnavailable, type ProviderHttpOptions } from '#shared/connections/http.ts';
import type { Provider, ProviderKey } from '#shared/connections/model.ts';
import { openSecret } from '#shared/connections/secrets.ts';
import { raiseConnectionErrorAlert } from '#shared/connections/alerts.ts';
import { SyncGuard, SyncStopped } from '#shared/connections/sync-guard.ts';

/** How people read the key of usage without an API key. */
export const UNATTRIBUTED_NAME = 'No API key (Console, playground)';
/** Days a later sync reads again before today (providers revise recent buckets). */
export const REREAD_DAYS = 3;

/** The key hash of a provider key: SHA-256 of `<provider>:<key id>` (`<provider>:unattributed` for usage without one). */
export const connectionKeyHash = (provider: string, keyId: string | null) => createHash('sha256').update(`${provider}:${keyId ?? UNATTRIBUTED}`).digest('hex');

export interface SyncOptions {
  now?: Date;
  /** Stop starting new slices after this many ms (the cursor keeps the place). @default 240000 */
  budgetMs?: number;
  /** Days per slice (one request sequence per slice). @default 7 */
  sliceDays?: number;
  /** How long the lease holds. @default 300000 */
  leaseMs?: number;
  /** The interval to the next scheduled sync. @default env CONNECTOR_SYNC_INTERVAL_MS, else 15 minutes */
  intervalMs?: number;
  http?: ProviderHttpOptions;
}

export interface SyncResult {
  /** `stopped`: the connection was paused, deleted or changed while the sync ran (sync-guard.ts). */
  status: 'done' | 'partial' | 'busy' | 'skipped' | 'refused' | 'unavailable' | 'stopped';
  /** Snapshot cells changed (each one write of its cell plus the aggregates it moves). */
  cellsChanged: number;
  transactions: number;
  keysCreated: number;
  keysUpdated: number;
  limitsReached: PlanLimitReached[];
}

export const syncIntervalMs = (): number => Number(process.env.CONNECTOR_SYNC_INTERVAL_MS || 15 * 60_000);

type KeyAttributes = Record<string, unknown>;

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
  };
}

/** JSON with object keys sorted (a stored map comes back in any order). */
const canonical = (v: unknown): string =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`
    : JSON.stringify(v ?? null);

const sameAttributes = (attrs: KeyAttributes, item: Item | undefined) =>
  item !== undefined && Object.entries(attrs).every(([k, v]) => canonical(item[k]) === canonical(v));

/** The account's context of one sync: plan period and limits in force, room left, known keys, own prices. */
interface ImportContext {
  account: Account;
  period: Period;
  limits: { trackedRequests: number; keys: number };
  room: { requests: number; keys: number };
  knownKeys: Map<string, Item>;
  ownPrices: OwnPriceLookup;
  chunkContext: ChunkContext & { knownKeys: Set<string> };
}

async function loadContext(accountId: string, now: Date): Promise<ImportContext | undefined> {
  const [account, keyItems, prices] = await Promise.all([getAccount(accountId, true), listProviderKeys(accountId), listOwnPrices(accountId)]);
  if (!account) return undefined;
  const period = currentPeriod(account, now);
  const limits = limitsInForce(account, now);
  const used = await trackedRequests(accountId, period.start, true);
  const knownKeys = new Map(keyItems.map((item) => [item.keyHash as string, item]));
  return {
    account,
    period,
    limits,
    room: { requests: limits.trackedRequests - used, keys: limits.keys - (account.keyCount ?? 0) },
    knownKeys,
    ownPrices: new Map(prices.map((p) => [priceId(p.provider, p.model), p])),
    chunkContext: { knownKeys: new Set(knownKeys.keys()), today: isoDate(now), month: isoMonth(now), recentDays: new Set(recentDays(isoDate(now))) },
  };
}

/** Family: the snapshot cells a transaction replaces, each conditioned on the version it read (or on not existing). */
export function snapshotCellItems(accountId: string, provider: string, changes: readonly CellChange[]): Built {
  const out: Built = { actions: [], meaning: [] };
  for (const c of changes) {
    const cell = c.cell;
    const values: Record<string, unknown> = {
      ':date': cell.date,
      ':keyId': cell.keyId ?? UNATTRIBUTED,
      ':model': cell.model,
      ':tier': cell.tier,
      ':projectId': cell.projectId,
      ':requests': cell.requests,
      ':inputTokens': cell.inputTokens,
      ':cachedInputTokens': cell.cachedInputTokens,
      ':cacheWriteInputTokens': cell.cacheWriteInputTokens,
      ':cacheWrite1hInputTokens': cell.cacheWrite1hInputTokens,
      ':outputTokens': cell.outputTokens,
      ':costMicros': c.costMicros,
      ':next': (c.previous?.version ?? 0) + 1,
    };
    if (c.previous) values[':v'] = c.previous.version;
    out.actions.push({
      Update: {
        TableName: tableName(),
        Key: keys.importCell(accountId, provider, cell.date, cell.keyId ?? UNATTRIBUTED, cell.model, cell.tier),
        UpdateExpression:
          'SET #date = :date, keyId = :keyId, model = :model, tier = :tier, projectId = :projectId, requests = :requests, inputTokens = :inputTokens, ' +
          'cachedInputTokens = :cachedInputTokens, cacheWriteInputTokens = :cacheWriteInputTokens, cacheWrite1hInputTokens = :cacheWrite1hInputTokens, ' +
          'outputTokens = :outputTokens, costMicros = :costMicros, v = :next',
        ConditionExpression: c.previous ? 'v = :v' : 'attribute_not_exists(pk)',
        ExpressionAttributeNames: { '#date': 'date' },
        ExpressionAttributeValues: values,
      },
    });
    out.meaning.push({ cell: c.id });
  }
  return out;
}

/** Family: each day's computed cost of the connection's keys (reconciliation), moved by the transaction's differences. */
export function reconDayItems(accountId: string, provider: string, costByDay: ReadonlyMap<string, bigint>): Built {
  const out: Built = { actions: [], meaning: [] };
  for (const [date, delta] of costByDay) {
    out.actions.push({
      Update: {
        TableName: tableName(),
        Key: keys.importDay(accountId, provider, date),
        UpdateExpression: 'SET #date = :date ADD computedMicros :d',
        ExpressionAttributeNames: { '#date': 'date' },
        ExpressionAttributeValues: { ':date': date, ':d': delta },
      },
    });
    out.meaning.push(null);
  }
  return out;
}

class SliceConflict extends Error {
  override name = 'SliceConflict';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sync in progress: the connection, the provider client, the account's context and what happened so far. */
class Importer {
  result: SyncResult = { status: 'done', cellsChanged: 0, transactions: 0, keysCreated: 0, keysUpdated: 0, limitsReached: [] };
  discovered: Discovered[] = [];
  private limitsReached = new Set<PlanLimitReached>();
  /** The first day whose usage a plan limit held back: the next sync reads again from there. */
  earliestRefused: string | undefined;
  private inventory = new Map<string, ProviderKey>();

  constructor(
    private readonly conn: Connection,
    private readonly client: ProviderClient,
    private readonly ctx: ImportContext,
    private readonly now: Date,
  ) {}

  get provider(): Provider {
    return this.conn.provider;
  }

  async readInventory(): Promise<void> {
    for (const k of await this.client.listKeys()) this.inventory.set(k.id, k);
  }

  private attributesOf(keyId: string | null): KeyAttributes {
    const hash = connectionKeyHash(this.provider, keyId);
    return keyAttributes(this.conn, keyId, keyId === null ? undefined : this.inventory.get(keyId), this.ctx.knownKeys.get(hash));
  }

  private price = (cell: CellChange['cell']) => {
    const cost = priceUsage({ ...cell, provider: this.provider, tier: cell.tier === 'batch' ? 'batch' : 'standard' }, this.ctx.ownPrices);
    return { costMicros: BigInt(cost.costMicros), priced: cost.priced };
  };

  /** Reads the days from…to (inclusive) and writes what changed; re-diffs when another writer changed a cell first. */
  async importSlice(from: string, to: string): Promise<void> {
    const toExclusive = addDays(to, 1);
    const [read, billed] = await Promise.all([this.client.readUsage(from, toExclusive), this.client.readBilled(from, toExclusive)]);
    for (let attempt = 0; ; attempt++) {
      const stored = new Map<string, StoredCell>((await loadCells(this.conn.accountId, this.provider, from, to)).map((item) => {
        const cell = toStoredCell(item);
        return [cellId(cell), cell];
      }));
      const changes = diffCells(read, stored, this.price);
      if (changes.length === 0) break;
      try {
        await this.writeChanges(changes);
        break;
      } catch (error) {
        if (!(error instanceof SliceConflict) || attempt >= 5) throw error;
        await sleep(Math.random() * 50 * 2 ** attempt);
      }
    }
    const recorded = new Map((await loadReconDays(this.conn.accountId, this.provider, from, to)).map((d) => [d.date, d.billedMicros]));
    // One figure per day (the client sums a day's lines), written only where it changed.
    const changed = new Map(billed.filter((day) => day.date >= from && day.date <= to && recorded.get(day.date) !== day.billedMicros).map((d) => [d.date, d]));
    await setBilledDays(this.conn.accountId, this.provider, [...changed.values()]);
  }

  /** Fits the changes under the plan's limits (the rest waits for room), then writes them in transactions of ≤ 100 actions. */
  private async writeChanges(changes: CellChange[]): Promise<void> {
    const admitted: CellChange[] = [];
    const admittedNewKeys = new Set<string>();
    const ordered = [...changes].sort((a, b) => (a.cell.date < b.cell.date ? -1 : a.cell.date > b.cell.date ? 1 : a.id < b.id ? -1 : 1));
    for (const c of ordered) {
      const hash = connectionKeyHash(this.provider, c.cell.keyId);
      const isNewKey = !this.ctx.chunkContext.knownKeys.has(hash) && !admittedNewKeys.has(hash);
      if (isNewKey && this.ctx.room.keys <= 0) {
        this.refuse('keys', c.cell.date);
        continue;
      }
      const requests = Math.max(0, c.delta.requests);
      if (requests > this.ctx.room.requests) {
        this.refuse('trackedRequests', c.cell.date);
        continue;
      }
      if (isNewKey) {
        admittedNewKeys.add(hash);
        this.ctx.room.keys -= 1;
      }
      this.ctx.room.requests -= requests;
      admitted.push(c);
    }
    // Clustered by key, then day: a transaction touches few key items.
    admitted.sort((a, b) => {
      const ka = connectionKeyHash(this.provider, a.cell.keyId);
      const kb = connectionKeyHash(this.provider, b.cell.keyId);
      return ka < kb ? -1 : ka > kb ? 1 : a.id < b.id ? -1 : 1;
    });
    let batch: CellChange[] = [];
    let aggregates = emptyAggregates();
    let days = new Set<string>();
    const flush = async () => {
      if (batch.length > 0) await this.writeBatch(batch, aggregates);
      batch = [];
      aggregates = emptyAggregates();
      days = new Set();
    };
    for (const c of admitted) {
      const contribution = this.contributionOf(c);
      const actions = 1 + contributionCost(aggregates, contribution, this.ctx.chunkContext) + (days.has(c.cell.date) ? 0 : 1);
      if (batch.length > 0 && batch.length + aggregateCount(aggregates) + days.size + 2 + actions > MAX_ACTIONS) await flush();
      batch.push(c);
      days.add(c.cell.date);
      addContribution(aggregates, contribution, this.ctx.chunkContext);
    }
    await flush();
  }

  private refuse(limit: PlanLimitReached, date: string): void {
    this.limitsReached.add(limit);
    if (this.earliestRefused === undefined || date < this.earliestRefused) this.earliestRefused = date;
  }

  private contributionOf(c: CellChange) {
    return {
      keyHash: connectionKeyHash(this.provider, c.cell.keyId),
      date: c.cell.date,
      provider: this.provider,
      model: c.cell.model,
      sums: {
        costMicros: c.costDelta,
        requests: BigInt(c.delta.requests),
        inputTokens: BigInt(c.delta.inputTokens),
        cachedInputTokens: BigInt(c.delta.cachedInputTokens),
        outputTokens: BigInt(c.delta.outputTokens),
        unpricedRequests: c.priced ? 0n : BigInt(c.delta.requests),
      },
    };
  }

  /** Key updates of a batch: attributes for keys new to the account or whose provider metadata changed. */
  private decorateKeys(aggregates: Aggregates): void {
    for (const key of aggregates.keys.values()) {
      const keyId = this.keyIdOf(key.keyHash);
      const attrs = this.attributesOf(keyId === undefined ? null : keyId);
      if (key.isNew || !sameAttributes(attrs, this.ctx.knownKeys.get(key.keyHash))) key.attributes = attrs;
    }
  }

  private hashToKeyId = new Map<string, string | null>();
  private keyIdOf(hash: string): string | null | undefined {
    return this.hashToKeyId.get(hash);
  }

  private async writeBatch(batch: CellChange[], aggregates: Aggregates): Promise<void> {
    for (const c of batch) this.hashToKeyId.set(connectionKeyHash(this.provider, c.cell.keyId), c.cell.keyId);
    this.decorateKeys(aggregates);
    const costByDay = new Map<string, bigint>();
    for (const c of batch) costByDay.set(c.cell.date, (costByDay.get(c.cell.date) ?? 0n) + c.costDelta);
    const requests = batch.reduce((n, c) => n + Math.max(0, c.delta.requests), 0);
    const { accountId } = this.conn;
    for (let attempt = 0; ; attempt++) {
      const outcome = await writeActions(
        compose(
          snapshotCellItems(accountId, this.provider, batch),
          aggregateItems(accountId, aggregates, { now: this.now, today: this.ctx.chunkContext.today, month: this.ctx.chunkContext.month }),
          reconDayItems(accountId, this.provider, costByDay),
          planCounterItems(accountId, this.ctx.period.start, requests, aggregates.newKeys, this.ctx.limits),
        ),
      );
      if (outcome.status === 'written') {
        this.result.transactions += 1;
        this.result.cellsChanged += batch.length;
        for (const key of aggregates.keys.values()) {
          if (key.isNew) {
            this.result.keysCreated += 1;
            this.ctx.chunkContext.knownKeys.add(key.keyHash);
            this.discovered.push({ keyHash: key.keyHash, provider: this.provider, ...(typeof key.attributes?.name === 'string' ? { name: key.attributes.name } : {}) });
          }
          if (key.attributes) this.ctx.knownKeys.set(key.keyHash, { ...this.ctx.knownKeys.get(key.keyHash), keyHash: key.keyHash, ...key.attributes });
        }
        return;
      }
      if (outcome.status === 'conditions') {
        // Another sync changed a cell first, or created a key: read the snapshot again and diff anew.
        outcome.existingKeys.forEach((k) => this.ctx.chunkContext.knownKeys.add(k));
        throw new SliceConflict('snapshot changed');
      }
      if (outcome.status === 'limit') {
        // Another writer took the room (ingestion of another provider, a racing sync): nothing of this batch is imported now.
        this.limitsReached.add('keys');
        this.ctx.room = { requests: 0, keys: 0 };
        return;
      }
      if (outcome.status === 'ceiling') throw new ProviderBadResponse('The imported amounts would pass the money ceiling.');
      if (attempt >= 8) throw new Error('the sync could not write a batch after 8 attempts');
      await sleep(Math.random() * 25 * 2 ** attempt);
    }
  }

  /**
   * Keys the inventory lists that have no usage yet (created, within the key limit), provider metadata that changed
   * (name, status, project), and keys no longer listed (providerStatus `deleted`; their history stays).
   */
  async reconcileKeys(): Promise<void> {
    const { accountId } = this.conn;
    const fresh = emptyAggregates();
    const updates: { hash: string; attrs: KeyAttributes }[] = [];
    for (const [keyId] of this.inventory) {
      const hash = connectionKeyHash(this.provider, keyId);
      this.hashToKeyId.set(hash, keyId);
      const attrs = this.attributesOf(keyId);
      if (!this.ctx.chunkContext.knownKeys.has(hash)) {
        if (this.ctx.room.keys <= 0) {
          this.limitsReached.add('keys');
          continue;
        }
        this.ctx.room.keys -= 1;
        keyUpdateOf(fresh, hash, this.provider, this.ctx.chunkContext).attributes = attrs;
      } else if (!sameAttributes(attrs, this.ctx.knownKeys.get(hash))) updates.push({ hash, attrs });
    }
    for (const [hash, item] of this.ctx.knownKeys) {
      const keyId = item.providerKeyId;
      if (item.source !== 'connection' || item.provider !== this.provider || typeof keyId !== 'string' || this.inventory.has(keyId)) continue;
      const attrs = this.attributesOf(keyId);
      if (!sameAttributes(attrs, item)) updates.push({ hash, attrs });
    }
    // New keys in transactions of ≤ 98 (with the plan counters).
    const created = [...fresh.keys.values()];
    for (let i = 0; i < created.length; i += MAX_ACTIONS - 2) {
      const part = emptyAggregates();
      for (const key of created.slice(i, i + MAX_ACTIONS - 2)) part.keys.set(key.keyHash, key);
      part.newKeys = part.keys.size;
      await this.writeBatch([], part);
    }
    await Promise.all(
      updates.map(async ({ hash, attrs }) => {
        await updateKeyAttributes(accountId, hash, attrs);
        this.result.keysUpdated += 1;
        this.ctx.knownKeys.set(hash, { ...this.ctx.knownKeys.get(hash), ...attrs });
      }),
    );
  }

  get reached(): PlanLimitReached[] {
    return [...this.limitsReached];
  }
}

function aggregateCount(a: Aggregates): number {
  return a.keyDayModels.size + a.keys.size + a.days.size + a.months.size + a.dayModels.size + a.monthKeys.size + a.dayKeys.size;
}

async function updateKeyAttributes(accountId: string, keyHash: string, attrs: KeyAttributes): Promise<void> {
  const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db } = await import('#shared/db/client.ts');
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

/** The sentence `statusDetail` carries when a plan limit held usage back. */
export function limitDetail(reached: readonly PlanLimitReached[], limits: { trackedRequests: number; keys: number }): string {
  const names = reached.map((r) =>
    r === 'keys' ? `the plan's key limit (${limits.keys.toLocaleString('en-US')} keys)` : `the plan's tracked requests (${limits.trackedRequests.toLocaleString('en-US')} this period)`,
  );
  return `Not everything was imported: ${names.join(' and ')} reached. The rest is imported by a later sync once there is room (upgrade the plan).`;
}

/** The first day a sync reads: the backfill cursor, else the 3 days before today (and any days missed since the last success). */
export function firstDayToRead(conn: Pick<Connection, 'cursor' | 'lastSuccessAt' | 'importedFrom'>, today: string): string {
  if (conn.cursor) return conn.cursor;
  let from = addDays(today, -REREAD_DAYS);
  if (conn.lastSuccessAt) {
    const missed = addDays(conn.lastSuccessAt.slice(0, 10), -REREAD_DAYS);
    if (missed < from) from = missed;
  }
  return from < conn.importedFrom ? conn.importedFrom : from;
}

export async function syncConnection(accountId: string, connectionId: string, options: SyncOptions = {}): Promise<SyncResult> {
  const now = options.now ?? new Date();
  const started = Date.now();
  const skipped: SyncResult = { status: 'skipped', cellsChanged: 0, transactions: 0, keysCreated: 0, keysUpdated: 0, limitsReached: [] };
  let conn = await getConnection(accountId, connectionId, true);
  if (!conn || conn.status === 'paused') return skipped;
  const owner = randomUUID();
  if (!(await acquireLease(accountId, connectionId, owner, now, options.leaseMs ?? 300_000))) return { ...skipped, status: 'busy' };
  const intervalMs = options.intervalMs ?? syncIntervalMs();
  const nextSyncAt = new Date(now.getTime() + intervalMs).toISOString();
  const at = now.toISOString();
  // Every write to the connection is conditioned on it being unpaused at the version read under the lease (another
  // sync may have finished between the first read and the lease); every provider request (and slice) first checks
  // that it still is: a pause or DELETE stops the sync within one request.
  const leased = await getConnection(accountId, connectionId, true);
  if (!leased || leased.status === 'paused') {
    await releaseLease(accountId, connectionId, owner);
    return skipped;
  }
  conn = leased;
  const guard = new SyncGuard(conn);
  const http = { ...options.http, beforeRequest: () => guard.check() };
  try {
    const ctx = await loadContext(accountId, now);
    if (!ctx) return skipped;
    let importer: Importer | undefined;
    try {
      const adminKey = await openSecret(conn.secret, { accountId, connectionId });
      importer = new Importer(conn, providerClient(conn.provider, adminKey, http), ctx, now);
      await importer.readInventory();
      const today = ctx.chunkContext.today;
      const sliceDays = options.sliceDays ?? 7;
      let from = firstDayToRead(conn, today);
      while (from <= today) {
        const to = addDays(from, sliceDays - 1) < today ? addDays(from, sliceDays - 1) : today;
        await guard.check();
        await importer.importSlice(from, to);
        from = addDays(to, 1);
        if (from <= today && conn.cursor !== null && Date.now() - started > (options.budgetMs ?? 240_000)) {
          // Out of time mid-backfill: the next run (due now) starts at `from`.
          await guard.write({ cursor: from, lastSyncAt: at, nextSyncAt: at, updatedAt: guard.nextUpdatedAt() });
          return { ...importer.result, status: 'partial' };
        }
        if (conn.cursor !== null && from <= today) await guard.write({ cursor: from });
      }
      await importer.reconcileKeys();
      const reached = importer.reached;
      await guard.write({
        status: 'active',
        statusDetail: reached.length > 0 ? limitDetail(reached, ctx.limits) : null,
        // Usage a limit held back is read again from its first day by the next sync (imported once there is room).
        cursor: importer.earliestRefused ?? null,
        lastSyncAt: at,
        lastSuccessAt: at,
        nextSyncAt,
        updatedAt: guard.nextUpdatedAt(),
      });
      if (reached.length > 0) await raisePlanLimitAlert(accountId, ctx.account, ctx.period, reached, now);
      if (importer.result.cellsChanged > 0 || importer.result.keysCreated > 0) await evaluateAfterIngest(accountId, importer.discovered, now);
      return { ...importer.result, limitsReached: reached };
    } catch (error) {
      const partial = importer?.result ?? skipped;
      if (error instanceof SyncStopped) return { ...partial, status: 'stopped' };
      if (error instanceof ProviderRefused) {
        const detail = `${conn.provider === 'openai' ? 'OpenAI' : 'Anthropic'} refused the admin key (${error.status}): ${error.providerMessage}. Create a new admin key and rotate it here, or check that it was not revoked.`;
        await guard.write({ status: 'error', statusDetail: detail, lastSyncAt: at, nextSyncAt, updatedAt: guard.nextUpdatedAt() });
        await raiseConnectionErrorAlert(conn, detail, now);
        return { ...partial, status: 'refused' };
      }
      if (error instanceof ProviderUnavailable || error instanceof ProviderBadResponse) {
        logger.warn('connection sync failed', { connectionId, provider: conn.provider, reason: error.message });
        await guard.write({
          // The provider by its name: `… could not finish: OpenAI answered 503: …`.
          statusDetail: `The last sync could not finish: ${error.message.replace(/^The provider\b/, conn.provider === 'openai' ? 'OpenAI' : 'Anthropic')} What was imported stays; the next sync fetches the rest.`,
          lastSyncAt: at,
          nextSyncAt,
          updatedAt: guard.nextUpdatedAt(),
        });
        return { ...partial, status: 'unavailable' };
      }
      throw error;
    }
  } catch (error) {
    // Stopped while writing a fault: nothing more is written to a connection paused, deleted or changed meanwhile.
    if (error instanceof SyncStopped) return { ...skipped, status: 'stopped' };
    throw error;
  } finally {
    await releaseLease(accountId, connectionId, owner);
  }
}
