/**
 * The loader and the measurer of `npm run bench:spend`: an account's AGGREGATES for K keys × M models × D days (ending
 * today), written straight to the table with BatchWriteItem (or TransactWriteItems, 100 items a request: `writeWith`)
 * instead of K·M·D ingests — but built by ingestion's own code, so the items are exactly what ingestion writes: each
 * (key, day, model) is one event priced by `priceEvent`, planned into chunks by `planChunks` and turned into the
 * chunk's update actions by `buildChunkActions` (shared/db/usage-writes.ts); the actions are then applied in memory
 * (`applyUpdate`: the SET / ADD / REMOVE forms those builders emit) and the resulting items Put. The events'
 * exactly-once items are not written (they are not aggregates and expire anyway), nor the account item (its `keyCount`
 * gets ONE ADD at the end instead of being overwritten).
 *
 * The expected sums come from the events themselves (`expectedTotals`), independently of any aggregate, so the
 * bench — and the smoke test that runs this loader small — can check GET /spend against them.
 */
import { randomBytes, createHash } from 'node:crypto';
import { BatchWriteCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName, type Item } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { recentDays } from '#shared/db/rolling.ts';
import { buildChunkActions } from '#shared/db/usage-writes.ts';
import { planChunks } from '#shared/ingest/chunks.ts';
import { isRejection, priceEvent, type PricedEvent } from '#shared/ingest/events.ts';
import { addDays, isoDate, isoMonth } from '#shared/time/periods.ts';

type Action = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type Update = NonNullable<Action['Update']>;

export interface LoadShape {
  keys: number;
  models: number;
  days: number;
}

/** Ten models over three providers, so `groupBy=provider` has groups too (cycled past ten). */
export const BENCH_MODELS: readonly { provider: string; model: string }[] = [
  { provider: 'openai', model: 'gpt-4o' },
  { provider: 'openai', model: 'gpt-4o-mini' },
  { provider: 'openai', model: 'gpt-4.1' },
  { provider: 'openai', model: 'o3' },
  { provider: 'anthropic', model: 'claude-sonnet-4-5' },
  { provider: 'anthropic', model: 'claude-haiku-4-5' },
  { provider: 'anthropic', model: 'claude-opus-4-1' },
  { provider: 'google', model: 'gemini-2.5-pro' },
  { provider: 'google', model: 'gemini-2.5-flash' },
  { provider: 'mistral', model: 'mistral-large-latest' },
];

export const modelOf = (m: number) => {
  const base = BENCH_MODELS[m % BENCH_MODELS.length]!;
  return m < BENCH_MODELS.length ? base : { provider: base.provider, model: `${base.model}-v${Math.floor(m / BENCH_MODELS.length)}` };
};

/** A cost in µ$ that differs by key, model and day (whole micro-dollars: `costUsd` with ≤ 6 decimals). */
export const benchCostMicros = (k: number, m: number, d: number) => 1 + ((k * 7919 + m * 104_729 + d * 1_299_709) % 5_000_000);

/** The day `d` of the loaded range: 0 is the oldest, `days - 1` is today. */
export const benchDate = (today: string, days: number, d: number) => addDays(today, d - (days - 1));

/** The key hashes of one run (random per run: a fresh account each time anyway). */
export function benchKeyHashes(n: number): string[] {
  const seed = randomBytes(8).toString('hex');
  return Array.from({ length: n }, (_, k) => createHash('sha256').update(`sk-bench-${seed}-${k}`).digest('hex'));
}

/**
 * Applies one update action, as ingestion's builders write them, to an item in memory: `SET a = :v`,
 * `SET a = if_not_exists(a, :v)`, `ADD a :n` (numbers, summed exactly), `REMOVE a`; names through `#x`.
 * Anything else throws — the loader must never write a shape it did not understand.
 */
export function applyUpdate(item: Item, update: Pick<Update, 'UpdateExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>): Item {
  const names = update.ExpressionAttributeNames ?? {};
  const values = (update.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const name = (token: string) => (token.startsWith('#') ? (names[token] ?? fail(`unknown name ${token}`)) : token);
  const value = (token: string) => (token in values ? values[token] : fail(`unknown value ${token}`));
  const match = /^(?:SET (.*?))?\s*(?:ADD (.*?))?\s*(?:REMOVE (.*))?$/.exec(update.UpdateExpression ?? '');
  if (!match) fail(`unexpected update ${update.UpdateExpression}`);
  const [, sets, adds, removes] = match!;
  for (const clause of splitTopLevel(sets)) {
    const m = /^(\S+) = (?:if_not_exists\((\S+), (:\w+)\)|(:\w+))$/.exec(clause);
    if (!m) fail(`unexpected SET clause ${clause}`);
    const [, lhs, ifName, ifValue, plain] = m!;
    const target = name(lhs!);
    if (ifName !== undefined) {
      if (name(ifName) !== target) fail(`if_not_exists of another attribute: ${clause}`);
      if (item[target] === undefined) item[target] = value(ifValue!);
    } else item[target] = value(plain!);
  }
  for (const clause of splitTopLevel(adds)) {
    const m = /^(\S+) (:\w+)$/.exec(clause);
    if (!m) fail(`unexpected ADD clause ${clause}`);
    const target = name(m![1]!);
    const add = value(m![2]!);
    if (typeof add !== 'bigint' && typeof add !== 'number') fail(`ADD of a non-number: ${clause}`);
    const before = item[target] ?? 0;
    item[target] = typeof before === 'bigint' || typeof add === 'bigint' ? BigInt(before as number | bigint) + BigInt(add as number | bigint) : (before as number) + (add as number);
  }
  for (const clause of splitTopLevel(removes)) delete item[name(clause)];
  return item;
}

const fail = (message: string): never => {
  throw new Error(`bench loader: ${message}`);
};

/** `a = :a, b = if_not_exists(b, :b)` → its clauses (commas inside parentheses kept). */
function splitTopLevel(text: string | undefined): string[] {
  if (!text?.trim()) return [];
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** The events of key `k`: one per (day, model), priced by ingestion's own `priceEvent`. */
export function keyEvents(keyHash: string, k: number, shape: LoadShape, today: string): PricedEvent[] {
  const events: PricedEvent[] = [];
  for (let d = 0; d < shape.days; d++) {
    const date = benchDate(today, shape.days, d);
    const at = new Date(`${date}T00:00:01.000Z`);
    for (let m = 0; m < shape.models; m++) {
      const { provider, model } = modelOf(m);
      const raw = {
        requestId: `bench-${k}-${d}-${m}-${keyHash.slice(0, 8)}`,
        keyHash,
        ...(k % 3 === 0 ? {} : { keyHint: `sk-…${keyHash.slice(-4)}` }),
        provider,
        model,
        inputTokens: 1000 + m,
        cachedInputTokens: 100,
        outputTokens: 200 + d,
        costUsd: benchCostMicros(k, m, d) / 1e6,
        timestamp: at.toISOString(),
      };
      // Priced "as of" its own timestamp: ingestion refuses events older than 35 days, the aggregates do not care.
      const priced = priceEvent(raw, events.length, at);
      if (isRejection(priced)) throw new Error(`bench loader: ${priced.message}`);
      events.push(priced);
    }
  }
  return events;
}

export interface LoadResult {
  keyHashes: string[];
  /** Items Put. */
  items: number;
  /** BatchWriteItem (or TransactWriteItems) requests sent (retries included). */
  batchWrites: number;
  ms: number;
}

export interface LoadOptions {
  now?: Date;
  /** Write requests in flight. */
  concurrency?: number;
  /**
   * `TransactWriteItems`: Put the items 100 per request instead of BatchWriteItem's 25. DynamoDB Local commits each
   * request on its own, so this writes 2–3× faster there (29,730 items of 990 keys × 13 models × 2 days with their
   * export rows, 8 in flight, on this machine: 24–34 s against 53 s); in AWS a transaction costs twice the write
   * units. Default `BatchWriteItem`.
   */
  writeWith?: 'BatchWriteItem' | 'TransactWriteItems';
  /**
   * Write the key × day × model items (the export's rows; GET /spend never reads them) of the most recent
   * `rowDays` days only (default: every day; 0: none).
   */
  rowDays?: number;
  onProgress?: (keysDone: number, itemsWritten: number) => void;
}

/**
 * Loads the aggregates for `shape` into `accountId` (an existing account). Key by key: a key's own items (its key
 * item, day × model items, month × key and day × key aggregates) are written as soon as the key is planned; the
 * account-wide ones (day, month, period, day × model) after the last key.
 */
export async function loadAggregates(accountId: string, shape: LoadShape, options: LoadOptions = {}): Promise<LoadResult> {
  const started = performance.now();
  const now = options.now ?? new Date();
  const today = isoDate(now);
  const month = isoMonth(now);
  const concurrency = options.concurrency ?? 8;
  const keyHashes = benchKeyHashes(shape.keys);
  const ctx = { knownKeys: new Set<string>(), today, month, recentDays: new Set(recentDays(today)) };
  const accountWide = new Map<string, Item>();
  const accountPk = keys.account(accountId).pk;
  const accountSk = keys.account(accountId).sk;
  const sharedPks = new Set([keys.usageDay(accountId, today).pk, keys.spendDayModel(accountId, today, 'p', 'm').pk]);
  const rowPkPrefix = keys.providerKey(accountId, '').pk;
  const firstRowDay = addDays(today, -((options.rowDays ?? shape.days) - 1));
  let items = 0;
  let batchWrites = 0;
  const queued: Item[] = [];

  const transact = options.writeWith === 'TransactWriteItems';
  const perRequest = transact ? 100 : 25;
  const put = async (list: Item[]) => {
    const batches: Item[][] = [];
    for (let i = 0; i < list.length; i += perRequest) batches.push(list.slice(i, i + perRequest));
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        if (transact) {
          // Distinct items, so no condition can fail; only a throttle or a conflict with another writer: retried.
          for (let attempt = 0; ; attempt++) {
            batchWrites += 1;
            try {
              await db().send(new TransactWriteCommand({ TransactItems: batch.map((Item) => ({ Put: { TableName: tableName(), Item } })) }));
              break;
            } catch (error) {
              if (attempt === 9 || !/Throttl|Conflict|TransactionCanceled|InProgress/.test((error as Error).name)) throw error;
              await new Promise((r) => setTimeout(r, 20 * 2 ** (attempt + 1)));
            }
          }
          continue;
        }
        let pending = batch.map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt === 10) throw new Error('bench loader: BatchWriteItem left items unprocessed after 10 attempts');
          if (attempt > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
          batchWrites += 1;
          const res = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
          pending = (res.UnprocessedItems?.[tableName()] as typeof pending | undefined) ?? [];
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
    items += list.length;
  };

  for (const [k, keyHash] of keyHashes.entries()) {
    const own = new Map<string, Item>();
    for (const chunk of planChunks(keyEvents(keyHash, k, shape, today), ctx)) {
      const { actions } = buildChunkActions({ accountId, chunk, now, today, month, periodStart: `${month}-01T00:00:00.000Z`, limits: { trackedRequests: 1e12, keys: 1e9 } });
      for (const action of actions) {
        const update = action.Update;
        if (!update) continue; // an event's exactly-once Put
        const key = update.Key as { pk: string; sk: string };
        if (key.pk === accountPk && key.sk === accountSk) continue; // keyCount: one ADD at the end
        if (key.pk.startsWith(rowPkPrefix) && key.sk.startsWith('DAY#') && key.sk.slice(4, 14) < firstRowDay) continue;
        const id = `${key.pk}\u0000${key.sk}`;
        const map = sharedPks.has(key.pk) ? accountWide : own;
        map.set(id, applyUpdate(map.get(id) ?? { ...key }, update));
      }
    }
    // A key's own items are few when the export rows are left out: write several keys' items per round of batches.
    queued.push(...own.values());
    if (queued.length >= perRequest * concurrency || k === keyHashes.length - 1) await put(queued.splice(0));
    options.onProgress?.(k + 1, items);
  }
  await put([...accountWide.values()]);
  await db().send(
    new UpdateCommand({ TableName: tableName(), Key: keys.account(accountId), UpdateExpression: 'ADD keyCount :n', ExpressionAttributeValues: { ':n': shape.keys } }),
  );
  return { keyHashes, items, batchWrites, ms: performance.now() - started };
}

export interface ExpectedTotals {
  costMicros: bigint;
  requests: number;
  /** Days of the range with spend, distinct models and providers, keys with spend. */
  days: number;
  models: number;
  providers: number;
  keys: number;
}

/** What GET /spend must answer for [from, to], summed from the events' own costs (no aggregate involved). */
export function expectedTotals(shape: LoadShape, today: string, from: string, to: string): ExpectedTotals {
  let costMicros = 0n;
  let days = 0;
  for (let d = 0; d < shape.days; d++) {
    const date = benchDate(today, shape.days, d);
    if (date < from || date > to) continue;
    days += 1;
    for (let k = 0; k < shape.keys; k++) for (let m = 0; m < shape.models; m++) costMicros += BigInt(benchCostMicros(k, m, d));
  }
  const any = days > 0;
  const providers = new Set(Array.from({ length: shape.models }, (_, m) => modelOf(m).provider));
  return {
    costMicros,
    requests: days * shape.keys * shape.models,
    days,
    models: any ? shape.models : 0,
    providers: any ? providers.size : 0,
    keys: any ? shape.keys : 0,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring GET /spend

export const GROUPINGS = ['day', 'model', 'provider', 'key'] as const;

/** One API call as the measurer sees it: DynamoDB requests and read units it caused (null: not measurable here). */
export interface Measured {
  status: number;
  body: unknown;
  ms: number;
  requests: number | null;
  commands: string;
  rcu: number | null;
}

/** A range ending today: its length in days, or `mtd` (the month to date: GET /spend's default). */
export type BenchRange = number | 'mtd';

export interface SpendRow {
  groupBy: string;
  /** `31 days`, `month to date`. */
  range: string;
  days: number;
  from: string;
  to: string;
  status: number;
  requests: number | null;
  commands: string;
  rcu: number | null;
  p50: number;
  p95: number;
  groups: number;
  totalCost: string;
  /** The answer's total and group count agree with `expectedTotals` (summed from the events). */
  exact: boolean;
  mismatch?: string;
}

interface SpendBody {
  total: { costUsd: number; requests: number };
  groups: unknown[];
}

/** `runs` timed calls of `path` after one warm-up (the handler's module, DynamoDB Local's caches): the last answer; its cost, p50 and p95. */
async function timed(get: (path: string) => Promise<Measured>, path: string, runs: number) {
  await get(path);
  const times: number[] = [];
  let last = await get(path);
  times.push(last.ms);
  for (let i = 1; i < runs; i++) {
    last = await get(path);
    times.push(last.ms);
  }
  times.sort((a, b) => a - b);
  const { status, requests, commands, rcu } = last;
  return { last, cost: { status, requests, commands, rcu, p50: nearest(times, 50), p95: nearest(times, 95) } };
}

const nearest = (sorted: number[], p: number) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] ?? Number.NaN;

/**
 * Each grouping × range ending today: `runs` timed calls after one warm-up; requests and read units of the last
 * call (they are the same on every call); the answer checked against the events' own sums.
 */
export async function measureSpend(
  get: (path: string) => Promise<Measured>,
  shape: LoadShape,
  today: string,
  ranges: readonly BenchRange[],
  runs: number,
): Promise<SpendRow[]> {
  const rows: SpendRow[] = [];
  for (const range of ranges) {
    const from = range === 'mtd' ? `${today.slice(0, 7)}-01` : addDays(today, -(range - 1));
    const days = range === 'mtd' ? Number(today.slice(8, 10)) : range;
    const expected = expectedTotals(shape, today, from, today);
    for (const groupBy of GROUPINGS) {
      const path = `/spend?groupBy=${groupBy}&from=${from}&to=${today}`;
      const { last, cost } = await timed(get, path, runs);
      const body = last.body as SpendBody;
      const wantGroups = { day: days, model: expected.models, provider: expected.providers, key: Math.min(100, expected.keys) }[groupBy];
      const problems: string[] = [];
      if (last.status !== 200) problems.push(`status ${last.status}`);
      else {
        const cost = BigInt(Math.round(body.total.costUsd * 1e6));
        if (cost !== expected.costMicros) problems.push(`cost ${body.total.costUsd} ≠ ${Number(expected.costMicros) / 1e6}`);
        if (body.total.requests !== expected.requests) problems.push(`requests ${body.total.requests} ≠ ${expected.requests}`);
        if (body.groups.length !== wantGroups) problems.push(`${body.groups.length} groups ≠ ${wantGroups}`);
      }
      rows.push({
        groupBy,
        range: range === 'mtd' ? `month to date (${days} d)` : `${days} days`,
        days,
        from,
        to: today,
        ...cost,
        groups: body?.groups?.length ?? 0,
        totalCost: last.status === 200 ? body.total.costUsd.toFixed(6) : '–',
        exact: problems.length === 0,
        ...(problems.length ? { mismatch: problems.join('; ') } : {}),
      });
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring GET /keys: search, sort and paging over every key of the account (docs/features/spend-and-exports.md)

export interface KeySearchRow {
  name: string;
  path: string;
  status: number;
  requests: number | null;
  commands: string;
  rcu: number | null;
  p50: number;
  p95: number;
  items: number;
  total: number | null;
  /** The answer holds what it must (the key searched for; `total` = every key). */
  exact: boolean;
  mismatch?: string;
}

interface KeyListBody {
  items: { hash: string; label: string | null }[];
  total: number;
  nextCursor: string | null;
}

/**
 * The searches a person makes on Keys, each `runs` times after a warm-up: the first page in the default order and by
 * name, key number `target` by a part of its label (when `label` was set on it), by its hash's first 8 characters
 * and by its hint, and the second page of a sort. Each answer is checked: the key is found, `total` counts them all.
 */
export async function measureKeySearch(
  get: (path: string) => Promise<Measured>,
  keyHashes: readonly string[],
  runs: number,
  target: number,
  label?: string,
): Promise<KeySearchRow[]> {
  const hash = keyHashes[target]!;
  const all = keyHashes.length;
  // Keys k % 3 === 0 have no hint (bench loader): search the hint of a key that has one.
  const hinted = target % 3 === 0 ? target + 1 : target;
  const cases: { name: string; path: string; want: (b: KeyListBody) => string | undefined }[] = [
    { name: 'first page (month to date)', path: '/keys?limit=50', want: (b) => (b.total === all ? undefined : `total ${b.total} ≠ ${all}`) },
    { name: 'first page by name', path: '/keys?limit=50&sort=name', want: (b) => (b.total === all ? undefined : `total ${b.total} ≠ ${all}`) },
    ...(label
      ? [{ name: `key #${target} by label part`, path: `/keys?q=${encodeURIComponent(label.slice(-6).toUpperCase())}`, want: (b: KeyListBody) => (b.items.some((k) => k.hash === hash) ? undefined : 'not found') }]
      : []),
    { name: `key #${target} by hash prefix`, path: `/keys?q=${hash.slice(0, 8)}`, want: (b) => (b.items[0]?.hash === hash ? undefined : 'not found') },
    {
      name: `key #${hinted} by hint`,
      path: `/keys?q=${keyHashes[hinted]!.slice(-4)}`,
      want: (b) => (b.items.some((k) => k.hash === keyHashes[hinted]) ? undefined : 'not found'),
    },
    { name: 'lowest total first', path: '/keys?limit=50&sort=total&order=asc', want: (b) => (b.total === all ? undefined : `total ${b.total} ≠ ${all}`) },
  ];
  const rows: KeySearchRow[] = [];
  for (const c of cases) {
    const { last, cost } = await timed(get, c.path, runs);
    const body = last.body as KeyListBody;
    const mismatch = last.status !== 200 ? `status ${last.status}` : c.want(body);
    rows.push({
      name: c.name,
      path: c.path,
      ...cost,
      items: body?.items?.length ?? 0,
      total: body?.total ?? null,
      exact: mismatch === undefined,
      ...(mismatch ? { mismatch } : {}),
    });
  }
  return rows;
}
