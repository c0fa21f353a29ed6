/**
 * The built-in price table and what a usage costs by it (the money arithmetic: money.ts). Pure: no I/O beyond the
 * static import of prices.json.
 *
 * Units:
 * - Money is an integer number of MICRO-DOLLARS (µ$): 1 USD = 1_000_000 µ$. Every money value this module
 *   returns is a `number` that is a safe integer; dollars as floating point never take part in arithmetic.
 * - A price is an integer number of µ$ PER MILLION TOKENS: "$0.075 per 1M tokens" is 75_000. prices.json keeps
 *   the providers' own figures (decimal strings of USD per 1M tokens); they are converted exactly at load.
 * - Token counts are integers ≥ 0.
 * - Dollars exist only at the JSON edge: `usdToMicros` / `microsToUsd` convert exactly, through decimal strings.
 */
import builtInTable from './prices.json' with { type: 'json' };
import { JsonDecimal } from '#shared/http/json.ts';
import { priceId } from '#shared/usage/names.ts';
import { parseDecimal, toMillionths, type Decimal } from '#shared/pricing/money.ts';
import { costOfLines, priceLinesWith, priceQuantities, type LinePricer, type LineUsage, type PriceLine } from '#shared/pricing/lines.ts';

// The money arithmetic lives in money.ts (no price table: a function that only converts amounts does not load and
// check prices.json at its start); re-exported here for the code that takes both from this module.
export { formatUsd, hasAtMostSixDecimals, microsToUsd, usdText, usdToMicros, type Usd } from '#shared/pricing/money.ts';
// The shapes of stored rates are the data layer's (shared/db/prices.ts); pricing builds and reads them.
import type { LongContextRates, MicrosPerMillionTokens, OwnPriceLookup, PriceRates, PricedTier, TierPrices, TierRates } from '#shared/db/prices.ts';

export type { LongContextRates, MicrosPerMillionTokens, OwnPriceLookup, PriceRates, PricedTier, TierPrices, TierRates };

/** The tiers a price may name apart from its standard rates (absent: see `tierRates`). */
const PRICED_TIER_SET: Record<PricedTier, true> = { batch: true, flex: true, priority: true };

/** Every priced tier (a compile error when the stored shape gains one this list lacks). */
export const PRICED_TIERS = Object.keys(PRICED_TIER_SET) as readonly PricedTier[];

/** A row of the built-in table: every standard rate present (a cache-write rate the provider does not list is `input`). */
export interface ModelPrice extends Required<TierRates> {
  readonly provider: string;
  readonly model: string;
  /** The tiers the provider publishes prices of (present only when it does). */
  readonly tiers?: TierPrices;
  /** The long-context rates the provider publishes (present only when it does). */
  readonly longContext?: LongContextRates;
}

/** A price per unit of something other than tokens (a web search, an image, a character of speech), from the table. */
export interface UnitPrice {
  readonly provider: string;
  /** What is counted: `web_search`, `images`, `audio_speeches`, … */
  readonly item: string;
  /** The model it applies to, or null: every model of the provider without a row of its own. */
  readonly model: string | null;
  /** The unit the quantity is counted in (`request`, `image`, `character`, `second`, `session`, `gibibyte_day`). */
  readonly unit: string;
  /** µ$ per `per` units (an integer). */
  readonly micros: number;
  readonly per: number;
}

/** The rates only: where each row comes from (its page, the day it was checked) is in price-sources.json (sources.ts). */
export interface PriceTable {
  readonly asOf: string;
  readonly models: readonly ModelPrice[];
  readonly units: readonly UnitPrice[];
}

export { TIERS, normalizeTier, tierOf, type Tier } from '#shared/usage/tiers.ts';
import { type Tier } from '#shared/usage/tiers.ts';

/**
 * The factor of the standard price a provider publishes for a tier it does not list per model: OpenAI prices Flex
 * processing "at Batch API rates" (developers.openai.com/api/docs/guides/flex-processing), i.e. half.
 */
const PUBLISHED_FACTORS: Readonly<Record<string, Partial<Record<PricedTier, { num: bigint; den: bigint }>>>> = {
  openai: { flex: { num: 1n, den: 2n } },
};

/** Every provider's batch tier is half of every rate (OpenAI's and Anthropic's Batch APIs). */
const HALF = { num: 1n, den: 2n };

/**
 * The rates a tier is priced at, from a price: the tier's own rates when the price names them; else batch = half of
 * the standard rates, flex = the provider's published factor (OpenAI: half), and otherwise (priority without a
 * published price, scale, Anthropic flex) the standard rates with `exact: false` (the requests count as unpriced).
 */
export function tierRates(price: PriceRates, provider: string, tier: Tier = 'standard'): { rates: TierRates; num: bigint; den: bigint; exact: boolean } {
  if (tier === 'standard') return { rates: price, num: 1n, den: 1n, exact: true };
  if (tier !== 'scale') {
    const own = price.tiers?.[tier];
    if (own) return { rates: own, num: 1n, den: 1n, exact: true };
    const factor = tier === 'batch' ? HALF : PUBLISHED_FACTORS[provider.toLowerCase()]?.[tier];
    if (factor) return { rates: price, ...factor, exact: true };
  }
  return { rates: price, num: 1n, den: 1n, exact: false };
}

/** One call's (or one provider usage row's) token counts. The three cache parts are parts of `inputTokens`. */
export interface TokenCounts {
  /** All input tokens: uncached, cache reads and both kinds of cache writes. */
  readonly inputTokens: number;
  /** The part of `inputTokens` read from the provider's cache. */
  readonly cachedInputTokens?: number;
  /** The part of `inputTokens` written to the cache with the 5-minute lifetime. */
  readonly cacheWriteInputTokens?: number;
  /** The part of `inputTokens` written to the cache with the 1-hour lifetime. */
  readonly cacheWrite1hInputTokens?: number;
  readonly outputTokens: number;
}

export interface Usage extends TokenCounts {
  readonly provider: string;
  readonly model: string;
  /** Default `standard`. */
  readonly tier?: Tier;
  /** Web searches and web fetches of the call (server tool use), priced from the table's unit prices. */
  readonly webSearchRequests?: number;
  readonly webFetchRequests?: number;
  /**
   * Whether the usage ran past the long-context threshold (Anthropic usage rows' `context_window: "200k-1M"`).
   * Absent: one call's usage, long-context when its `inputTokens` exceed the price's `aboveInputTokens`.
   */
  readonly longContext?: boolean;
}

export interface Cost {
  /** Integer µ$; 0 when the model is not priced. */
  readonly costMicros: number;
  readonly priced: boolean;
  /**
   * Present (true) when the model is priced but its tier is not (a priority call of a model without a published
   * priority price, Scale Tier): the cost is at the standard price and the requests count as unpriced.
   */
  readonly tierUnpriced?: true;
}

/** True when a cost is exact: the model and its tier both priced (else the requests count in `unpricedRequests`). */
export const isExact = (cost: Pick<Cost, 'priced' | 'tierUnpriced'>): boolean => cost.priced && cost.tierUnpriced !== true;

const MICROS_PER_USD = 1_000_000n;

const USD_DECIMALS = 6;
const TOKENS_PER_PRICE = 1_000_000n;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

// ---------------------------------------------------------------------------------------------------------------
// The price table

function priceString(value: unknown, where: string): MicrosPerMillionTokens {
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value)) {
    throw new Error(`${where}: a price must be a decimal string of USD per 1M tokens, got ${JSON.stringify(value)}`);
  }
  const written = value.split('.')[1] ?? '';
  const micros = written.length > USD_DECIMALS ? undefined : toMillionths(parseDecimal(value) as Decimal);
  if (micros === undefined) throw new RangeError(`${where}: more than 6 decimals in price "${value}"`);
  if (micros > MAX_SAFE) throw new RangeError(`${where}: price "${value}" too large`);
  return Number(micros);
}

function nonEmptyString(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new Error(`${where} must be a non-empty string`);
  return value;
}

/** Validates a price table document (the shape of prices.json) and converts its prices to µ$ per 1M tokens. */
export function loadPriceTable(data: unknown): PriceTable {
  if (typeof data !== 'object' || data === null) throw new Error('price table: not an object');
  const doc = data as Record<string, unknown>;
  const asOf = nonEmptyString(doc.asOf, 'price table: asOf');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(asOf)) throw new Error(`price table: asOf must be YYYY-MM-DD, got "${asOf}"`);
  if (doc.unit !== 'USD per 1M tokens') throw new Error('price table: unit must be "USD per 1M tokens"');
  if (!Array.isArray(doc.models)) throw new Error('price table: models must be an array');

  const seen = new Set<string>();
  const models = doc.models.map((entry: unknown, index): ModelPrice => {
    const where = `price table: models[${index}]`;
    if (typeof entry !== 'object' || entry === null) throw new Error(`${where}: not an object`);
    const row = entry as Record<string, unknown>;
    const provider = nonEmptyString(row.provider, `${where}.provider`);
    const model = nonEmptyString(row.model, `${where}.model`);
    const key = indexKey(provider, model);
    if (seen.has(key)) throw new Error(`${where}: duplicate ${provider}/${model}`);
    seen.add(key);
    const rates = tierRatesOf(row, where);
    const tiers = tiersOf(row.tiers, where);
    const longContext = longContextOf(row.longContext, where);
    return { provider, model, ...rates, ...(tiers ? { tiers } : {}), ...(longContext ? { longContext } : {}) };
  });
  if (doc.units !== undefined && !Array.isArray(doc.units)) throw new Error('price table: units must be an array');
  const seenUnits = new Set<string>();
  const units = ((doc.units as unknown[] | undefined) ?? []).map((entry: unknown, index): UnitPrice => {
    const where = `price table: units[${index}]`;
    if (typeof entry !== 'object' || entry === null) throw new Error(`${where}: not an object`);
    const row = entry as Record<string, unknown>;
    const provider = nonEmptyString(row.provider, `${where}.provider`);
    const item = nonEmptyString(row.item, `${where}.item`);
    const model = row.model === undefined || row.model === null ? null : nonEmptyString(row.model, `${where}.model`).toLowerCase();
    const key = `${provider}/${item}/${model ?? ''}`;
    if (seenUnits.has(key)) throw new Error(`${where}: duplicate ${key}`);
    seenUnits.add(key);
    if (typeof row.per !== 'number' || !Number.isSafeInteger(row.per) || row.per < 1) throw new Error(`${where}.per must be a positive integer`);
    return {
      provider,
      item,
      model,
      unit: nonEmptyString(row.unit, `${where}.unit`),
      micros: priceString(row.usd, `${where}.usd`),
      per: row.per,
    };
  });
  return { asOf, models, units };
}

/** The five rates of a row or of one of its tiers (a cache-write rate not listed is the input rate). */
function tierRatesOf(row: Record<string, unknown>, where: string): Required<TierRates> {
  const input = priceString(row.input, `${where}.input`);
  const optional = (field: 'cacheWrite' | 'cacheWrite1h') => (row[field] === undefined ? input : priceString(row[field], `${where}.${field}`));
  return {
    input,
    cachedInput: priceString(row.cachedInput, `${where}.cachedInput`),
    cacheWrite: optional('cacheWrite'),
    cacheWrite1h: optional('cacheWrite1h'),
    output: priceString(row.output, `${where}.output`),
  };
}

function longContextOf(value: unknown, where: string): LongContextRates | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) throw new Error(`${where}.longContext: not an object`);
  const row = value as Record<string, unknown>;
  const above = row.aboveInputTokens;
  if (typeof above !== 'number' || !Number.isSafeInteger(above) || above < 1) throw new Error(`${where}.longContext.aboveInputTokens must be a positive integer`);
  return { aboveInputTokens: above, ...tierRatesOf(row, `${where}.longContext`) };
}

function tiersOf(value: unknown, where: string): TierPrices | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) throw new Error(`${where}.tiers: not an object`);
  const out: Partial<Record<PricedTier, TierRates>> = {};
  for (const [name, rates] of Object.entries(value)) {
    if (!(PRICED_TIERS as readonly string[]).includes(name)) throw new Error(`${where}.tiers: unknown tier "${name}" (batch, flex, priority)`);
    if (typeof rates !== 'object' || rates === null) throw new Error(`${where}.tiers.${name}: not an object`);
    out[name as PricedTier] = tierRatesOf(rates as Record<string, unknown>, `${where}.tiers.${name}`);
  }
  return out;
}

function indexKey(provider: string, model: string): string {
  return `${provider.toLowerCase()}/${model.toLowerCase()}`;
}

/** The built-in table (prices.json), validated once at module load. */
export const PRICE_TABLE: PriceTable = loadPriceTable(builtInTable);

const PRICE_INDEX: ReadonlyMap<string, ModelPrice> = new Map(
  PRICE_TABLE.models.map((price) => [indexKey(price.provider, price.model), price]),
);

/** `-2024-08-06` (OpenAI) or `-20241022` (Anthropic) at the end of a model name. */
const DATE_SUFFIX = /-(?:20\d{2}-\d{2}-\d{2}|20\d{6})$/;

/** Anthropic's moving alias (`claude-3-5-haiku-latest`). Not stripped for OpenAI: `chatgpt-4o-latest` is its own model. */
const LATEST_SUFFIX = /-latest$/;

/** The family a dated (or, for Anthropic, `-latest`) model name belongs to; undefined if the name has no such suffix. */
export function familyOf(provider: string, model: string): string | undefined {
  const dateless = model.replace(DATE_SUFFIX, '');
  if (dateless !== model) return dateless;
  if (provider === 'anthropic' && LATEST_SUFFIX.test(model)) return model.replace(LATEST_SUFFIX, '');
  return undefined;
}

/**
 * The price of a model, case-insensitively: the exact name first, then the family of a dated name
 * (`gpt-4o-mini-2024-07-18` → `gpt-4o-mini`, `claude-sonnet-4-20250514` → `claude-sonnet-4`). No prefix
 * matching: an unknown `gpt-4o-audio-preview` is unknown, not gpt-4o.
 */
export function priceFor(provider: string, model: string): ModelPrice | undefined {
  const p = provider.toLowerCase();
  const m = model.toLowerCase();
  const exact = PRICE_INDEX.get(indexKey(p, m));
  if (exact) return exact;
  const family = familyOf(p, m);
  return family === undefined ? undefined : PRICE_INDEX.get(indexKey(p, family));
}

export { priceId };

/**
 * The rates a call of (provider, model) is priced at: the account's own price of the exact model, the account's
 * own price of its family (a dated name), then the built-in table (exact, then family). Undefined: not priced.
 */
export function resolvePrice(provider: string, model: string, own?: OwnPriceLookup): PriceRates | undefined {
  if (own && own.size > 0) {
    const p = provider.toLowerCase();
    const m = model.toLowerCase();
    const family = familyOf(p, m);
    const mine = own.get(priceId(p, m)) ?? (family === undefined ? undefined : own.get(priceId(p, family)));
    if (mine) return mine;
  }
  return priceFor(provider, model);
}

const UNIT_INDEX: ReadonlyMap<string, UnitPrice> = new Map(PRICE_TABLE.units.map((u) => [`${u.provider}/${u.item}/${u.model ?? ''}`, u]));

/**
 * The table's price of a unit other than tokens: the row of the exact model (or its family), else the provider's row
 * for every model; undefined: the table has no price for it.
 */
export function unitPriceFor(provider: string, item: string, model?: string | null): UnitPrice | undefined {
  const p = provider.toLowerCase();
  if (model) {
    const m = model.toLowerCase();
    const exact = UNIT_INDEX.get(`${p}/${item}/${m}`);
    if (exact) return exact;
    const family = familyOf(p, m);
    const ofFamily = family === undefined ? undefined : UNIT_INDEX.get(`${p}/${item}/${family}`);
    if (ofFamily) return ofFamily;
  }
  return UNIT_INDEX.get(`${p}/${item}/`);
}

/** The cost in µ$ of `quantity` units at `price` (rounded half-up once); undefined price: 0, not priced. */
export function unitCost(quantity: number, price: UnitPrice | undefined): Cost {
  const q = tokenCount(quantity, 'quantity');
  if (!price) return { costMicros: 0, priced: quantity === 0 };
  const per = BigInt(price.per);
  const rounded = (q * BigInt(price.micros) + per / 2n) / per;
  if (rounded > MAX_SAFE) throw new RangeError('cost exceeds Number.MAX_SAFE_INTEGER micro-dollars');
  return { costMicros: Number(rounded), priced: true };
}

// ---------------------------------------------------------------------------------------------------------------
// Cost of one call

function tokenCount(value: number, name: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be an integer ≥ 0, got ${value}`);
  return BigInt(value);
}

/**
 * The cost of one provider call in integer µ$:
 *   ((inputTokens − cachedInputTokens − cacheWriteInputTokens − cacheWrite1hInputTokens) × input
 *    + cachedInputTokens × cachedInput + cacheWriteInputTokens × cacheWrite + cacheWrite1hInputTokens × cacheWrite1h
 *    + outputTokens × output) / 1,000,000   × the tier's factor
 * with prices in µ$ per 1M tokens, an absent cache-write rate taken as `input`, and the tier's rates and factor from
 * `tierRates` (its own rates where the price names them, else batch = half, OpenAI flex = half, else the standard
 * rates, not exact). The sum is computed exactly in BigInt; ROUNDING: the exact result (batch: the exact half) is
 * rounded HALF-UP to the nearest whole micro-dollar, once, at the end (0.45 µ$ → 0, 0.5 µ$ → 1, 1.5 µ$ → 2). An
 * unknown model costs 0 and is reported as not priced. Web searches are added at the table's unit price.
 * Throws RangeError on a negative or non-integer count, on cache parts that together exceed inputTokens (callers
 * validate first; this is a guard), and on a cost past Number.MAX_SAFE_INTEGER µ$.
 */
export function costMicros(usage: Usage): Cost {
  checkCounts(usage);
  return costOf(priceLinesWith(TABLE_PRICER, usage), priceFor(usage.provider, usage.model) !== undefined);
}

/**
 * THE PRICING ENTRY POINT FOR BOTH PRODUCERS (ingestion's events and the connections sync's usage rows).
 * Prices `usage` (token counts incl. both cache-write classes, its tier and its web searches) at the account's own
 * prices `own` (read with the account's other context; may be empty), falling back to the built-in table; see
 * resolvePrice. Example (a connection's Anthropic priority row, counts mapped as in
 * docs/features/ingestion-and-pricing.md):
 *   priceUsage({ provider: 'anthropic', model, inputTokens, cachedInputTokens, cacheWriteInputTokens,
 *                cacheWrite1hInputTokens, outputTokens, tier: tierOf(row), webSearchRequests }, ownPrices)
 * `ownPrices` is what ingestion loads (shared/ingest/own-prices.ts `ownPriceNames` names the items to read);
 * to write a snapshot's difference, price the new snapshot and the old one and subtract (token deltas can be
 * negative after a downward revision, and counts must be ≥ 0 here).
 * The cost is the sum of the usage's price lines (priceLines, shared/pricing/lines.ts): the one function that turns a
 * usage into what it is billed for.
 */
export function priceUsage(usage: Usage, own?: OwnPriceLookup): Cost {
  return costOf(priceLines(usage, own), resolvePrice(usage.provider, usage.model, own) !== undefined);
}

/** Price lines of stored quantities (a key × day × model row's `ln:` counters) of one model, at the account's own prices. */
export function priceLineQuantities(provider: string, model: string, quantities: ReadonlyMap<string, bigint>, own?: OwnPriceLookup): PriceLine[] {
  return priceQuantities(TABLE_PRICER, provider, model, quantities, own);
}

/** A usage's price lines (shared/pricing/lines.ts) at the account's own prices, list prices from the built-in table. */
export function priceLines(usage: LineUsage, own?: OwnPriceLookup): PriceLine[] {
  if (!usage.unit) checkCounts(usage as Usage);
  return priceLinesWith(TABLE_PRICER, usage, own);
}

/** The cost of a call's lines; `modelPriced`: whether its model has a price (else it is not priced, whatever its lines). */
function costOf(lines: readonly PriceLine[], modelPriced: boolean): Cost {
  const c = costOfLines(lines);
  if (c.costMicros > MAX_SAFE) throw new RangeError('cost exceeds Number.MAX_SAFE_INTEGER micro-dollars');
  const costMicros = Number(c.costMicros);
  if (!c.priced || !modelPriced) return { costMicros, priced: false };
  return c.tierUnpriced ? { costMicros, priced: true, tierUnpriced: true } : { costMicros, priced: true };
}

/** Whether the usage runs at the long-context rates of `price` (a row's window, else one call's input past the threshold). */
const isLong = (price: PriceRates, usage: { longContext?: boolean }, inputTokens: bigint) =>
  !!price.longContext && (usage.longContext ?? inputTokens > BigInt(price.longContext.aboveInputTokens));

/** The built-in table and the account's own prices, as the price lines read them. */
const TABLE_PRICER: LinePricer = {
  resolve(provider, model, own) {
    if (own && own.size > 0) {
      const p = provider.toLowerCase();
      const m = model.toLowerCase();
      const family = familyOf(p, m);
      const mine = own.get(priceId(p, m)) ?? (family === undefined ? undefined : own.get(priceId(p, family)));
      if (mine) return { price: mine, own: true };
    }
    const table = priceFor(provider, model);
    return table ? { price: table, own: false } : undefined;
  },
  listPrice: (provider, model) => priceFor(provider, model),
  tokenPricing(price, provider, tier, long) {
    const t = tierRates(long ? { ...price.longContext!, tiers: undefined } : price, provider, (tier === 'embeddings' ? 'standard' : (tier ?? 'standard')) as Tier);
    return { rates: t.rates, num: t.num, den: t.den, exact: t.exact };
  },
  isLong,
  unitPrice: (provider, item, model) => unitPriceFor(provider, item, model),
};

/** Guards of a call's counts (callers validate first; this is a guard). */
function checkCounts(usage: Usage): void {
  const input = tokenCount(usage.inputTokens, 'inputTokens');
  const cached = tokenCount(usage.cachedInputTokens ?? 0, 'cachedInputTokens');
  const write = tokenCount(usage.cacheWriteInputTokens ?? 0, 'cacheWriteInputTokens');
  const write1h = tokenCount(usage.cacheWrite1hInputTokens ?? 0, 'cacheWrite1hInputTokens');
  tokenCount(usage.outputTokens, 'outputTokens');
  tokenCount(usage.webSearchRequests ?? 0, 'webSearchRequests');
  tokenCount(usage.webFetchRequests ?? 0, 'webFetchRequests');
  if (cached > input) throw new RangeError('cachedInputTokens must not exceed inputTokens');
  if (cached + write + write1h > input) {
    throw new RangeError('cachedInputTokens + cacheWriteInputTokens + cacheWrite1hInputTokens must not exceed inputTokens');
  }
}

/** The cost of one call at `price` (the account's own, or the built-in one); undefined: not priced (cost 0). */
export function costAt(usage: Usage, price: PriceRates | undefined): Cost {
  const input = tokenCount(usage.inputTokens, 'inputTokens');
  const cached = tokenCount(usage.cachedInputTokens ?? 0, 'cachedInputTokens');
  const write = tokenCount(usage.cacheWriteInputTokens ?? 0, 'cacheWriteInputTokens');
  const write1h = tokenCount(usage.cacheWrite1hInputTokens ?? 0, 'cacheWrite1hInputTokens');
  const output = tokenCount(usage.outputTokens, 'outputTokens');
  if (cached > input) throw new RangeError('cachedInputTokens must not exceed inputTokens');
  if (cached + write + write1h > input) {
    throw new RangeError('cachedInputTokens + cacheWriteInputTokens + cacheWrite1hInputTokens must not exceed inputTokens');
  }

  if (!price) return { costMicros: 0, priced: false };
  // Long context: the long-context rates replace the standard ones (a tier's factor, batch's half, still applies).
  const long = price.longContext && (usage.longContext ?? input > BigInt(price.longContext.aboveInputTokens));
  const { rates, num, den, exact: tierExact } = tierRates(long ? { ...price.longContext!, tiers: undefined } : price, usage.provider, usage.tier);

  // Units of this sum: tokens × µ$ per 1M tokens, i.e. millionths of a micro-dollar.
  const exact =
    (input - cached - write - write1h) * BigInt(rates.input) +
    cached * BigInt(rates.cachedInput) +
    write * BigInt(rates.cacheWrite ?? rates.input) +
    write1h * BigInt(rates.cacheWrite1h ?? rates.input) +
    output * BigInt(rates.output);
  // Half-up of exact × num / divisor, exact ≥ 0 so `/` is floor. Batch: half of every rate is half of the exact sum.
  const divisor = den * TOKENS_PER_PRICE;
  const rounded = (exact * num + divisor / 2n) / divisor;
  if (rounded > MAX_SAFE) throw new RangeError('cost exceeds Number.MAX_SAFE_INTEGER micro-dollars');
  return tierExact ? { costMicros: Number(rounded), priced: true } : { costMicros: Number(rounded), priced: true, tierUnpriced: true };
}

