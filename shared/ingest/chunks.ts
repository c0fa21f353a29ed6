/**
 * Plans how a batch of priced events is written: pre-summed aggregates, split into transactions of ≤ 100 actions.
 * Pure. Events are sorted by (key, day, model) first, so a chunk touches few aggregate items and most of its
 * actions are the events' own exactly-once items.
 */
import type { PricedEvent } from '#shared/ingest/events.ts';

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

export const zeroSums = (): Sums => ({ costMicros: 0n, requests: 0n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n, unpricedRequests: 0n });

function add(sums: Sums, e: PricedEvent): void {
  sums.costMicros += BigInt(e.costMicros);
  sums.requests += 1n;
  sums.inputTokens += BigInt(e.inputTokens);
  sums.cachedInputTokens += BigInt(e.cachedInputTokens);
  sums.outputTokens += BigInt(e.outputTokens);
  if (!e.priced) sums.unpricedRequests += 1n;
}

export interface KeyDayModel {
  keyHash: string;
  date: string;
  provider: string;
  model: string;
  sums: Sums;
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
}

/** An account-wide aggregate of a chunk keyed by `id` (day × model, month × key, day × key). */
export interface Aggregate {
  date: string;
  provider?: string;
  model?: string;
  keyHash?: string;
  sums: Sums;
}

export interface Chunk {
  events: PricedEvent[];
  keyDayModels: Map<string, KeyDayModel>;
  keys: Map<string, KeyUpdate>;
  /** Account-wide spend per UTC day and per calendar month. */
  days: Map<string, Sums>;
  months: Map<string, Sums>;
  /** The account's spend per day × model, and per month × key and day × key (GET /spend groupings). */
  dayModels: Map<string, Aggregate>;
  monthKeys: Map<string, Aggregate>;
  dayKeys: Map<string, Aggregate>;
  newKeys: number;
}

export interface ChunkContext {
  /** Keys that exist already (read before planning). */
  knownKeys: ReadonlySet<string>;
  today: string;
  month: string;
  /** The 7 UTC days before today (their per-key spend is kept on the key item); default: none. */
  recentDays?: ReadonlySet<string>;
}

const kdmId = (e: PricedEvent) => `${e.keyHash}|${e.date}|${e.provider}|${e.model}`;
const dmId = (e: PricedEvent) => `${e.date}|${e.provider}|${e.model}`;
const mkId = (e: PricedEvent) => `${e.date.slice(0, 7)}|${e.keyHash}`;
const dkId = (e: PricedEvent) => `${e.date}|${e.keyHash}`;

/** Actions a chunk's transaction holds: events + aggregates + the plan-usage counter + the account (if keys are new). */
export function actionCount(chunk: Chunk): number {
  return (
    chunk.events.length +
    chunk.keyDayModels.size +
    chunk.keys.size +
    chunk.days.size +
    chunk.months.size +
    chunk.dayModels.size +
    chunk.monthKeys.size +
    chunk.dayKeys.size +
    1 +
    (chunk.newKeys > 0 ? 1 : 0)
  );
}

function emptyChunk(): Chunk {
  return {
    events: [],
    keyDayModels: new Map(),
    keys: new Map(),
    days: new Map(),
    months: new Map(),
    dayModels: new Map(),
    monthKeys: new Map(),
    dayKeys: new Map(),
    newKeys: 0,
  };
}

/** Actions that adding `e` would add to `chunk`. */
function cost(chunk: Chunk, e: PricedEvent, ctx: ChunkContext): number {
  const isNewKey = !ctx.knownKeys.has(e.keyHash) && !chunk.keys.has(e.keyHash);
  return (
    1 +
    (chunk.keyDayModels.has(kdmId(e)) ? 0 : 1) +
    (chunk.keys.has(e.keyHash) ? 0 : 1) +
    (chunk.days.has(e.date) ? 0 : 1) +
    (chunk.months.has(e.date.slice(0, 7)) ? 0 : 1) +
    (chunk.dayModels.has(dmId(e)) ? 0 : 1) +
    (chunk.monthKeys.has(mkId(e)) ? 0 : 1) +
    (chunk.dayKeys.has(dkId(e)) ? 0 : 1) +
    (isNewKey && chunk.newKeys === 0 ? 1 : 0)
  );
}

function addEvent(chunk: Chunk, e: PricedEvent, ctx: ChunkContext): void {
  chunk.events.push(e);
  const id = kdmId(e);
  let kdm = chunk.keyDayModels.get(id);
  if (!kdm) {
    kdm = { keyHash: e.keyHash, date: e.date, provider: e.provider, model: e.model, sums: zeroSums() };
    chunk.keyDayModels.set(id, kdm);
  }
  add(kdm.sums, e);

  let key = chunk.keys.get(e.keyHash);
  if (!key) {
    const isNew = !ctx.knownKeys.has(e.keyHash);
    key = { keyHash: e.keyHash, isNew, provider: e.provider, total: zeroSums(), today: zeroSums(), month: zeroSums(), recent: new Map() };
    chunk.keys.set(e.keyHash, key);
    if (isNew) chunk.newKeys += 1;
  }
  if (key.hint === undefined && e.keyHint !== undefined) key.hint = e.keyHint;
  add(key.total, e);
  if (e.date === ctx.today) add(key.today, e);
  if (e.date.slice(0, 7) === ctx.month) add(key.month, e);
  if (ctx.recentDays?.has(e.date)) {
    if (!key.recent.has(e.date)) key.recent.set(e.date, zeroSums());
    add(key.recent.get(e.date)!, e);
  }
  addTo(chunk.dayModels, dmId(e), () => ({ date: e.date, provider: e.provider, model: e.model }), e);
  addTo(chunk.monthKeys, mkId(e), () => ({ date: e.date.slice(0, 7), keyHash: e.keyHash }), e);
  addTo(chunk.dayKeys, dkId(e), () => ({ date: e.date, keyHash: e.keyHash }), e);

  const month = e.date.slice(0, 7);
  if (!chunk.days.has(e.date)) chunk.days.set(e.date, zeroSums());
  if (!chunk.months.has(month)) chunk.months.set(month, zeroSums());
  add(chunk.days.get(e.date)!, e);
  add(chunk.months.get(month)!, e);
}

function addTo(map: Map<string, Aggregate>, id: string, fields: () => Omit<Aggregate, 'sums'>, e: PricedEvent): void {
  let aggregate = map.get(id);
  if (!aggregate) {
    aggregate = { ...fields(), sums: zeroSums() };
    map.set(id, aggregate);
  }
  add(aggregate.sums, e);
}

const order = (a: PricedEvent, b: PricedEvent) => (kdmId(a) < kdmId(b) ? -1 : kdmId(a) > kdmId(b) ? 1 : a.index - b.index);

/** Splits events into chunks of at most MAX_ACTIONS actions each, with their pre-summed aggregates. */
export function planChunks(events: readonly PricedEvent[], ctx: ChunkContext): Chunk[] {
  const chunks: Chunk[] = [];
  let chunk = emptyChunk();
  for (const e of [...events].sort(order)) {
    if (chunk.events.length > 0 && actionCount(chunk) + cost(chunk, e, ctx) > MAX_ACTIONS) {
      chunks.push(chunk);
      chunk = emptyChunk();
    }
    addEvent(chunk, e, ctx);
  }
  if (chunk.events.length > 0) chunks.push(chunk);
  return chunks;
}
