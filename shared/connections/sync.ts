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
import { db, tableName } from '#shared/db/client.ts';
// Named, static: a dynamic import() of the package would bundle all of it (every command, the aggregated clients).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { listProviderKeys } from '#shared/db/discovered-keys.ts';
import { getAccount, type Account } from '#shared/db/accounts.ts';
import { trackedRequests } from '#shared/db/usage.ts';
import { listOwnPrices } from '#shared/db/prices.ts';
import { recentDays } from '#shared/db/rolling.ts';
import { acquireLease, getConnection, loadCells, releaseLease, setConnectionFields, toStoredCell, type Connection } from '#shared/db/connections.ts';
import { settleSlice, type SettleChange } from '#shared/connections/settlement.ts';
import { settleCellItems } from '#shared/db/settlement.ts';
import { promoteKeys, putUntrackedKeys } from '#shared/db/untracked-keys.ts';
import { aggregateItems, compose, planCounterItems, writeActions, type Built } from '#shared/db/usage-writes.ts';
import { addContribution, contributionCost, emptyAggregates, keyUpdateOf, MAX_ACTIONS, type Aggregates, type ChunkContext } from '#shared/ingest/chunks.ts';
import { currentPeriod, type Period } from '#shared/billing/plans.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { isExact, normalizeTier, priceId, priceUsage, unitCost, unitPriceFor, type OwnPriceLookup } from '#shared/pricing/pricing.ts';
import { unitEndpointOf } from '#shared/connections/units.ts';
import { raiseUnpricedModelAlerts, unpricedModels, unpricedUnits, type ModelName } from '#shared/alerting/unpriced-model.ts';
import { addDays, daysBetween, isoDate, isoMonth } from '#shared/time/periods.ts';
import { logger } from '#shared/http/logger.ts';
import { evaluateAfterIngest, type Discovered } from '#shared/alerting/evaluate.ts';
import { raisePlanLimitAlert, type PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import { acknowledgeAlerts, triggeredAlertIds } from '#shared/db/alerts.ts';

import { firstReadableDay, providerClient, type ProviderClient } from '#shared/connections/client.ts';
import { providerName } from '#shared/connections/alerts.ts';
import { cellId, diffCells, UNATTRIBUTED, type CellChange, type StoredCell } from '#shared/connections/diff.ts';
import { ProviderBadResponse, ProviderRefused, ProviderUnavailable, type ProviderHttpOptions } from '#shared/connections/http.ts';
import type { Provider, ProviderKey } from '#shared/connections/model.ts';
import { openSecret } from '#shared/connections/secrets.ts';
import { raiseConnectionErrorAlert } from '#shared/connections/alerts.ts';
import { enforceForConnection } from '#shared/enforcement/service.ts';
import { leverFor } from '#shared/enforcement/levers.ts';

/** Who acknowledges an alert that Burnrate itself closed (`acknowledgedBy`). */
export const BURNRATE_ACTOR = 'burnrate';
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
  /** Settlement corrections changed (each one write of its cell plus the aggregates it moves). */
  settleCellsChanged: number;
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
    ...(listed.limitUsd !== undefined ? { providerLimitUsd: listed.limitUsd } : {}),
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
  /** Keys listed past the key limit (`tracked: false`): not in `chunkContext.knownKeys`, promoted once there is room. */
  untracked: Set<string>;
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
  const untracked = new Set(keyItems.filter((item) => item.tracked === false).map((item) => item.keyHash as string));
  return {
    account,
    period,
    limits,
    room: { requests: limits.trackedRequests - used, keys: limits.keys - (account.keyCount ?? 0) },
    knownKeys,
    untracked,
    ownPrices: new Map(prices.map((p) => [priceId(p.provider, p.model), p])),
    chunkContext: { knownKeys: new Set([...knownKeys.keys()].filter((h) => !untracked.has(h))), today: isoDate(now), month: isoMonth(now), recentDays: new Set(recentDays(isoDate(now))) },
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
      ':webSearchRequests': cell.webSearchRequests,
      ':quantity': cell.quantity,
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
          'outputTokens = :outputTokens, webSearchRequests = :webSearchRequests, quantity = :quantity, costMicros = :costMicros, v = :next',
        ConditionExpression: c.previous ? 'v = :v' : 'attribute_not_exists(pk)',
        ExpressionAttributeNames: { '#date': 'date' },
        ExpressionAttributeValues: values,
      },
    });
    out.meaning.push({ cell: c.id });
  }
  return out;
}

/**
 * Family: each day's computed cost of the connection's keys (reconciliation), moved by the transaction's differences;
 * and its token estimate, moved by the usage cells' differences only (a settlement's corrections move the computed cost).
 */
export function reconDayItems(accountId: string, provider: string, costByDay: ReadonlyMap<string, bigint>, estimateByDay: ReadonlyMap<string, bigint> = costByDay): Built {
  const out: Built = { actions: [], meaning: [] };
  for (const [date, delta] of costByDay) {
    out.actions.push({
      Update: {
        TableName: tableName(),
        Key: keys.importDay(accountId, provider, date),
        UpdateExpression: 'SET #date = :date ADD computedMicros :d, estimatedMicros :e',
        ExpressionAttributeNames: { '#date': 'date' },
        ExpressionAttributeValues: { ':date': date, ':d': delta, ':e': estimateByDay.get(date) ?? 0n },
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
  result: SyncResult = { status: 'done', cellsChanged: 0, settleCellsChanged: 0, transactions: 0, keysCreated: 0, keysUpdated: 0, limitsReached: [] };
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
    // Keys imported before, listed or not (a provider that reads usage key by key reads theirs too).
    const known = [...this.ctx.knownKeys.values()].filter((item) => item.source === 'connection' && item.provider === this.provider && typeof item.providerKeyId === 'string');
    this.client.readAlso?.(known.map((item) => item.providerKeyId as string));
  }

  private attributesOf(keyId: string | null): KeyAttributes {
    const hash = connectionKeyHash(this.provider, keyId);
    return keyAttributes(this.conn, keyId, keyId === null ? undefined : this.inventory.get(keyId), this.ctx.knownKeys.get(hash));
  }

  /** Models read that neither the account's own prices nor the table price (the `unpriced_model` alert). */
  readonly unpriced = new Map<string, ModelName>();

  /** A cell at its tier's price; not exact (unpriced requests) when the model, its tier or its web searches have no price. */
  private price = (cell: CellChange['cell']) => {
    // OpenRouter reports what it charges: counted as reported, never priced from the table.
    if (cell.reportedCostMicros !== undefined || this.provider === 'openrouter') return { costMicros: cell.reportedCostMicros ?? 0n, priced: true };
    const units = unitEndpointOf(cell.tier);
    if (units) {
      // Units, not tokens: the quantity at the table's unit price of the model (`images:dall-e-3`), else of the endpoint.
      const model = cell.model.startsWith(`${cell.tier}:`) ? cell.model.slice(cell.tier.length + 1) : null;
      const cost = unitCost(cell.quantity, unitPriceFor(this.provider, units.item, model));
      return { costMicros: BigInt(cost.costMicros), priced: cost.priced };
    }
    const cost = priceUsage({ ...cell, provider: this.provider, tier: normalizeTier(cell.tier), longContext: false }, this.ctx.ownPrices);
    return { costMicros: BigInt(cost.costMicros), priced: isExact(cost) };
  };

  /** Reads the days from…to (inclusive) and writes what changed; re-diffs when another writer changed a cell first. */
  async importSlice(from: string, to: string): Promise<void> {
    const toExclusive = addDays(to, 1);
    const [read, billed] = await Promise.all([this.client.readUsage(from, toExclusive), this.client.readBilled(from, toExclusive)]);
    const tokenModels = read.filter((c) => !unitEndpointOf(c.tier)).map((c) => ({ provider: this.provider, model: c.model }));
    for (const m of unpricedModels(tokenModels, this.ctx.ownPrices)) this.unpriced.set(m.model, m);
    for (const m of unpricedUnits(this.provider, read)) this.unpriced.set(m.model, m);
    const loadStored = async () =>
      new Map<string, StoredCell>((await loadCells(this.conn.accountId, this.provider, from, to)).map((item) => {
        const cell = toStoredCell(item);
        return [cellId(cell), cell];
      }));
    let stored = await loadStored();
    for (let attempt = 0; ; attempt++) {
      const changes = diffCells(read, stored, this.price);
      if (changes.length === 0) break;
      try {
        await this.writeChanges(changes);
        stored = await loadStored();
        break;
      } catch (error) {
        if (!(error instanceof SliceConflict) || attempt >= 5) throw error;
        await sleep(Math.random() * 50 * 2 ** attempt);
        stored = await loadStored();
      }
    }
    // Settlement: the days the provider has billed move to the bill (only the differences are written).
    for (let attempt = 0; ; attempt++) {
      try {
        const settled = await settleSlice(
          { accountId: this.conn.accountId, provider: this.provider, today: this.ctx.chunkContext.today, price: this.price, tracked: (keyId, date) => this.trackedForBill(keyId, date) },
          from,
          to,
          read,
          billed,
          [...stored.values()],
          (changes) => this.writeSettlement(changes),
        );
        for (const date of daysBetween(from, to)) this.daysRead.set(date, !settled.unsettled.includes(date));
        break;
      } catch (error) {
        if (!(error instanceof SliceConflict) || attempt >= 5) throw error;
        await sleep(Math.random() * 50 * 2 ** attempt);
        stored = await loadStored();
      }
    }
  }

  /** Each day this sync read: whether the provider's bill settled it. */
  daysRead = new Map<string, boolean>();

  /** The connection's days not settled after this sync: those it read unsettled, and the earlier list's days it did not read. */
  unsettledDays(previous: readonly string[] | undefined): string[] {
    const kept = (previous ?? []).filter((d) => !this.daysRead.has(d) && d < this.ctx.chunkContext.today);
    return [...kept, ...[...this.daysRead].filter(([, settled]) => !settled).map(([d]) => d)].sort();
  }

  private admittedForBill = new Set<string>();
  /** Whether a key's billed money may be shown: a tracked key, or a new one while the plan has room for it. */
  private trackedForBill(keyId: string | null, date: string): boolean {
    const hash = connectionKeyHash(this.provider, keyId);
    if (this.ctx.chunkContext.knownKeys.has(hash) || this.admittedForBill.has(hash)) return true;
    if (this.ctx.untracked.has(hash) || this.ctx.room.keys <= 0) {
      this.refusedKeys.add(hash);
      this.refuse('keys', date);
      return false;
    }
    this.ctx.room.keys -= 1;
    this.admittedForBill.add(hash);
    return true;
  }

  /** Writes settlement corrections in transactions of ≤ 100 actions (cell, aggregates, reconciliation day). */
  private async writeSettlement(changes: SettleChange[]): Promise<void> {
    const sorted = [...changes].sort((a, b) => {
      const ka = connectionKeyHash(this.provider, a.keyId);
      const kb = connectionKeyHash(this.provider, b.keyId);
      return ka < kb ? -1 : ka > kb ? 1 : a.date < b.date ? -1 : a.date > b.date ? 1 : a.row < b.row ? -1 : 1;
    });
    let batch: SettleChange[] = [];
    let aggregates = emptyAggregates();
    let days = new Set<string>();
    const flush = async () => {
      if (batch.length > 0) await this.writeBatch([], aggregates, batch);
      batch = [];
      aggregates = emptyAggregates();
      days = new Set();
    };
    for (const c of sorted) {
      const contribution = {
        keyHash: connectionKeyHash(this.provider, c.keyId),
        date: c.date,
        provider: this.provider,
        model: c.row,
        sums: { costMicros: c.delta, requests: 0n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n, unpricedRequests: 0n },
      };
      const actions = 1 + contributionCost(aggregates, contribution, this.ctx.chunkContext) + (days.has(c.date) ? 0 : 1);
      if (batch.length > 0 && batch.length + aggregateCount(aggregates) + days.size + 2 + actions > MAX_ACTIONS) await flush();
      batch.push(c);
      days.add(c.date);
      addContribution(aggregates, contribution, this.ctx.chunkContext);
    }
    await flush();
  }

  /** Requests of a cell's difference that count against the plan: only days of the current period (history is free). */
  private trackedRequestsOf(c: CellChange): number {
    return c.cell.date >= this.ctx.period.start.slice(0, 10) ? Math.max(0, c.delta.requests) : 0;
  }

  /**
   * Fits the changes under the plan's limits (the rest waits for room), then writes them in transactions of ≤ 100
   * actions. Newest days first: the current month is what the plan's room goes to.
   */
  private async writeChanges(changes: CellChange[]): Promise<void> {
    const admitted: CellChange[] = [];
    const admittedNewKeys = new Set<string>();
    const promotions = new Set<string>();
    const ordered = [...changes].sort((a, b) => (a.cell.date > b.cell.date ? -1 : a.cell.date < b.cell.date ? 1 : a.id < b.id ? -1 : 1));
    for (const c of ordered) {
      const hash = connectionKeyHash(this.provider, c.cell.keyId);
      this.hashToKeyId.set(hash, c.cell.keyId);
      const isNewKey = !this.ctx.chunkContext.knownKeys.has(hash) && !admittedNewKeys.has(hash) && !promotions.has(hash);
      if (isNewKey && this.ctx.room.keys <= 0) {
        this.refuse('keys', c.cell.date, hash);
        continue;
      }
      const requests = this.trackedRequestsOf(c);
      if (requests > this.ctx.room.requests) {
        this.refuse('trackedRequests', c.cell.date);
        continue;
      }
      if (isNewKey) {
        if (this.ctx.untracked.has(hash)) promotions.add(hash);
        else admittedNewKeys.add(hash);
        this.ctx.room.keys -= 1;
      }
      this.ctx.room.requests -= requests;
      admitted.push(c);
    }
    await this.promote([...promotions]);
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

  /** Keys past the key limit seen by this sync (listed untracked at its end). */
  refusedKeys = new Set<string>();
  /** The first and last day whose usage the period's tracked requests held back. */
  requestsHeldFrom: string | undefined;
  requestsHeldTo: string | undefined;

  private refuse(limit: PlanLimitReached, date: string, keyHash?: string): void {
    this.limitsReached.add(limit);
    if (keyHash) this.refusedKeys.add(keyHash);
    if (limit === 'trackedRequests' && (this.requestsHeldFrom === undefined || date < this.requestsHeldFrom)) this.requestsHeldFrom = date;
    if (limit === 'trackedRequests' && (this.requestsHeldTo === undefined || date > this.requestsHeldTo)) this.requestsHeldTo = date;
    if (this.earliestRefused === undefined || date < this.earliestRefused) this.earliestRefused = date;
  }

  private contributionOf(c: CellChange) {
    const units = unitEndpointOf(c.cell.tier);
    return {
      keyHash: connectionKeyHash(this.provider, c.cell.keyId),
      date: c.cell.date,
      provider: this.provider,
      model: c.cell.model,
      ...(units ? { unit: units.unit, quantity: BigInt(c.delta.quantity) } : {}),
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

  /**
   * Key updates of a batch: attributes for keys new to the account or whose provider metadata changed, and when the
   * provider last saw each key in use (`lastSeenWith`), never the sync's own time.
   */
  private decorateKeys(aggregates: Aggregates, batch: CellChange[]): void {
    const usedOn = latestUsageDays(this.provider, batch);
    for (const key of aggregates.keys.values()) {
      key.lastSeenAt = lastSeenWith(this.ctx.knownKeys.get(key.keyHash), usedOn.get(key.keyHash), this.now);
      const keyId = this.keyIdOf(key.keyHash);
      const attrs = this.attributesOf(keyId === undefined ? null : keyId);
      if (key.isNew || !sameAttributes(attrs, this.ctx.knownKeys.get(key.keyHash))) key.attributes = attrs;
    }
  }

  private hashToKeyId = new Map<string, string | null>();
  private keyIdOf(hash: string): string | null | undefined {
    return this.hashToKeyId.get(hash);
  }

  private async writeBatch(batch: CellChange[], aggregates: Aggregates, settle: SettleChange[] = []): Promise<void> {
    for (const c of batch) this.hashToKeyId.set(connectionKeyHash(this.provider, c.cell.keyId), c.cell.keyId);
    for (const c of settle) this.hashToKeyId.set(connectionKeyHash(this.provider, c.keyId), c.keyId);
    this.decorateKeys(aggregates, batch);
    const costByDay = new Map<string, bigint>();
    for (const c of batch) costByDay.set(c.cell.date, (costByDay.get(c.cell.date) ?? 0n) + c.costDelta);
    const estimateByDay = new Map(costByDay);
    for (const c of settle) costByDay.set(c.date, (costByDay.get(c.date) ?? 0n) + c.delta);
    const requests = batch.reduce((n, c) => n + this.trackedRequestsOf(c), 0);
    const { accountId } = this.conn;
    for (let attempt = 0; ; attempt++) {
      const outcome = await writeActions(
        compose(
          snapshotCellItems(accountId, this.provider, batch),
          settleCellItems(accountId, this.provider, settle),
          aggregateItems(accountId, aggregates, { now: this.now, today: this.ctx.chunkContext.today, month: this.ctx.chunkContext.month }),
          reconDayItems(accountId, this.provider, costByDay, estimateByDay),
          planCounterItems(accountId, this.ctx.period.start, requests, aggregates.newKeys, this.ctx.limits),
        ),
      );
      if (outcome.status === 'written') {
        this.result.transactions += 1;
        this.result.cellsChanged += batch.length;
        this.result.settleCellsChanged += settle.length;
        for (const key of aggregates.keys.values()) {
          if (key.isNew) {
            this.result.keysCreated += 1;
            this.ctx.chunkContext.knownKeys.add(key.keyHash);
            this.discovered.push({ keyHash: key.keyHash, provider: this.provider, ...(typeof key.attributes?.name === 'string' ? { name: key.attributes.name } : {}) });
          }
          if (key.attributes) this.ctx.knownKeys.set(key.keyHash, { ...this.ctx.knownKeys.get(key.keyHash), keyHash: key.keyHash, ...key.attributes });
          if (key.lastSeenAt) this.ctx.knownKeys.set(key.keyHash, { ...this.ctx.knownKeys.get(key.keyHash), keyHash: key.keyHash, lastSeenAt: key.lastSeenAt });
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
          this.refusedKeys.add(hash);
          continue;
        }
        this.ctx.room.keys -= 1;
        if (this.ctx.untracked.has(hash)) {
          try {
            await this.promote([hash]);
          } catch (error) {
            if (error instanceof SliceConflict) continue;
            throw error;
          }
          if (!sameAttributes(attrs, this.ctx.knownKeys.get(hash))) updates.push({ hash, attrs });
          continue;
        }
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

  /** Untracked keys made tracked (counted against the key limit) now that the plan has room. */
  private async promote(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    if (!(await promoteKeys(this.conn.accountId, hashes, this.ctx.limits.keys))) {
      // Another writer took the room meanwhile: they stay untracked.
      for (const h of hashes) this.refusedKeys.add(h);
      this.limitsReached.add('keys');
      this.ctx.room.keys = 0;
      throw new SliceConflict('the key limit changed');
    }
    for (const h of hashes) {
      this.ctx.untracked.delete(h);
      this.ctx.chunkContext.knownKeys.add(h);
      this.result.keysCreated += 1;
      this.discovered.push({ keyHash: h, provider: this.provider });
    }
  }

  /** Lists the keys past the key limit as untracked (name, project, provider status; no spend). */
  async listUntracked(): Promise<number> {
    const entries: { keyHash: string; attributes: Record<string, unknown> }[] = [];
    for (const hash of this.refusedKeys) {
      if (this.ctx.chunkContext.knownKeys.has(hash)) continue;
      const keyId = this.keyIdOf(hash) ?? [...this.inventory.keys()].find((id) => connectionKeyHash(this.provider, id) === hash) ?? null;
      const attributes = this.attributesOf(keyId);
      if (this.ctx.untracked.has(hash) && sameAttributes(attributes, this.ctx.knownKeys.get(hash))) continue;
      entries.push({ keyHash: hash, attributes });
    }
    if (entries.length > 0) await putUntrackedKeys(this.conn.accountId, this.provider, entries, this.now);
    return [...this.refusedKeys].filter((h) => !this.ctx.chunkContext.knownKeys.has(h)).length;
  }

  get reached(): PlanLimitReached[] {
    return [...this.limitsReached];
  }
}

/** The latest UTC day with usage of each key (by hash) among a batch's cells as the provider reports them now. */
function latestUsageDays(provider: string, batch: CellChange[]): Map<string, string> {
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

function aggregateCount(a: Aggregates): number {
  return a.keyDayModels.size + a.keys.size + a.days.size + a.months.size + a.dayModels.size + a.monthKeys.size + a.dayKeys.size;
}

async function updateKeyAttributes(accountId: string, keyHash: string, attrs: KeyAttributes): Promise<void> {
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

const LIMIT_DETAIL = 'Not everything was imported:';

/** The plan_limit alerts still triggered, acknowledged by Burnrate (`acknowledgedBy: "burnrate"`): their limit no longer applies. */
async function acknowledgeLiftedPlanLimits(accountId: string, now: Date): Promise<void> {
  const ids = await triggeredAlertIds(accountId, { type: 'plan_limit' });
  if (ids.length > 0) await acknowledgeAlerts(accountId, ids, BURNRATE_ACTOR, now);
}

/**
 * What a sync reads, in order (pure). Without a backfill: the recent days (firstDayToRead) to today, oldest first.
 * With one (`cursor`…`backfillTo ?? today` still to import): the recent days after it first, then the backfill
 * newest first — the current month before the months before it, slices of at most `sliceDays` within a month.
 */
export function readPlan(conn: Pick<Connection, 'cursor' | 'backfillTo' | 'lastSuccessAt' | 'importedFrom'>, today: string, sliceDays: number): { recent: [string, string][]; backfill: [string, string][] } {
  const forward = (from: string, to: string) => {
    const out: [string, string][] = [];
    for (let f = from; f <= to; ) {
      const t = addDays(f, sliceDays - 1) < to ? addDays(f, sliceDays - 1) : to;
      out.push([f, t]);
      f = addDays(t, 1);
    }
    return out;
  };
  if (conn.cursor === null) return { recent: forward(firstDayToRead(conn, today), today), backfill: [] };
  const backTo = conn.backfillTo ?? today;
  const recentFrom = firstDayToRead({ ...conn, cursor: null }, today);
  const recent = backTo < today ? forward(recentFrom > backTo ? recentFrom : addDays(backTo, 1), today) : [];
  const backfill: [string, string][] = [];
  for (let to = backTo; to >= conn.cursor; ) {
    const monthStart = `${to.slice(0, 7)}-01`;
    let from = addDays(to, -(sliceDays - 1));
    if (from < monthStart) from = monthStart;
    if (from < conn.cursor) from = conn.cursor;
    backfill.push([from, to]);
    to = addDays(from, -1);
  }
  return { recent, backfill };
}

/** The plan without the days before `oldest` (a provider that keeps only recent days: they would read as empty). */
export function clampPlan(plan: ReturnType<typeof readPlan>, oldest: string | undefined): ReturnType<typeof readPlan> {
  if (oldest === undefined) return plan;
  const clamp = (slices: [string, string][]) => slices.filter(([, to]) => to >= oldest).map(([from, to]): [string, string] => [from < oldest ? oldest : from, to]);
  return { recent: clamp(plan.recent), backfill: clamp(plan.backfill) };
}

/** The sentence `statusDetail` carries when a plan limit held usage back. */
export function limitDetail(reached: readonly PlanLimitReached[], limits: { trackedRequests: number; keys: number }): string {
  const names = reached.map((r) =>
    r === 'keys' ? `the plan's key limit (${limits.keys.toLocaleString('en-US')} keys)` : `the plan's tracked requests (${limits.trackedRequests.toLocaleString('en-US')} this period)`,
  );
  return `${LIMIT_DETAIL} ${names.join(' and ')} reached. The rest is imported by a later sync once there is room (upgrade the plan).`;
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

/**
 * The connection's levers after the import (shared/enforcement/): only here is the admin key open. A connection that
 * holds a stop budget at or past its alert threshold is due again in a minute.
 */
async function enforceAfterSync(conn: Connection, adminKey: string, now: Date, http: ProviderHttpOptions | undefined): Promise<void> {
  const pass = await enforceForConnection(conn.accountId, conn.id, leverFor(conn.provider, adminKey, http?.fetch ? { fetch: http.fetch } : {}), now);
  if (pass.hot.has(conn.id)) await setConnectionFields(conn, { nextSyncAt: new Date(now.getTime() + HOT_SYNC_INTERVAL_MS).toISOString() });
}

/** How soon a connection near a stop budget's limit is synced again. */
export const HOT_SYNC_INTERVAL_MS = 60_000;

export async function syncConnection(accountId: string, connectionId: string, options: SyncOptions = {}): Promise<SyncResult> {
  const now = options.now ?? new Date();
  const started = Date.now();
  const skipped: SyncResult = { status: 'skipped', cellsChanged: 0, settleCellsChanged: 0, transactions: 0, keysCreated: 0, keysUpdated: 0, limitsReached: [] };
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
    let adminKey: string;
    try {
      adminKey = await openSecret(conn.secret, { accountId, connectionId });
      importer = new Importer(conn, providerClient(conn.provider, adminKey, { ...http, now: () => now }), ctx, now);
      await importer.readInventory();
      const today = ctx.chunkContext.today;
      const sliceDays = options.sliceDays ?? 7;
      const plan = clampPlan(readPlan(conn, today, sliceDays), firstReadableDay(conn.provider, today));
      for (const [from, to] of plan.recent) {
        await guard.check();
        await importer.importSlice(from, to);
      }
      for (let i = 0; i < plan.backfill.length; i++) {
        const [from] = plan.backfill[i]!;
        await guard.check();
        await importer.importSlice(...plan.backfill[i]!);
        if (i + 1 === plan.backfill.length) break;
        const backfillTo = addDays(from, -1);
        if (Date.now() - started > (options.budgetMs ?? 240_000)) {
          // Out of time mid-backfill: the next run (due now) goes on with the days before `from`.
          await guard.write({ backfillTo, unsettledDays: importer.unsettledDays(conn.unsettledDays), lastSyncAt: at, nextSyncAt: at, updatedAt: guard.nextUpdatedAt() });
          return { ...importer.result, status: 'partial' };
        }
        await guard.write({ backfillTo });
      }
      await importer.reconcileKeys();
      const untrackedKeys = await importer.listUntracked();
      const reached = importer.reached;
      await guard.write({
        status: 'active',
        statusDetail: reached.length > 0 ? limitDetail(reached, ctx.limits) : null,
        // Usage a limit held back is read again from its first day by the next sync (imported once there is room).
        cursor: importer.earliestRefused ?? null,
        backfillTo: null,
        untrackedKeys,
        requestsHeldFrom: importer.requestsHeldFrom ?? null,
        requestsHeldTo: importer.requestsHeldTo ?? null,
        unsettledDays: importer.unsettledDays(conn.unsettledDays),
        lastSyncAt: at,
        lastSuccessAt: at,
        nextSyncAt,
        updatedAt: guard.nextUpdatedAt(),
      });
      if (reached.length > 0) await raisePlanLimitAlert(accountId, ctx.account, ctx.period, reached, now);
      // A limit that held usage back no longer does (an upgrade): its plan_limit alert is acknowledged by Burnrate.
      else if (conn.statusDetail !== null && conn.statusDetail.startsWith(LIMIT_DETAIL)) await acknowledgeLiftedPlanLimits(accountId, now);
      if (importer.result.cellsChanged > 0 || importer.result.keysCreated > 0) await evaluateAfterIngest(accountId, importer.discovered, now);
      await raiseUnpricedModelAlerts(accountId, [...importer.unpriced.values()], now);
      await enforceAfterSync(conn, adminKey, now, options.http);
      return { ...importer.result, limitsReached: reached };
    } catch (error) {
      const partial = importer?.result ?? skipped;
      if (error instanceof SyncStopped) return { ...partial, status: 'stopped' };
      if (error instanceof ProviderRefused) {
        const detail = `${providerName(conn.provider)} refused the admin key (${error.status}): ${error.providerMessage}. Create a new ${conn.provider === 'openrouter' ? 'management' : 'admin'} key and rotate it here, or check that it was not revoked.`;
        await guard.write({ status: 'error', statusDetail: detail, lastSyncAt: at, nextSyncAt, updatedAt: guard.nextUpdatedAt() });
        await raiseConnectionErrorAlert(conn, detail, now);
        return { ...partial, status: 'refused' };
      }
      if (error instanceof ProviderUnavailable || error instanceof ProviderBadResponse) {
        logger.warn('connection sync failed', { connectionId, provider: conn.provider, reason: error.message });
        await guard.write({
          // The provider by its name: `… could not finish: OpenAI answered 503: …`.
          statusDetail: `The last sync could not finish: ${error.message.replace(/^The provider\b/, providerName(conn.provider))} What was imported stays; the next sync fetches the rest.`,
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
