/**
 * A sync in progress (shared/connections/sync.ts runs its phases in order): the connection, the provider client, the
 * account's context and what happened so far. Its phases share that state: the key inventory (`readInventory`,
 * `reconcileKeys`, `listUntracked`), the usage of each slice of days (`importUsage`) and its settlement (`settle`).
 * Every write goes through the chunk writer (shared/db/usage-writes.ts), under the plan's limits.
 */
import type { Item } from '#shared/db/client.ts';
import { bookedDay, pastMonthsOf, type Contribution } from '#shared/usage/aggregates.ts';
import { listProviderKeys } from '#shared/db/discovered-keys.ts';
import { getAccount, type Account } from '#shared/db/accounts.ts';
import { trackedRequests } from '#shared/db/usage.ts';
import { listOwnPrices } from '#shared/db/prices.ts';
import { isoHour, keptHours, recentDays, spreadOverHours, syncRead } from '#shared/db/rolling.ts';
import { loadCells, toStoredCell, type Connection } from '#shared/db/connections.ts';
import { settleCellItems, type SettleChange } from '#shared/db/settlement.ts';
import { reconDayItems, snapshotCellItems } from '#shared/db/import-snapshot.ts';
import { promoteKeys, putUntrackedKeys } from '#shared/db/untracked-keys.ts';
import { aggregateItems, compose, openMonthGuards, planCounterItems, writeActions } from '#shared/db/usage-writes.ts';
import { listClosedMonths } from '#shared/db/months.ts';
import { addContribution, contributionCost, emptyAggregates, keyUpdateOf, MAX_ACTIONS, type Aggregates, type ChunkContext } from '#shared/usage/aggregates.ts';
import { currentPeriod, type Period } from '#shared/billing/plans.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { isExact, normalizeTier, priceId, priceLines, priceUsage, type OwnPriceLookup } from '#shared/pricing/pricing.ts';
import { costOfLines, lineQuantities } from '#shared/pricing/lines.ts';
import { unpricedModels, unpricedUnits, type ModelName } from '#shared/alerting/unpriced-model.ts';
import type { Discovered } from '#shared/alerting/evaluate.ts';
import type { PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import { addDays, daysBetween, isoDate, isoMonth } from '#shared/time/periods.ts';
import type { ProviderClient } from '#shared/connections/client.ts';
import { cellId, diffCells, type CellChange, type StoredCell } from '#shared/connections/diff.ts';
import { ProviderBadResponse } from '#shared/connections/http.ts';
import type { BilledDay, Provider, ProviderKey, UsageCell } from '#shared/connections/model.ts';
import { settleSlice } from '#shared/connections/settlement.ts';
import { unitEndpointOf } from '#shared/usage/units.ts';
import { connectionKeyHash, keyAttributes, lastSeenWith, latestUsageDays, sameAttributes, updateKeyAttributes, type KeyAttributes } from '#shared/connections/sync-keys.ts';

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

/** One slice of days as the usage phase read it: what the settlement of the same days works from. */
export interface SliceRead {
  from: string;
  to: string;
  read: UsageCell[];
  billed: BilledDay[];
  /** The snapshot after the usage phase's writes. */
  stored: Map<string, StoredCell>;
}

/** The account's context of one sync: plan period and limits in force, room left, known keys, own prices. */
export interface ImportContext {
  account: Account;
  period: Period;
  limits: { trackedRequests: number; keys: number };
  room: { requests: number; keys: number };
  knownKeys: Map<string, Item>;
  /** Keys listed past the key limit (`tracked: false`): not in `chunkContext.knownKeys`, promoted once there is room. */
  untracked: Set<string>;
  ownPrices: OwnPriceLookup;
  chunkContext: ChunkContext & { knownKeys: Set<string> };
  /** The account's closed months (YYYY-MM): a change of one of their days is booked as a correction today. */
  closedMonths: Set<string>;
}

/** Every closed month of the account up to `month` (ONE Query; strongly consistent: a writer decides on it). */
const closedMonthsUpTo = async (accountId: string, month: string) => new Set((await listClosedMonths(accountId, '0000-01', month, true)).map((m) => m.month));

export async function loadContext(accountId: string, now: Date): Promise<ImportContext | undefined> {
  const [account, keyItems, prices, closedMonths] = await Promise.all([getAccount(accountId, true), listProviderKeys(accountId), listOwnPrices(accountId), closedMonthsUpTo(accountId, isoMonth(now))]);
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
    closedMonths,
    chunkContext: {
      knownKeys: new Set([...knownKeys.keys()].filter((h) => !untracked.has(h))),
      today: isoDate(now),
      month: isoMonth(now),
      recentDays: new Set(recentDays(isoDate(now))),
      keptHours: new Set(keptHours(now)),
      nowHour: isoHour(now),
    },
  };
}

class SliceConflict extends Error {
  override name = 'SliceConflict';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sync in progress: the connection, the provider client, the account's context and what happened so far. */
export class Importer {
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

  /** Project names by id, from the inventory (a deleted key's project is named by the keys still listed in it). */
  private projectNames = new Map<string, string>();
  /** The project (OpenAI) or workspace (Anthropic) each key's usage was reported with in this sync, by key hash. */
  private usageProjects = new Map<string, string>();

  /** The key inventory as read (organization.ts keeps the connection's organization current with it). */
  get listedKeys(): ProviderKey[] {
    return [...this.inventory.values()];
  }

  async readInventory(): Promise<void> {
    for (const k of await this.client.listKeys()) {
      this.inventory.set(k.id, k);
      if (k.project) this.projectNames.set(k.project.id, k.project.name);
    }
    // Keys imported before, listed or not (a provider that reads usage key by key reads theirs too).
    const known = [...this.ctx.knownKeys.values()].filter((item) => item.source === 'connection' && item.provider === this.provider && typeof item.providerKeyId === 'string');
    this.client.readAlso?.(known.map((item) => item.providerKeyId as string));
  }

  private attributesOf(keyId: string | null): KeyAttributes {
    const hash = connectionKeyHash(this.provider, keyId);
    const listed = keyId === null ? undefined : this.inventory.get(keyId);
    const attrs = keyAttributes(this.conn, keyId, listed, this.ctx.knownKeys.get(hash));
    // A key no longer listed (deleted before Burnrate saw it) keeps the project its usage was reported with.
    const projectId = this.usageProjects.get(hash);
    if (keyId !== null && !listed && attrs.project === null && projectId) attrs.project = { id: projectId, name: this.projectNames.get(projectId) ?? projectId };
    return attrs;
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
      // Its one price line (shared/pricing/lines.ts), as the export prices it.
      const lines = priceLines({ provider: this.provider, model: model ?? '', inputTokens: 0, outputTokens: 0, unit: { item: units.item, quantity: cell.quantity } });
      return { costMicros: costOfLines(lines).costMicros, priced: cell.quantity === 0 || lines.every((l) => l.contracted !== null) };
    }
    const cost = priceUsage({ ...cell, provider: this.provider, tier: normalizeTier(cell.tier), longContext: cell.longContext === true }, this.ctx.ownPrices);
    return { costMicros: BigInt(cost.costMicros), priced: isExact(cost) };
  };

  /**
   * Usage: reads the days from…to (inclusive) and writes what changed; re-diffs when another writer changed a cell
   * first. Returns what the settlement of the same days works from (what was read, what was billed, the snapshot).
   */
  async importUsage(from: string, to: string): Promise<SliceRead> {
    const toExclusive = addDays(to, 1);
    const [read, billed] = await Promise.all([this.client.readUsage(from, toExclusive), this.client.readBilled(from, toExclusive)]);
    // Usage whose cost the provider states in dollars (every OpenRouter model) needs no price: never `unpriced_model`.
    const priced = read.filter((c) => c.reportedCostMicros === undefined);
    const tokenModels = priced.filter((c) => !unitEndpointOf(c.tier)).map((c) => ({ provider: this.provider, model: c.model }));
    for (const m of unpricedModels(tokenModels, this.ctx.ownPrices)) this.unpriced.set(m.model, m);
    for (const m of unpricedUnits(this.provider, priced)) this.unpriced.set(m.model, m);
    const slice: SliceRead = { from, to, read, billed, stored: await this.loadStored(from, to) };
    for (let attempt = 0; ; attempt++) {
      const changes = diffCells(read, slice.stored, this.price);
      if (changes.length === 0) break;
      try {
        await this.writeChanges(changes);
        slice.stored = await this.loadStored(from, to);
        break;
      } catch (error) {
        if (!(error instanceof SliceConflict) || attempt >= 5) throw error;
        await sleep(Math.random() * 50 * 2 ** attempt);
        await this.refreshClosedMonths();
        slice.stored = await this.loadStored(from, to);
      }
    }
    return slice;
  }

  /** Settlement: the days of a slice the provider has billed move to the bill (only the differences are written). */
  async settle(slice: SliceRead): Promise<void> {
    const { from, to, read, billed } = slice;
    for (let attempt = 0; ; attempt++) {
      try {
        const settled = await settleSlice(
          { accountId: this.conn.accountId, provider: this.provider, today: this.ctx.chunkContext.today, price: this.price, tracked: (keyId, date) => this.trackedForBill(keyId, date) },
          from,
          to,
          read,
          billed,
          [...slice.stored.values()],
          (changes) => this.writeSettlement(changes),
        );
        for (const date of daysBetween(from, to)) this.daysRead.set(date, !settled.unsettled.includes(date));
        break;
      } catch (error) {
        if (!(error instanceof SliceConflict) || attempt >= 5) throw error;
        await sleep(Math.random() * 50 * 2 ** attempt);
        await this.refreshClosedMonths();
        slice.stored = await this.loadStored(from, to);
      }
    }
  }

  /**
   * The bill again, for days before the usage phase's recent days (docs/features/spend-and-exports.md: every sync reads the bill of the
   * last 35 days again): each day settled anew against the snapshot's cells, so a revision of a bill is found (as a
   * correction, on a closed month's day). Writes only what changed.
   */
  async rereadBills(from: string, to: string): Promise<void> {
    const billed = await this.client.readBilled(from, addDays(to, 1));
    const stored = await this.loadStored(from, to);
    const read: UsageCell[] = [...stored.values()].map(({ costMicros, version: _, ...cell }) => (this.provider === 'openrouter' ? { ...cell, reportedCostMicros: costMicros } : cell));
    await this.settle({ from, to, read, billed, stored });
  }

  /** A month closed while this sync ran (its guard cancelled a write): read the closed months again. */
  private async refreshClosedMonths(): Promise<void> {
    this.ctx.closedMonths = await closedMonthsUpTo(this.conn.accountId, this.ctx.chunkContext.month);
  }

  /**
   * The day a change of `date` is booked on: its own, or, for a day of a closed month, today (the day it was found),
   * as a correction of that day (docs/features/spend-and-exports.md "Closed months").
   */
  private booked(date: string): { date: string; correctionOf?: string } {
    return bookedDay(date, { today: this.ctx.chunkContext.today, closedMonths: this.ctx.closedMonths });
  }

  private async loadStored(from: string, to: string): Promise<Map<string, StoredCell>> {
    return new Map<string, StoredCell>((await loadCells(this.conn.accountId, this.provider, from, to)).map((item) => {
      const cell = toStoredCell(item);
      return [cellId(cell), cell];
    }));
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
    await this.inTransactions(
      sorted,
      (c) => ({
        keyHash: connectionKeyHash(this.provider, c.keyId),
        ...this.booked(c.date),
        provider: this.provider,
        model: c.row,
        sums: { costMicros: c.delta, requests: 0n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n, unpricedRequests: 0n },
      }),
      (batch, aggregates) => this.writeBatch([], aggregates, batch),
    );
  }

  /**
   * Writes changes in transactions of ≤ 100 actions: each change one write of its own, plus the aggregates it moves
   * and its day's reconciliation item (and 2 plan counters), in the order given.
   */
  private async inTransactions<T>(changes: readonly T[], contributionOf: (change: T) => Contribution, write: (batch: T[], aggregates: Aggregates) => Promise<void>): Promise<void> {
    let batch: T[] = [];
    let aggregates = emptyAggregates();
    let days = new Set<string>();
    const flush = async () => {
      if (batch.length > 0) await write(batch, aggregates);
      batch = [];
      aggregates = emptyAggregates();
      days = new Set();
    };
    for (const c of changes) {
      const contribution = contributionOf(c);
      // + a guard per past month written (a month closed meanwhile cancels the write).
      const actions = 1 + contributionCost(aggregates, contribution, this.ctx.chunkContext) + (days.has(contribution.date) ? 0 : 1) + 1;
      if (batch.length > 0 && batch.length + aggregateCount(aggregates) + aggregates.months.size + days.size + 2 + actions > MAX_ACTIONS) await flush();
      batch.push(c);
      days.add(contribution.date);
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
    await this.inTransactions(admitted, (c) => this.contributionOf(c), (batch, aggregates) => this.writeBatch(batch, aggregates));
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
      ...this.booked(c.cell.date),
      provider: this.provider,
      model: c.cell.model,
      ...(units ? { unit: units.unit, quantity: BigInt(c.delta.quantity) } : {}),
      // The price lines' quantities of the difference (shared/pricing/lines.ts): the FOCUS export's lines.
      lines: lineQuantities(
        units
          ? { provider: this.provider, model: c.cell.model, inputTokens: 0, outputTokens: 0, unit: { item: units.item, quantity: c.delta.quantity } }
          : { ...c.delta, provider: this.provider, model: c.cell.model, tier: normalizeTier(c.cell.tier), longContext: c.cell.longContext === true },
      ),
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
      if (key.today.costMicros > 0n) {
        // Today's figure grew: spread over the time since it was last read (the spend-anomaly rate, the incident chart).
        const since = this.lastRead(key.keyHash);
        key.hours = spreadOverHours(key.today.costMicros, since.at, this.now.getTime(), this.now);
        key.rateAt = this.now.toISOString();
        this.grown.set(key.keyHash, this.grown.get(key.keyHash) === true || since.seen);
      }
      key.lastSeenAt = lastSeenWith(this.ctx.knownKeys.get(key.keyHash), usedOn.get(key.keyHash), this.now);
      const keyId = this.keyIdOf(key.keyHash);
      const attrs = this.attributesOf(keyId === undefined ? null : keyId);
      if (key.isNew || !sameAttributes(attrs, this.ctx.knownKeys.get(key.keyHash))) key.attributes = attrs;
    }
  }

  /**
   * Keys whose today figure this sync saw grow, and whether an earlier sync saw the key today (its spend rate exists
   * from the second sync that sees it on the day: docs/features/budgets-and-alerts.md; a connection's first sync starts the count).
   */
  readonly grown = new Map<string, boolean>();

  /**
   * When the key's today figure was last read and whether its rate exists (shared/anomaly/rate.ts `syncRead`: from the
   * second sync that sees it on the day).
   */
  private lastRead(keyHash: string): { at: number; seen: boolean } {
    const item = this.ctx.knownKeys.get(keyHash);
    const previous = item && this.conn.lastSuccessAt ? Date.parse(this.conn.lastSuccessAt) : undefined;
    const firstSeen = typeof item?.firstSeenAt === 'string' ? Date.parse(item.firstSeenAt) : undefined;
    const read = syncRead({ now: this.now, previousSyncAt: previous, keyFirstSeenAt: firstSeen, rateAt: item?.rateAt });
    return { at: read.from, seen: read.rated };
  }

  private hashToKeyId = new Map<string, string | null>();
  private keyIdOf(hash: string): string | null | undefined {
    return this.hashToKeyId.get(hash);
  }

  private async writeBatch(batch: CellChange[], aggregates: Aggregates, settle: SettleChange[] = []): Promise<void> {
    for (const c of batch) {
      const hash = connectionKeyHash(this.provider, c.cell.keyId);
      this.hashToKeyId.set(hash, c.cell.keyId);
      if (c.cell.projectId) this.usageProjects.set(hash, c.cell.projectId);
    }
    for (const c of settle) this.hashToKeyId.set(connectionKeyHash(this.provider, c.keyId), c.keyId);
    this.decorateKeys(aggregates, batch);
    // The reconciliation's computed figure of a day is what its aggregates hold: a correction counts on the day it is booked.
    const costByDay = new Map<string, bigint>();
    for (const c of batch) {
      const day = this.booked(c.cell.date).date;
      costByDay.set(day, (costByDay.get(day) ?? 0n) + c.costDelta);
    }
    const estimateByDay = new Map(costByDay);
    for (const c of settle) {
      const day = this.booked(c.date).date;
      costByDay.set(day, (costByDay.get(day) ?? 0n) + c.delta);
    }
    // Past months still open when planned: each write is conditioned on them staying open.
    const pastMonths = pastMonthsOf(aggregates, this.ctx.chunkContext);
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
          openMonthGuards(accountId, pastMonths),
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
        // The batch's new keys were counted out of the room and not written: the room as the counters say.
        if (aggregates.newKeys > 0) await this.refreshRoom();
        throw new SliceConflict('snapshot changed');
      }
      if (outcome.status === 'limit') {
        // Another writer took some of the room since it was read (ingestion of another provider, another connection's
        // sync at the same time): the room as it is now, and the changes fitted into it again. The plan's counters are
        // claimed in the same transaction as the keys (a conditional write): what one writer claims, the other sees.
        await this.refreshRoom();
        throw new SliceConflict('the plan\'s room changed');
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
    // New keys in transactions of ≤ 98 (with the plan counters). When another writer took room or created one of
    // them meanwhile: the rest again, within the room as it is now (the keys past it are listed untracked).
    let created = [...fresh.keys.values()];
    for (let attempt = 0; created.length > 0; ) {
      const part = emptyAggregates();
      for (const key of created.slice(0, MAX_ACTIONS - 2)) part.keys.set(key.keyHash, key);
      part.newKeys = part.keys.size;
      try {
        await this.writeBatch([], part);
        created = created.slice(MAX_ACTIONS - 2);
      } catch (error) {
        if (!(error instanceof SliceConflict) || ++attempt > 5) throw error;
        created = created.filter((k) => !this.ctx.chunkContext.knownKeys.has(k.keyHash));
        await this.refreshRoom();
        const fits = created.slice(0, this.ctx.room.keys);
        for (const k of created.slice(fits.length)) {
          this.limitsReached.add('keys');
          this.refusedKeys.add(k.keyHash);
        }
        this.ctx.room.keys -= fits.length;
        created = fits;
      }
    }
    await Promise.all(
      updates.map(async ({ hash, attrs }) => {
        await updateKeyAttributes(accountId, hash, attrs);
        this.result.keysUpdated += 1;
        this.ctx.knownKeys.set(hash, { ...this.ctx.knownKeys.get(hash), ...attrs });
      }),
    );
  }

  /**
   * The plan's room as the account's counters say now (consistent reads): what this sync admitted and did not write
   * is admitted again against it.
   */
  private async refreshRoom(): Promise<void> {
    const [account, used] = await Promise.all([getAccount(this.conn.accountId, true), trackedRequests(this.conn.accountId, this.ctx.period.start, true)]);
    this.ctx.room = { requests: Math.max(0, this.ctx.limits.trackedRequests - used), keys: Math.max(0, this.ctx.limits.keys - (account?.keyCount ?? 0)) };
    this.admittedForBill = new Set([...this.admittedForBill].filter((h) => this.ctx.chunkContext.knownKeys.has(h)));
    this.roomRefreshes += 1;
  }
  /** How many times the room was read again (a racing writer claimed some of it). */
  roomRefreshes = 0;

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

function aggregateCount(a: Aggregates): number {
  return a.keyDayModels.size + a.keys.size + a.days.size + a.months.size + a.dayModels.size + a.monthKeys.size + a.dayKeys.size;
}
