/**
 * Price lines (DESIGN "Round 5": the price line is the unit): what a usage cell is billed for, line by line —
 * `input`, `cached_input`, `cache_write_5m`, `cache_write_1h`, `output` (each per tier: `/batch`, `/flex`,
 * `/priority`, `/scale`, `/long_context`, `/batch_long_context`, …), `web_search`, `web_fetch`, and the unit items of
 * OpenAI's other endpoints (`images`, `audio_speeches`, `vector_stores`, …) — each with its quantity, its pricing
 * unit, its list unit price (the built-in table) and its contracted unit price (the account's own price where set,
 * else the list price). Pure.
 *
 * THE ONE FUNCTION: `priceLines` turns a usage into its lines, and the cost of a usage (`priceUsage`, `costMicros` in
 * pricing.ts: estimation by ingestion and by a connection's import, settlement's estimates) is the sum of its lines'
 * contracted costs, rounded half-up once for the token lines and once per tool line — so unit price × quantity = cost
 * holds by construction in the FOCUS export, and an allocation can weigh a bill's line by that line's own estimate.
 *
 * Rationals: a unit price is an exact rational number of micro-dollars per pricing unit (`{num, den}`), a pricing
 * quantity the raw quantity × `scale` (e.g. tokens / 1,000,000). Every table price and unit size makes them finite
 * decimals (`decimalText`).
 */
import type { OwnPriceLookup, PriceRates, TierRates } from '#shared/db/prices.ts';

export interface Ratio {
  num: bigint;
  den: bigint;
}

/** The token lines of a tier (`input` … `output`). */
export const TOKEN_LINES = ['input', 'cached_input', 'cache_write_5m', 'cache_write_1h', 'output'] as const;
export type TokenLine = (typeof TOKEN_LINES)[number];
const RATE_OF: Record<TokenLine, keyof TierRates> = {
  input: 'input',
  cached_input: 'cachedInput',
  cache_write_5m: 'cacheWrite',
  cache_write_1h: 'cacheWrite1h',
  output: 'output',
};
/** The meter of each line, in words (FOCUS `SkuMeter`). */
const METERS: Record<string, string> = {
  input: 'Input Tokens',
  cached_input: 'Cached Input Tokens',
  cache_write_5m: 'Cache Write Tokens (5 minutes)',
  cache_write_1h: 'Cache Write Tokens (1 hour)',
  output: 'Output Tokens',
  web_search: 'Web Searches',
  web_fetch: 'Web Fetches',
  file_search: 'File Searches',
  images: 'Images',
  audio_speeches: 'Speech Characters',
  audio_transcriptions: 'Transcription Seconds',
  moderations: 'Moderation Requests',
  vector_stores: 'Vector Storage',
  code_interpreter_sessions: 'Code Interpreter Sessions',
  usage: 'Usage',
};
/** The table's counting units as FOCUS units (plural, title case). */
const UNITS: Record<string, string> = {
  request: 'Requests',
  call: 'Requests',
  image: 'Images',
  character: 'Characters',
  second: 'Seconds',
  session: 'Sessions',
  byte_day: 'Byte-Days',
};

/** What a usage cell counts (an event, a connection's cell, or the difference of two: counts may then be negative). */
export interface LineUsage {
  provider: string;
  model: string;
  /** `standard` (default), `batch`, `flex`, `priority`, `scale`, `embeddings` (priced as standard). */
  tier?: string;
  longContext?: boolean;
  inputTokens: number | bigint;
  cachedInputTokens?: number | bigint;
  cacheWriteInputTokens?: number | bigint;
  cacheWrite1hInputTokens?: number | bigint;
  outputTokens: number | bigint;
  webSearchRequests?: number | bigint;
  webFetchRequests?: number | bigint;
  /** A cell of units, not tokens (OpenAI images, storage, …): the table's unit item and its quantity. */
  unit?: { item: string; quantity: number | bigint };
}

const big = (n: number | bigint | undefined) => BigInt(n ?? 0);

/** The tier part of a token line's id: none for standard usage. */
export function tierSuffix(tier: string | undefined, longContext: boolean | undefined): string | null {
  const t = !tier || tier === 'standard' || tier === 'embeddings' ? null : tier;
  if (longContext) return t ? `${t}_long_context` : 'long_context';
  return t;
}

/** `input`, `output/batch`, `web_search`: a line's id within its model. */
export const lineId = (line: string, tier: string | null) => (tier ? `${line}/${tier}` : line);
export function splitLineId(id: string): { line: string; tier: string | null } {
  const i = id.indexOf('/');
  return i < 0 ? { line: id, tier: null } : { line: id.slice(0, i), tier: id.slice(i + 1) };
}

/**
 * The quantity of each price line of a usage (no prices): tokens by line (uncached input = input − cache reads −
 * cache writes), tools, or a unit cell's quantity. Lines of quantity 0 are left out.
 */
export function lineQuantities(u: LineUsage): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const put = (id: string, q: bigint) => {
    if (q !== 0n) out.set(id, (out.get(id) ?? 0n) + q);
  };
  if (u.unit) {
    put(u.unit.item, big(u.unit.quantity));
    return out;
  }
  const tier = tierSuffix(u.tier, u.longContext);
  const cached = big(u.cachedInputTokens);
  const write = big(u.cacheWriteInputTokens);
  const write1h = big(u.cacheWrite1hInputTokens);
  put(lineId('input', tier), big(u.inputTokens) - cached - write - write1h);
  put(lineId('cached_input', tier), cached);
  put(lineId('cache_write_5m', tier), write);
  put(lineId('cache_write_1h', tier), write1h);
  put(lineId('output', tier), big(u.outputTokens));
  put('web_search', big(u.webSearchRequests));
  put('web_fetch', big(u.webFetchRequests));
  return out;
}

/** One price line of a usage, priced. */
export interface PriceLine {
  /** `<line>[/<tier>]`. */
  id: string;
  line: string;
  tier: string | null;
  /** The raw count (FOCUS `ConsumedQuantity`) in `consumedUnit`. */
  quantity: bigint;
  consumedUnit: string;
  /** The unit prices are per `pricingUnit`; `PricingQuantity` = quantity × scale. */
  pricingUnit: string;
  scale: Ratio;
  /** µ$ per pricing unit: the built-in table's (null: the table has no price) and the one the account pays. */
  list: Ratio | null;
  contracted: Ratio | null;
  /** Where the contracted price comes from: the table, the account's own price, or none. */
  source: 'table' | 'own' | 'none';
  /** Whether the price is exact (false: a tier without a published price, estimated at the standard price). */
  exact: boolean;
  meter: string;
}

/** The resolved rates a token line is priced at: the rates of its tier and context window, and the tier's factor. */
export interface TokenPricing {
  rates: TierRates;
  num: bigint;
  den: bigint;
  exact: boolean;
}

/** The dependencies priceLines takes from pricing.ts (passed in: pricing.ts imports this module). */
export interface LinePricer {
  resolve(provider: string, model: string, own?: OwnPriceLookup): { price: PriceRates; own: boolean } | undefined;
  listPrice(provider: string, model: string): PriceRates | undefined;
  /** Whether the usage runs at the price's long-context rates (its window, else its input past the threshold). */
  isLong(price: PriceRates, usage: { longContext?: boolean }, inputTokens: bigint): boolean;
  tokenPricing(price: PriceRates, provider: string, tier: string | undefined, long: boolean): TokenPricing;
  unitPrice(provider: string, item: string, model: string): { micros: number; per: number; unit: string } | undefined;
}

const MILLION = 1_000_000n;
const gcd = (a: bigint, b: bigint): bigint => {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
};
export const ratio = (num: bigint, den: bigint): Ratio => {
  if (den < 0n) [num, den] = [-num, -den];
  const g = gcd(num, den) || 1n;
  return { num: num / g, den: den / g };
};
const onlyTwosAndFives = (n: bigint) => {
  for (const p of [2n, 5n]) while (n % p === 0n) n /= p;
  return n === 1n;
};

/** How a unit item is priced and counted: its pricing unit, the scale from raw quantity, µ$ per pricing unit. */
function unitPricing(u: { micros: number; per: number; unit: string }): { pricingUnit: string; scale: Ratio; price: Ratio; consumedUnit: string } {
  const consumedUnit = UNITS[u.unit] ?? `${u.unit.charAt(0).toUpperCase()}${u.unit.slice(1)}s`;
  const per = BigInt(u.per);
  const micros = BigInt(u.micros);
  if (u.unit === 'byte_day' && per === 1n << 30n) return { pricingUnit: 'GiB-Days', scale: ratio(1n, per), price: ratio(micros, 1n), consumedUnit };
  if (per === 1n) return { pricingUnit: consumedUnit, scale: ratio(1n, 1n), price: ratio(micros, 1n), consumedUnit };
  if (per === MILLION) return { pricingUnit: `1M ${consumedUnit}`, scale: ratio(1n, per), price: ratio(micros, 1n), consumedUnit };
  if (/^10+$/.test(per.toString())) return { pricingUnit: `${per} ${consumedUnit}`, scale: ratio(1n, per), price: ratio(micros, 1n), consumedUnit };
  // Any other size (per 60 seconds): priced per single unit when that price is a finite decimal.
  const single = ratio(micros, per);
  if (onlyTwosAndFives(single.den) || !onlyTwosAndFives(per)) return { pricingUnit: consumedUnit, scale: ratio(1n, 1n), price: single, consumedUnit };
  return { pricingUnit: `${per} ${consumedUnit}`, scale: ratio(1n, per), price: ratio(micros, 1n), consumedUnit };
}

/**
 * A usage's price lines at the account's own prices `own` (token lines; tools and units are always the table's),
 * with the built-in table's prices as the list prices. A model the table and the account don't price has lines with
 * null prices (`source: "none"`).
 */
export function priceLinesWith(pricer: LinePricer, usage: LineUsage, own?: OwnPriceLookup): PriceLine[] {
  const resolved = usage.unit ? undefined : pricer.resolve(usage.provider, usage.model, own);
  const inputTokens = big(usage.inputTokens);
  // The context window decides the line (`input/long_context`): the row's own, else the price's threshold.
  const long = usage.longContext ?? (resolved ? pricer.isLong(resolved.price, usage, inputTokens) : false);
  return priceQuantities(pricer, usage.provider, usage.model, lineQuantities({ ...usage, longContext: long }), own);
}

/** The tier and context window a token line's id names (`output/batch_long_context` → batch, long). */
function tierOfLine(tier: string | null): { tier: string; long: boolean } {
  if (!tier) return { tier: 'standard', long: false };
  if (tier === 'long_context') return { tier: 'standard', long: true };
  if (tier.endsWith('_long_context')) return { tier: tier.slice(0, -'_long_context'.length), long: true };
  return { tier, long: false };
}

/**
 * Price lines of given quantities (an aggregate's `ln:` counters, or a usage's `lineQuantities`) of one model: token
 * lines at the tier and window their id names, tool and unit lines at the table's unit prices (of `model`, else the
 * provider's). Lines of quantity 0 are left out.
 */
export function priceQuantities(pricer: LinePricer, provider: string, model: string, quantities: ReadonlyMap<string, bigint>, own?: OwnPriceLookup): PriceLine[] {
  const out: PriceLine[] = [];
  let resolved: ReturnType<LinePricer['resolve']> | null = null;
  let listRates: PriceRates | undefined | null = null;
  for (const [id, quantity] of quantities) {
    if (quantity === 0n) continue;
    const { line, tier } = splitLineId(id);
    if ((TOKEN_LINES as readonly string[]).includes(line)) {
      if (resolved === null) resolved = pricer.resolve(provider, model, own);
      if (listRates === null) listRates = pricer.listPrice(provider, model);
      const { tier: t, long } = tierOfLine(tier);
      const perMillion = (p: PriceRates | undefined): { price: Ratio; exact: boolean } | null => {
        if (!p) return null;
        const priced = pricer.tokenPricing(p, provider, t, long && !!p.longContext);
        const rate = priced.rates[RATE_OF[line as TokenLine]] ?? priced.rates.input;
        return { price: ratio(BigInt(rate) * priced.num, priced.den), exact: priced.exact };
      };
      const list = perMillion(listRates);
      const contracted = resolved ? perMillion(resolved.price) : null;
      out.push({
        id,
        line,
        tier,
        quantity,
        consumedUnit: 'Tokens',
        pricingUnit: '1M Tokens',
        scale: ratio(1n, MILLION),
        list: list?.price ?? null,
        contracted: contracted?.price ?? null,
        source: resolved ? (resolved.own ? 'own' : 'table') : 'none',
        exact: contracted?.exact ?? false,
        meter: METERS[line]!,
      });
      continue;
    }
    const u = pricer.unitPrice(provider, line, model);
    const unit = u ? unitPricing(u) : undefined;
    const fallbackUnit = line.endsWith('search') || line.endsWith('fetch') ? 'Requests' : 'Units';
    out.push({
      id,
      line,
      tier,
      quantity,
      consumedUnit: unit?.consumedUnit ?? fallbackUnit,
      pricingUnit: unit?.pricingUnit ?? fallbackUnit,
      scale: unit?.scale ?? ratio(1n, 1n),
      list: unit?.price ?? null,
      contracted: unit?.price ?? null,
      source: unit ? 'table' : 'none',
      exact: unit !== undefined,
      meter: METERS[line] ?? line,
    });
  }
  return out;
}

/** A line's exact cost at a unit price, in µ$ (a rational): quantity × scale × price. */
export function lineCost(l: Pick<PriceLine, 'quantity' | 'scale'>, price: Ratio | null): Ratio {
  if (!price) return { num: 0n, den: 1n };
  return ratio(l.quantity * l.scale.num * price.num, l.scale.den * price.den);
}

const roundHalfUp = (r: Ratio): bigint => {
  const sign = r.num < 0n ? -1n : 1n;
  const n = r.num * sign;
  return sign * ((2n * n + r.den) / (2n * r.den));
};

/**
 * The cost of a usage from its lines (µ$): the token lines' exact sum rounded half-up once, plus each tool or unit
 * line rounded half-up once; `priced` false when the model has no price, `tierUnpriced` when the model is priced but
 * its tier or one of its tools is not. Prices the contracted (or, with `list`, the list) unit prices.
 */
export function costOfLines(lines: readonly PriceLine[], which: 'contracted' | 'list' = 'contracted'): { costMicros: bigint; priced: boolean; tierUnpriced: boolean } {
  let tokens: Ratio = { num: 0n, den: 1n };
  let tools = 0n;
  let anyToken = false;
  let tokenPriced = true;
  let exact = true;
  for (const l of lines) {
    const price = l[which];
    const c = lineCost(l, price);
    if ((TOKEN_LINES as readonly string[]).includes(l.line)) {
      anyToken = true;
      if (!price) tokenPriced = false;
      if (!l.exact) exact = false;
      tokens = ratio(tokens.num * c.den + c.num * tokens.den, tokens.den * c.den);
    } else {
      if (!price || !l.exact) exact = false;
      tools += roundHalfUp(c);
    }
  }
  const priced = !anyToken || tokenPriced;
  return { costMicros: roundHalfUp(tokens) + tools, priced, tierUnpriced: priced && !exact };
}

/** An exact decimal text of a rational number of µ$ as dollars (`{num: 3702n, den: 1n}` → `0.003702`), at least one decimal. */
export function usdText(micros: Ratio): string {
  return decimalText(ratio(micros.num, micros.den * MILLION));
}

/**
 * The exact decimal text of a rational whose denominator has only the prime factors 2 and 5 (every price and
 * pricing unit here), with at least one decimal (`3` → `3.0`: read as a decimal, not an integer, by CSV readers that
 * infer types). Other denominators: 20 decimals, rounded half-up.
 */
export function decimalText(r: Ratio): string {
  const { num, den } = ratio(r.num, r.den);
  let scale = 0;
  let pow = 1n;
  while (pow % den !== 0n && scale < 40) {
    scale += 1;
    pow *= 10n;
  }
  let scaled: bigint;
  if (pow % den === 0n) scaled = num * (pow / den);
  else {
    scale = 20;
    pow = 10n ** 20n;
    scaled = roundHalfUp({ num: num * pow, den });
  }
  const sign = scaled < 0n ? '-' : '';
  const abs = (scaled < 0n ? -scaled : scaled).toString().padStart(scale + 1, '0');
  const whole = abs.slice(0, abs.length - scale);
  const frac = abs.slice(abs.length - scale).replace(/0+$/, '');
  return `${sign}${whole}.${frac || '0'}`;
}
