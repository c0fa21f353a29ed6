/**
 * Repository of an account's own prices (`keys.accountPrice`, in the account's partition): at most MAX per account,
 * exactly under races (the `prices` counter of shared/db/caps.ts is taken in the transaction that creates one).
 * Prices are stored in integer µ$ per million tokens. The two cache-write prices came in round 3: an item written
 * before has none, and reads as the input price for both (what it was priced at then).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { writeCounted } from '#shared/db/caps.ts';
import { readNumber } from '#shared/db/numbers.ts';

/**
 * The rates one call is priced at (the account's own price, or a built-in row): the standard tier's rates, and the
 * rates of other tiers where the price names them. A cache-write rate that is absent is the `input` rate (a provider
 * that does not charge extra for writing its cache).
 */
export interface PriceRates extends TierRates {
  readonly tiers?: TierPrices;
  /** The rates of a call past `aboveInputTokens` input tokens (Anthropic's long-context pricing), where the provider has them. */
  readonly longContext?: LongContextRates;
}

/** An account's own prices, keyed by `priceId(provider, model)` (names lower-case, as stored). */
export type OwnPriceLookup = ReadonlyMap<string, PriceRates>;

/** µ$ per 1,000,000 tokens (an integer). */
export type MicrosPerMillionTokens = number;

/** The five rates of one tier (µ$ per 1M tokens); an absent cache-write rate is the `input` rate. */
export interface TierRates {
  readonly input: MicrosPerMillionTokens;
  /** Cache-read price of input tokens (Anthropic: the cache-read price, not the cache-write price). */
  readonly cachedInput: MicrosPerMillionTokens;
  /** Input tokens written to the cache with the 5-minute lifetime (Anthropic: 1.25 × input). */
  readonly cacheWrite?: MicrosPerMillionTokens;
  /** Input tokens written to the cache with the 1-hour lifetime (Anthropic: 2 × input). */
  readonly cacheWrite1h?: MicrosPerMillionTokens;
  readonly output: MicrosPerMillionTokens;
}

/** The tiers a price may name apart from its standard rates (shared/pricing/pricing.ts `PRICED_TIERS` lists them). */
export type PricedTier = 'batch' | 'flex' | 'priority';

export type TierPrices = { readonly [T in PricedTier]?: TierRates };

/** Long-context rates: a call whose input exceeds `aboveInputTokens` is priced at these rates, every token of it. */
export interface LongContextRates extends TierRates {
  readonly aboveInputTokens: number;
}

export interface OwnPrice {
  provider: string;
  model: string;
  /** µ$ per 1M tokens. */
  input: number;
  cachedInput: number;
  /** 5-minute and 1-hour cache writes. */
  cacheWrite: number;
  cacheWrite1h: number;
  output: number;
  /** The batch, flex and priority rates the account set (µ$ per 1M tokens), where it set them. */
  tiers?: TierPrices;
  /** The rates of a call past `aboveInputTokens` input tokens (µ$ per 1M tokens), where the account set them. */
  longContext?: LongContextRates;
  updatedAt: string;
}

/** A stored long-context price (an item written before long-context prices has none). */
function readLongContext(value: unknown): LongContextRates | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const r = value as Record<string, unknown>;
  return { aboveInputTokens: readNumber(r.aboveInputTokens), ...readRates(r) };
}

/** Stored rates in µ$ per 1M tokens (every one present: they are written whole). */
function readRates(r: Record<string, unknown>): Required<TierRates> {
  return {
    input: readNumber(r.input),
    cachedInput: readNumber(r.cachedInput),
    cacheWrite: readNumber(r.cacheWrite),
    cacheWrite1h: readNumber(r.cacheWrite1h),
    output: readNumber(r.output),
  };
}

/** A stored map of tier → rates in µ$ (an item written before tiers existed has none). */
function readTiers(value: unknown): TierPrices | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const out: Partial<Record<PricedTier, TierRates>> = {};
  for (const [tier, r] of Object.entries(value as Record<string, Record<string, unknown>>)) {
    out[tier as PricedTier] = readRates(r);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function toOwnPrice(item: Item): OwnPrice {
  const input = readNumber(item.inputMicros);
  const tiers = readTiers(item.tiersMicros);
  const longContext = readLongContext(item.longContextMicros);
  return {
    provider: item.provider as string,
    model: item.model as string,
    input,
    cachedInput: readNumber(item.cachedInputMicros),
    cacheWrite: item.cacheWriteMicros === undefined ? input : readNumber(item.cacheWriteMicros),
    cacheWrite1h: item.cacheWrite1hMicros === undefined ? input : readNumber(item.cacheWrite1hMicros),
    output: readNumber(item.outputMicros),
    ...(tiers ? { tiers } : {}),
    ...(longContext ? { longContext } : {}),
    updatedAt: item.updatedAt as string,
  };
}

const toItem = (accountId: string, p: OwnPrice): Item => ({
  ...keys.accountPrice(accountId, p.provider, p.model),
  type: 'Price',
  provider: p.provider,
  model: p.model,
  inputMicros: p.input,
  cachedInputMicros: p.cachedInput,
  cacheWriteMicros: p.cacheWrite,
  cacheWrite1hMicros: p.cacheWrite1h,
  outputMicros: p.output,
  ...(p.tiers ? { tiersMicros: p.tiers } : {}),
  ...(p.longContext ? { longContextMicros: p.longContext } : {}),
  updatedAt: p.updatedAt,
});

/** Every own price of the account (ONE Query). */
export async function listOwnPrices(accountId: string): Promise<OwnPrice[]> {
  const q = queries.accountItems(accountId, 'PRICE');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
  });
  return items.map(toOwnPrice);
}

const isConditionFailure = (error: unknown) => error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * Sets a price: replaces an existing one in place (no slot taken), else creates it with a slot of the counter.
 * Two racing creates of the same price: one creates it, the other finds it and replaces it. `cap`: the cap was reached.
 */
export async function putOwnPrice(accountId: string, price: OwnPrice, cap: number): Promise<'written' | 'cap'> {
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      await db().send(new PutCommand({ TableName: tableName(), Item: toItem(accountId, price), ConditionExpression: 'attribute_exists(pk)' }));
      return 'written';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const outcome = await writeCounted(accountId, 'prices', cap, [
      { Put: { TableName: tableName(), Item: toItem(accountId, price), ConditionExpression: 'attribute_not_exists(pk)' } },
    ]);
    if (outcome.status === 'written') return 'written';
    if (outcome.status === 'cap') return 'cap';
    // created meanwhile by a racing request: replace it
  }
  throw new Error('An own price kept changing between create and replace.');
}

/** False when the account has no such price. Frees its slot of the counter in the same transaction. */
export async function deleteOwnPrice(accountId: string, provider: string, model: string): Promise<boolean> {
  const outcome = await writeCounted(accountId, 'prices', null, [
    { Delete: { TableName: tableName(), Key: keys.accountPrice(accountId, provider, model), ConditionExpression: 'attribute_exists(pk)' } },
  ]);
  return outcome.status === 'written';
}
