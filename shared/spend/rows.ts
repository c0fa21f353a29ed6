/**
 * The exports' row model (docs/features/spend-and-exports.md), pure: what one key × day × model item of the export
 * rows index says, as the CSV and the FOCUS export both write it.
 *
 * - **Settled**, row by row, from the same source as `GET /spend?groupBy=day` and the reconciliation: a row of a
 *   connection's key is settled when its connection has settled that day (shared/spend/coverage.ts `isSettled`: the
 *   connection's unsettled days, its backfill, today never); a key that reports through `/ingest` never is.
 * - **Anthropic Priority Tier** is never billed in the cost report: its usage is a part of its own
 *   (`<model> (priority)`), never settled, counted at its estimate (settlement keeps that estimate on the row).
 * - **Price lines**: the row's stored line quantities (`ln:<line>[/<tier>]`, written by ingestion and the import)
 *   priced by THE function (shared/pricing/lines.ts) at the account's own prices and the table's list prices. The
 *   row's cost (what Burnrate counts: the bill where settled) is allocated to its lines in proportion to their
 *   contracted costs, largest remainder, exact to the micro-dollar; a row the table can't price (OpenRouter's dollars,
 *   an event's own `costUsd` for a model without a price, a bill line no usage explains) is one line counted in the
 *   dollars it was billed (`priceSource: "billed"`).
 * - `correction`: a row's own flag (the closed-months work writes corrections as rows marked `correction: true`, with
 *   `correctionOf` the day they correct: FOCUS `ChargeClass: Correction`, its charge period that day).
 */
import type { Item } from '#shared/db/client.ts';
import { readInt } from '#shared/db/numbers.ts';
import type { Connection } from '#shared/db/connections.ts';
import { LINE_PREFIX } from '#shared/usage/aggregates.ts';
import { priceLineQuantities, type OwnPriceLookup } from '#shared/pricing/pricing.ts';
import { costOfLines, lineCost, ratio, TOKEN_LINES, type PriceLine, type Ratio } from '#shared/pricing/lines.ts';
import { largestRemainder } from '#shared/connections/settle.ts';
import { isSettled } from '#shared/spend/coverage.ts';
import { shownModel } from '#shared/usage/names.ts';

/** What a row says of its key, from the key index: its label, the provider's name, its project. */
export interface RowKey {
  label: string | null;
  name: string | null;
  project: { id: string; name: string } | null;
}

/** A key as the exports name it. */
export interface ExportKey extends RowKey {
  source: 'ingest' | 'connection';
  hint: string | null;
  /** The connection that imports it (null: a key of `/ingest`). */
  connectionId: string | null;
  /** Usage without a key (`<provider>:unattributed`): no resource. */
  keyless: boolean;
  /** The key's effective tags (its `effectiveTags` where the key item has them), a JSON object of strings. */
  tags: Record<string, string>;
}

/** The key of a key index item (shared/db/discovered-keys.ts). */
export function exportKeyOf(item: Item): ExportKey {
  const p = item.project as { id?: unknown; name?: unknown } | null | undefined;
  const tags = item.effectiveTags;
  const source = item.source === 'connection' ? 'connection' : 'ingest';
  return {
    label: (item.label as string | null | undefined) ?? null,
    name: typeof item.name === 'string' ? item.name : null,
    project: p && typeof p.id === 'string' ? { id: p.id, name: typeof p.name === 'string' ? p.name : p.id } : null,
    source,
    hint: typeof item.hint === 'string' ? item.hint : null,
    connectionId: typeof item.connectionId === 'string' ? item.connectionId : null,
    keyless: source === 'connection' && item.providerKeyId === null,
    tags:
      tags && typeof tags === 'object' && !Array.isArray(tags)
        ? Object.fromEntries(Object.entries(tags as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'))
        : {},
  };
}

export interface ExportContext {
  /** Today (UTC): never settled. */
  today: string;
  keys: ReadonlyMap<string, ExportKey>;
  connections: readonly Connection[];
  account: { id: string; name: string };
  own: OwnPriceLookup;
}

/** A price line with the part of the row's cost it carries. */
export interface BilledLine {
  line: PriceLine;
  billedMicros: bigint;
  /** `table` / `own`: priced; `billed`: counted in the dollars billed (the line's unit price is 1 per USD). */
  priceSource: 'table' | 'own' | 'billed';
}

export interface RowPart {
  /** The row's model, or `<model> (priority)` for Anthropic Priority Tier usage. */
  model: string;
  priority: boolean;
  settled: boolean;
  correction: boolean;
  /** The day a correction corrects (the item's `correctionOf`; FOCUS `ChargePeriodStart`); else the row's day. */
  chargeDate: string;
  costMicros: bigint;
  requests: bigint;
  inputTokens: bigint;
  cachedInputTokens: bigint;
  outputTokens: bigint;
  lines: BilledLine[];
}

/** The connection a row's key belongs to: its own, else the account's connection of the row's provider. */
export function connectionOf(key: ExportKey | null, provider: string, ctx: Pick<ExportContext, 'connections'>): Connection | undefined {
  if (key?.source === 'ingest') return undefined;
  return (key?.connectionId ? ctx.connections.find((c) => c.id === key.connectionId) : undefined) ?? (key ? ctx.connections.find((c) => c.provider === provider) : undefined);
}

/** The model a unit row is priced as (`images:dall-e-3` → `dall-e-3`); a token row's own. */
const pricingModel = (item: Item) => {
  const model = item.model as string;
  return item.unit !== undefined && model.includes(':') ? model.slice(model.indexOf(':') + 1) : model;
};

/** The stored price-line quantities of a row (`ln:` attributes > 0). */
export function storedLines(item: Item): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const [name, value] of Object.entries(item)) {
    if (!name.startsWith(LINE_PREFIX)) continue;
    const q = readInt(value, name);
    if (q > 0n) out.set(name.slice(LINE_PREFIX.length), q);
  }
  return out;
}

const isToken = (l: PriceLine) => (TOKEN_LINES as readonly string[]).includes(l.line);
const isPriority = (provider: string, l: PriceLine) => provider === 'anthropic' && (l.tier?.startsWith('priority') ?? false);

/** Integer weights proportional to the lines' exact contracted costs (a common denominator). */
function weightsOf(lines: readonly PriceLine[]): bigint[] {
  const costs = lines.map((l) => lineCost(l, l.contracted));
  let den = 1n;
  const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));
  for (const c of costs) den = (den / gcd(den, c.den)) * c.den;
  return costs.map((c) => (c.num * den) / c.den);
}

/** The tokens of lines, as the CSV counts them (input includes cache reads and writes). */
function tokensOf(lines: readonly PriceLine[]) {
  let input = 0n;
  let cached = 0n;
  let output = 0n;
  for (const l of lines) {
    if (!isToken(l)) continue;
    if (l.line === 'output') output += l.quantity;
    else input += l.quantity;
    if (l.line === 'cached_input') cached += l.quantity;
  }
  return { input, cached, output };
}

/**
 * A line counted in the dollars billed: ConsumedQuantity the row's tokens (else its requests, else the dollars),
 * PricingQuantity the dollars, at 1 per USD.
 */
function billedLine(lines: readonly PriceLine[], requests: bigint, micros: bigint, rowTokens = 0n): PriceLine {
  // The lines' tokens; a row stored before lines were counted: its own token sums.
  const tokens = lines.length > 0 ? lines.filter(isToken).reduce((s, l) => s + l.quantity, 0n) : rowTokens;
  const [quantity, consumedUnit] = tokens > 0n ? [tokens, 'Tokens'] : requests > 0n ? [requests, 'Requests'] : [micros, 'USD'];
  const usd: Ratio = ratio(1_000_000n, 1n); // µ$ per USD
  return {
    id: 'usage',
    line: 'usage',
    tier: null,
    quantity,
    consumedUnit,
    pricingUnit: 'USD',
    // PricingQuantity = the dollars billed, whatever the consumed quantity.
    scale: consumedUnit === 'USD' ? ratio(1n, 1_000_000n) : ratio(micros, quantity * 1_000_000n),
    list: usd,
    contracted: usd,
    source: 'none',
    exact: true,
    meter: 'Billed Usage',
  };
}

/** Splits `micros` over lines by their contracted costs; undefined when they can't be weighed (a line without a price, or no cost). */
function allocate(lines: readonly PriceLine[], micros: bigint): BilledLine[] | undefined {
  if (lines.length === 0 || lines.some((l) => l.contracted === null)) return undefined;
  const shares = largestRemainder(micros, weightsOf(lines));
  if (!shares) return undefined;
  return lines.map((line, i) => ({ line, billedMicros: shares[i]!, priceSource: line.source === 'own' ? 'own' : 'table' }));
}

/** A row's parts: the row itself and, for Anthropic Priority Tier usage, a part of its own. */
export function rowParts(item: Item, key: ExportKey | null, ctx: ExportContext): RowPart[] {
  const provider = item.provider as string;
  // A day its provider breaks down by model only once complete (OpenRouter's today) has no model.
  const model = shownModel(item.model as string) ?? '';
  const date = item.date as string;
  const int = (name: string) => readInt(item[name] ?? 0n, name);
  const cost = int('costMicros');
  const requests = int('requests');
  const connection = connectionOf(key, provider, ctx);
  const settled = connection !== undefined && isSettled(connection, date, ctx.today);
  const correction = item.correction === true;
  const chargeDate = typeof item.correctionOf === 'string' ? item.correctionOf : date;
  const priced = priceLineQuantities(provider, pricingModel(item), storedLines(item), ctx.own);
  const priority = priced.filter((l) => isPriority(provider, l));
  const rest = priced.filter((l) => !isPriority(provider, l));
  const parts: RowPart[] = [];

  // Priority Tier: its estimate (settlement keeps it), never more than the row holds.
  let priorityMicros = priority.length > 0 ? costOfLines(priority).costMicros : 0n;
  if (cost >= 0n && priorityMicros > cost) priorityMicros = cost;
  const restMicros = cost - priorityMicros;
  if (rest.length > 0 || priority.length === 0 || restMicros !== 0n) {
    const t = tokensOf(priority);
    const lines =
      allocate(rest, restMicros) ??
      (rest.length > 0 || restMicros !== 0n
        ? [{ line: billedLine(rest, requests, restMicros, int('inputTokens') - t.input + int('outputTokens') - t.output), billedMicros: restMicros, priceSource: 'billed' as const }]
        : []);
    parts.push({
      model,
      priority: false,
      settled,
      correction,
      chargeDate,
      costMicros: restMicros,
      requests,
      inputTokens: int('inputTokens') - t.input,
      cachedInputTokens: int('cachedInputTokens') - t.cached,
      outputTokens: int('outputTokens') - t.output,
      lines,
    });
  }
  if (priority.length > 0) {
    const t = tokensOf(priority);
    const lines = allocate(priority, priorityMicros) ?? [{ line: billedLine(priority, 0n, priorityMicros), billedMicros: priorityMicros, priceSource: 'billed' as const }];
    parts.push({
      model: `${model} (priority)`,
      priority: true,
      settled: false,
      correction,
      chargeDate,
      costMicros: priorityMicros,
      // Requests are counted per row, not per tier: a row's requests stay on its first part.
      requests: rest.length > 0 ? 0n : requests,
      inputTokens: t.input,
      cachedInputTokens: t.cached,
      outputTokens: t.output,
      lines,
    });
  }
  return parts;
}
