/**
 * The aggregate model: what every spend producer (ingestion, a connection's sync) pre-sums and the one writer
 * (shared/db/usage-writes.ts) writes. Pure, and below both the data layer and the domains: it imports nothing.
 */

/** The actions one DynamoDB transaction may hold: a chunk of spend writes stays within it. */
export const MAX_ACTIONS = 100;

/**
 * Pre-sums of a chunk, in BigInt: 1000 events of up to $1,000,000,000 (10^15 µ$) each, or of up to 10^9 tokens
 * each, pass 2^53, where a `number` stops counting exactly. Written to DynamoDB as they are (the document client
 * marshals `bigint` exactly).
 */
export interface Sums {
  costMicros: bigint;
  requests: bigint;
  inputTokens: bigint;
  cachedInputTokens: bigint;
  outputTokens: bigint;
  unpricedRequests: bigint;
}

/** The attribute prefix of a key × day × model item's price-line quantities (`ln:input`, `ln:output/batch`). */
export const LINE_PREFIX = 'ln:';

export const zeroSums = (): Sums => ({ costMicros: 0n, requests: 0n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n, unpricedRequests: 0n });

export interface KeyDayModel {
  keyHash: string;
  date: string;
  provider: string;
  model: string;
  sums: Sums;
  /** A row of units, not tokens (a connection's images, storage, …): the unit and the quantity to add. */
  unit?: string;
  quantity?: bigint;
  /** A correction of this day of a closed month, booked on `date` (a row of its own). */
  correctionOf?: string;
  /** The quantities to add per price line (`input`, `output/batch`, `web_search`, …: shared/pricing/lines.ts). */
  lines?: Map<string, bigint>;
}

export interface KeyUpdate {
  keyHash: string;
  /** Not known before this batch: the write creates it, once (a condition decides between racing batches). */
  isNew: boolean;
  provider: string;
  hint?: string;
  total: Sums;
  /** The part of `total` on today's UTC date and in the current month (the key item's rolling counters). */
  today: Sums;
  month: Sums;
  /** The parts of `total` on each of the 7 UTC days before today (rolling counters too: the key's forecast). */
  recent: Map<string, Sums>;
  /** Attributes SET on the key item as given (a connection's key: source, name, project, ...). */
  attributes?: Record<string, unknown>;
  /** When the key was last seen in use, if not the write's own time (a connection's key: its latest usage day). */
  lastSeenAt?: string;
  /**
   * Cost by UTC hour (`2026-11-21T14`) of the last day (the key item's hour counters: the spend-anomaly rate and the
   * incident chart): events by their time; a sync's growth of today's figure spread over the time since its last sync.
   */
  hours?: Map<string, bigint>;
  /** A sync: the time its today figure was read (`rateAt` on the key item: where the next sync's spread starts). */
  rateAt?: string;
}

/** An account-wide aggregate of a chunk keyed by `id` (day × model, month × key, day × key). */
export interface Aggregate {
  date: string;
  provider?: string;
  model?: string;
  keyHash?: string;
  sums: Sums;
}

/** The aggregate items a set of changes touches, pre-summed: what both producers (ingestion, a sync) write. */
export interface Aggregates {
  keyDayModels: Map<string, KeyDayModel>;
  keys: Map<string, KeyUpdate>;
  /** Account-wide spend per UTC day and per calendar month. */
  days: Map<string, Sums>;
  months: Map<string, Sums>;
  /** The account's spend per day × model, and per month × key and day × key (GET /spend groupings). */
  dayModels: Map<string, Aggregate>;
  monthKeys: Map<string, Aggregate>;
  dayKeys: Map<string, Aggregate>;
  /** The account's spend per month × customer and month × feature (events that name one). */
  monthCustomers: Map<string, NamedAggregate>;
  monthFeatures: Map<string, NamedAggregate>;
  /** Per month: the sums of the events that name a customer / a feature (the `#TOTAL` items). */
  customerMonths: Map<string, Sums>;
  featureMonths: Map<string, Sums>;
  newKeys: number;
}

/** A month × customer or month × feature sum, with the first and last time of its events in the set. */
export interface NamedAggregate {
  month: string;
  name: string;
  sums: Sums;
  firstAt: string;
  lastAt: string;
}

export interface ChunkContext {
  /** Keys that exist already (read before planning). */
  knownKeys: ReadonlySet<string>;
  today: string;
  month: string;
  /** The 7 UTC days before today (their per-key spend is kept on the key item); default: none. */
  recentDays?: ReadonlySet<string>;
  /** The hours whose per-key spend is kept on the key item (shared/db/rolling.ts `keptHours`), and the current one. */
  keptHours?: ReadonlySet<string>;
  nowHour?: string;
  /** The account's closed months (YYYY-MM): usage of one of their days is booked today as a correction of that day. */
  closedMonths?: ReadonlySet<string>;
}

/** Where a change of `date` is booked (pure): its own day, or today as a correction of a closed month's day. */
export function bookedDay(date: string, ctx: Pick<ChunkContext, 'today' | 'closedMonths'>): { date: string; correctionOf?: string } {
  return ctx.closedMonths?.has(date.slice(0, 7)) ? { date: ctx.today, correctionOf: date } : { date };
}

/** The past months (before the context's month) a set of aggregates writes: each is guarded to stay open. */
export const pastMonthsOf = (a: Aggregates, ctx: Pick<ChunkContext, 'month'>): string[] => [...a.months.keys()].filter((m) => m < ctx.month);

/** One change to the aggregates: an event's counts (ingestion), or the difference of an imported cell (a sync). */
export interface Contribution {
  keyHash: string;
  date: string;
  provider: string;
  model: string;
  keyHint?: string;
  sums: Sums;
  /** The application's customer and feature of an event, and its time (month × customer / feature sums). */
  customerId?: string;
  feature?: string;
  at?: string;
  /** Units, not tokens: counted on the key × day × model row only (GET /keys/:hash `byModel[].unit/quantity`). */
  unit?: string;
  quantity?: bigint;
  /**
   * A change of a day of a closed month found later: `date` is the day it is booked on (the day it was found, in
   * the open month), this the day it corrects. Its key × day × model row is one of its own (`correction: true`).
   */
  correctionOf?: string;
  /** Price-line quantities (shared/pricing/lines.ts `lineQuantities`), counted on the key × day × model row only (the FOCUS export's lines). */
  lines?: ReadonlyMap<string, bigint>;
}

/** The id of a key × day × model aggregate (ingestion also sorts its events by it). */
export const kdmId = (e: Omit<Contribution, 'sums'>) => `${e.keyHash}|${e.date}|${e.provider}|${e.model}${e.correctionOf ? `|${e.correctionOf}` : ''}`;
const dmId = (e: Omit<Contribution, 'sums'>) => `${e.date}|${e.provider}|${e.model}`;
const mkId = (e: Omit<Contribution, 'sums'>) => `${e.date.slice(0, 7)}|${e.keyHash}`;
const dkId = (e: Omit<Contribution, 'sums'>) => `${e.date}|${e.keyHash}`;

/** Actions the aggregates of a set of changes take in its transaction (the plan counters and the guards aside). */
export function aggregateActionCount(a: Aggregates): number {
  return a.keyDayModels.size + a.keys.size + a.days.size + a.months.size + a.dayModels.size + a.monthKeys.size + a.dayKeys.size + a.monthCustomers.size + a.monthFeatures.size + a.customerMonths.size + a.featureMonths.size;
}

const mcId = (c: Pick<Contribution, 'date' | 'customerId'>) => `${c.date.slice(0, 7)}|${c.customerId}`;
const mfId = (c: Pick<Contribution, 'date' | 'feature'>) => `${c.date.slice(0, 7)}|${c.feature}`;

export function emptyAggregates(): Aggregates {
  return {
    keyDayModels: new Map(),
    keys: new Map(),
    days: new Map(),
    months: new Map(),
    dayModels: new Map(),
    monthKeys: new Map(),
    dayKeys: new Map(),
    monthCustomers: new Map(),
    monthFeatures: new Map(),
    customerMonths: new Map(),
    featureMonths: new Map(),
    newKeys: 0,
  };
}

/** Aggregate actions that adding `c` would add to `a` (the account counter included when it makes the first new key). */
export function contributionCost(a: Aggregates, c: Omit<Contribution, 'sums'>, ctx: ChunkContext): number {
  const isNewKey = !ctx.knownKeys.has(c.keyHash) && !a.keys.has(c.keyHash);
  return (
    (a.keyDayModels.has(kdmId(c)) ? 0 : 1) +
    (a.keys.has(c.keyHash) ? 0 : 1) +
    (a.days.has(c.date) ? 0 : 1) +
    (a.months.has(c.date.slice(0, 7)) ? 0 : 1) +
    (a.dayModels.has(dmId(c)) ? 0 : 1) +
    (a.monthKeys.has(mkId(c)) ? 0 : 1) +
    (a.dayKeys.has(dkId(c)) ? 0 : 1) +
    (c.customerId === undefined || a.monthCustomers.has(mcId(c)) ? 0 : 1) +
    (c.feature === undefined || a.monthFeatures.has(mfId(c)) ? 0 : 1) +
    (c.customerId === undefined || a.customerMonths.has(c.date.slice(0, 7)) ? 0 : 1) +
    (c.feature === undefined || a.featureMonths.has(c.date.slice(0, 7)) ? 0 : 1) +
    (isNewKey && a.newKeys === 0 ? 1 : 0)
  );
}

function addSums(target: Sums, sums: Sums): void {
  target.costMicros += sums.costMicros;
  target.requests += sums.requests;
  target.inputTokens += sums.inputTokens;
  target.cachedInputTokens += sums.cachedInputTokens;
  target.outputTokens += sums.outputTokens;
  target.unpricedRequests += sums.unpricedRequests;
}

/** The key's entry of `a` (created, and counted as new when the context does not know it). */
export function keyUpdateOf(a: Aggregates, keyHash: string, provider: string, ctx: ChunkContext): KeyUpdate {
  let key = a.keys.get(keyHash);
  if (!key) {
    const isNew = !ctx.knownKeys.has(keyHash);
    key = { keyHash, isNew, provider, total: zeroSums(), today: zeroSums(), month: zeroSums(), recent: new Map() };
    a.keys.set(keyHash, key);
    if (isNew) a.newKeys += 1;
  }
  return key;
}

/** Adds one change to every aggregate it touches: key × day × model, the key, the account's day and month, spend by model and key. */
export function addContribution(a: Aggregates, c: Contribution, ctx: ChunkContext): void {
  const id = kdmId(c);
  let kdm = a.keyDayModels.get(id);
  if (!kdm) {
    kdm = { keyHash: c.keyHash, date: c.date, provider: c.provider, model: c.model, sums: zeroSums(), ...(c.correctionOf ? { correctionOf: c.correctionOf } : {}) };
    a.keyDayModels.set(id, kdm);
  }
  addSums(kdm.sums, c.sums);
  if (c.unit !== undefined) {
    kdm.unit = c.unit;
    kdm.quantity = (kdm.quantity ?? 0n) + (c.quantity ?? 0n);
  }
  if (c.lines && c.lines.size > 0) {
    kdm.lines ??= new Map();
    for (const [id, q] of c.lines) kdm.lines.set(id, (kdm.lines.get(id) ?? 0n) + q);
  }

  const key = keyUpdateOf(a, c.keyHash, c.provider, ctx);
  if (key.hint === undefined && c.keyHint !== undefined) key.hint = c.keyHint;
  addSums(key.total, c.sums);
  if (c.date === ctx.today) addSums(key.today, c.sums);
  if (c.date.slice(0, 7) === ctx.month) addSums(key.month, c.sums);
  if (ctx.recentDays?.has(c.date)) {
    if (!key.recent.has(c.date)) key.recent.set(c.date, zeroSums());
    addSums(key.recent.get(c.date)!, c.sums);
  }
  if (c.at !== undefined && ctx.keptHours && c.sums.costMicros > 0n) {
    // A time ahead of the clock counts in the current hour.
    const hour = ctx.nowHour !== undefined && c.at.slice(0, 13) > ctx.nowHour ? ctx.nowHour : c.at.slice(0, 13);
    if (ctx.keptHours.has(hour)) {
      key.hours ??= new Map();
      key.hours.set(hour, (key.hours.get(hour) ?? 0n) + c.sums.costMicros);
    }
  }
  addTo(a.dayModels, dmId(c), () => ({ date: c.date, provider: c.provider, model: c.model }), c.sums);
  addTo(a.monthKeys, mkId(c), () => ({ date: c.date.slice(0, 7), keyHash: c.keyHash }), c.sums);
  addTo(a.dayKeys, dkId(c), () => ({ date: c.date, keyHash: c.keyHash }), c.sums);
  if (c.customerId !== undefined) {
    addNamed(a.monthCustomers, mcId(c), c.date.slice(0, 7), c.customerId, c.sums, c.at ?? `${c.date}T00:00:00.000Z`);
    if (!a.customerMonths.has(c.date.slice(0, 7))) a.customerMonths.set(c.date.slice(0, 7), zeroSums());
    addSums(a.customerMonths.get(c.date.slice(0, 7))!, c.sums);
  }
  if (c.feature !== undefined) {
    addNamed(a.monthFeatures, mfId(c), c.date.slice(0, 7), c.feature, c.sums, c.at ?? `${c.date}T00:00:00.000Z`);
    if (!a.featureMonths.has(c.date.slice(0, 7))) a.featureMonths.set(c.date.slice(0, 7), zeroSums());
    addSums(a.featureMonths.get(c.date.slice(0, 7))!, c.sums);
  }

  const month = c.date.slice(0, 7);
  if (!a.days.has(c.date)) a.days.set(c.date, zeroSums());
  if (!a.months.has(month)) a.months.set(month, zeroSums());
  addSums(a.days.get(c.date)!, c.sums);
  addSums(a.months.get(month)!, c.sums);
}

function addNamed(map: Map<string, NamedAggregate>, id: string, month: string, name: string, sums: Sums, at: string): void {
  let aggregate = map.get(id);
  if (!aggregate) {
    aggregate = { month, name, sums: zeroSums(), firstAt: at, lastAt: at };
    map.set(id, aggregate);
  }
  addSums(aggregate.sums, sums);
  if (at < aggregate.firstAt) aggregate.firstAt = at;
  if (at > aggregate.lastAt) aggregate.lastAt = at;
}

function addTo(map: Map<string, Aggregate>, id: string, fields: () => Omit<Aggregate, 'sums'>, sums: Sums): void {
  let aggregate = map.get(id);
  if (!aggregate) {
    aggregate = { ...fields(), sums: zeroSums() };
    map.set(id, aggregate);
  }
  addSums(aggregate.sums, sums);
}
