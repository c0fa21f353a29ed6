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
import { parseDecimal, toMillionths, type Decimal } from '#shared/pricing/money.ts';

// The money arithmetic lives in money.ts (no price table: a function that only converts amounts does not load and
// check prices.json at its start); re-exported here for the code that takes both from this module.
export { formatUsd, hasAtMostSixDecimals, microsToUsd, usdText, usdToMicros, type Usd } from '#shared/pricing/money.ts';

/** µ$ per 1,000,000 tokens (an integer). */
export type MicrosPerMillionTokens = number;

/**
 * The rates one call is priced at (the account's own price, or a built-in row). A cache-write rate that is absent
 * is the `input` rate (a provider that does not charge extra for writing its cache, like OpenAI).
 */
export interface PriceRates {
  readonly input: MicrosPerMillionTokens;
  /** Cache-read price of input tokens (Anthropic: the cache-read price, not the cache-write price). */
  readonly cachedInput: MicrosPerMillionTokens;
  /** Input tokens written to the cache with the 5-minute lifetime (Anthropic: 1.25 × input). */
  readonly cacheWrite?: MicrosPerMillionTokens;
  /** Input tokens written to the cache with the 1-hour lifetime (Anthropic: 2 × input). */
  readonly cacheWrite1h?: MicrosPerMillionTokens;
  readonly output: MicrosPerMillionTokens;
}

/** A row of the built-in table: every rate present (a cache-write rate the provider does not list is `input`). */
export interface ModelPrice extends Required<PriceRates> {
  readonly provider: string;
  readonly model: string;
  /** The page this row was transcribed from (a URL). */
  readonly source: string;
  /** The UTC day the row was last checked against `source` (YYYY-MM-DD). */
  readonly checkedAt: string;
}

export interface PriceTable {
  readonly source: string;
  readonly asOf: string;
  readonly models: readonly ModelPrice[];
}

/**
 * The tier a call ran in. `batch` (OpenAI `batch: true`, Anthropic `service_tier: "batch"`) costs half of every
 * rate; any other tier is priced as `standard`.
 */
export type Tier = 'standard' | 'batch';

/**
 * The tier of a provider's usage row: OpenAI's `batch: true` (completions grouped by `batch`) or Anthropic's
 * `service_tier: "batch"` is `batch`; anything else (standard, priority, flex, null) is `standard`.
 */
export function tierOf(row: { readonly batch?: boolean | null; readonly service_tier?: string | null }): Tier {
  return row.batch === true || row.service_tier === 'batch' ? 'batch' : 'standard';
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
}

export interface Cost {
  /** Integer µ$; 0 when the model is not priced. */
  readonly costMicros: number;
  readonly priced: boolean;
}

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
  const source = nonEmptyString(doc.source, 'price table: source');
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
    const input = priceString(row.input, `${where}.input`);
    const optional = (field: 'cacheWrite' | 'cacheWrite1h') => (row[field] === undefined ? input : priceString(row[field], `${where}.${field}`));
    const checkedAt = nonEmptyString(row.checkedAt, `${where}.checkedAt`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(checkedAt)) throw new Error(`${where}.checkedAt must be YYYY-MM-DD, got "${checkedAt}"`);
    const source = nonEmptyString(row.source, `${where}.source`);
    if (!/^https:\/\/\S+$/.test(source)) throw new Error(`${where}.source must be an https URL, got "${source}"`);
    return {
      provider,
      model,
      input,
      cachedInput: priceString(row.cachedInput, `${where}.cachedInput`),
      cacheWrite: optional('cacheWrite'),
      cacheWrite1h: optional('cacheWrite1h'),
      output: priceString(row.output, `${where}.output`),
      source,
      checkedAt,
    };
  });
  return { source, asOf, models };
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

/** An account's own prices, keyed by `priceId(provider, model)` (names lower-case, as stored). */
export type OwnPriceLookup = ReadonlyMap<string, PriceRates>;
export const priceId = (provider: string, model: string) => `${provider}/${model}`;

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
 *    + outputTokens × output) / 1,000,000   (÷ 2 more in the `batch` tier)
 * with prices in µ$ per 1M tokens and an absent cache-write rate taken as `input`. The sum is computed exactly in
 * BigInt; ROUNDING: the exact result (batch: the exact half) is rounded HALF-UP to the nearest whole micro-dollar,
 * once, at the end (0.45 µ$ → 0, 0.5 µ$ → 1, 1.5 µ$ → 2). An unknown model costs 0 and is reported as not priced.
 * Throws RangeError on a negative or non-integer count, on cache parts that together exceed inputTokens (callers
 * validate first; this is a guard), and on a cost past Number.MAX_SAFE_INTEGER µ$.
 */
export function costMicros(usage: Usage): Cost {
  return costAt(usage, priceFor(usage.provider, usage.model));
}

/**
 * THE PRICING ENTRY POINT FOR BOTH PRODUCERS (ingestion's events and the connections sync's usage rows).
 * Prices `usage` (token counts incl. both cache-write classes, and its tier) at the account's own prices `own`
 * (read with the account's other context; may be empty), falling back to the built-in table; see resolvePrice.
 * Example (a connection's Anthropic batch row, counts mapped as in API.md "What a sync reads and how it counts"):
 *   priceUsage({ provider: 'anthropic', model, inputTokens, cachedInputTokens, cacheWriteInputTokens,
 *                cacheWrite1hInputTokens, outputTokens, tier: tierOf(row) }, ownPrices)
 * `ownPrices` is what ingestion loads (shared/ingest/own-prices.ts `ownPriceNames` names the items to read);
 * to write a snapshot's difference, price the new snapshot and the old one and subtract (token deltas can be
 * negative after a downward revision, and counts must be ≥ 0 here).
 */
export function priceUsage(usage: Usage, own?: OwnPriceLookup): Cost {
  return costAt(usage, resolvePrice(usage.provider, usage.model, own));
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

  // Units of this sum: tokens × µ$ per 1M tokens, i.e. millionths of a micro-dollar.
  const exact =
    (input - cached - write - write1h) * BigInt(price.input) +
    cached * BigInt(price.cachedInput) +
    write * BigInt(price.cacheWrite ?? price.input) +
    write1h * BigInt(price.cacheWrite1h ?? price.input) +
    output * BigInt(price.output);
  // Half-up of exact / divisor, exact ≥ 0 so `/` is floor. Batch: half of every rate is half of the exact sum.
  const divisor = usage.tier === 'batch' ? 2n * TOKENS_PER_PRICE : TOKENS_PER_PRICE;
  const rounded = (exact + divisor / 2n) / divisor;
  if (rounded > MAX_SAFE) throw new RangeError('cost exceeds Number.MAX_SAFE_INTEGER micro-dollars');
  return { costMicros: Number(rounded), priced: true };
}

