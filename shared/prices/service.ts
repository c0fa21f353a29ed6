/**
 * An account's own prices: listed over the built-in table, set (admin) and deleted. Ingestion prices events with
 * them from the moment they are written (shared/ingest/own-prices.ts); nothing already counted is repriced.
 */
import * as repo from '#shared/db/prices.ts';
import { Conflict, NotFound } from '#shared/http/errors.ts';
import { microsToUsd, PRICE_TABLE, PRICED_TIERS, usdToMicros, type ModelPrice, type PricedTier, type TierPrices, type TierRates } from '#shared/pricing/pricing.ts';
import { modelSource } from '#shared/pricing/sources.ts';
import type { PriceParams, PutPriceBody } from '#shared/prices/schemas.ts';

export const MAX_OWN_PRICES = 200;

type Rates = Pick<ModelPrice, 'provider' | 'model' | 'input' | 'cachedInput' | 'cacheWrite' | 'cacheWrite1h' | 'output' | 'tiers' | 'longContext'>;

/** One tier's rates in dollars (an absent cache-write rate is the tier's input rate). */
const tierView = (r: TierRates) => ({
  input: microsToUsd(r.input),
  cachedInput: microsToUsd(r.cachedInput),
  cacheWrite: microsToUsd(r.cacheWrite ?? r.input),
  cacheWrite1h: microsToUsd(r.cacheWrite1h ?? r.input),
  output: microsToUsd(r.output),
});
const tiersView = (tiers: TierPrices | undefined) =>
  Object.fromEntries(PRICED_TIERS.flatMap((t) => (tiers?.[t] ? [[t, tierView(tiers[t]!)]] : []))) as Partial<Record<PricedTier, ReturnType<typeof tierView>>>;
/** A built-in row names the page it was transcribed from and the day it was checked; an own price has neither. */
type Origin = { source: 'builtin'; sourceUrl: string; checkedAt: string } | { source: 'account'; sourceUrl: null; checkedAt: null };
const view = (p: Rates, origin: Origin, updatedAt: string) => ({
  provider: p.provider,
  model: p.model,
  input: microsToUsd(p.input),
  cachedInput: microsToUsd(p.cachedInput),
  cacheWrite: microsToUsd(p.cacheWrite),
  cacheWrite1h: microsToUsd(p.cacheWrite1h),
  output: microsToUsd(p.output),
  /** The tiers the price names rates of (the others follow the rules: batch half, flex the provider's factor, …). */
  tiers: tiersView(p.tiers),
  /** The rates of a call past `aboveInputTokens` input tokens (null: every call at the standard rates). */
  longContext: p.longContext ? { aboveInputTokens: p.longContext.aboveInputTokens, ...tierView(p.longContext) } : null,
  source: origin.source,
  sourceUrl: origin.sourceUrl,
  checkedAt: origin.checkedAt,
  updatedAt,
});
export type PriceView = ReturnType<typeof view>;

const BUILTIN_AT = `${PRICE_TABLE.asOf}T00:00:00.000Z`;
const OWN: Origin = { source: 'account', sourceUrl: null, checkedAt: null };

/** The built-in table with the account's own prices over it, by provider then model. */
export async function listPrices(accountId: string): Promise<{ items: PriceView[] }> {
  const own = await repo.listOwnPrices(accountId);
  const byId = new Map<string, PriceView>();
  for (const p of PRICE_TABLE.models) {
    const { source, checkedAt } = modelSource(p.provider, p.model);
    const origin: Origin = { source: 'builtin', sourceUrl: source, checkedAt };
    byId.set(`${p.provider}/${p.model.toLowerCase()}`, view({ ...p, model: p.model.toLowerCase() }, origin, BUILTIN_AT));
  }
  for (const p of own) byId.set(`${p.provider}/${p.model}`, view(p, OWN, p.updatedAt));
  return { items: [...byId.values()].sort((a, b) => (a.provider + '/' + a.model < b.provider + '/' + b.model ? -1 : 1)) };
}

export async function putPrice(accountId: string, params: PriceParams, body: PutPriceBody, now = new Date()): Promise<PriceView> {
  const price: repo.OwnPrice = {
    provider: params.provider,
    model: params.model,
    input: usdToMicros(body.input),
    cachedInput: usdToMicros(body.cachedInput ?? body.input),
    cacheWrite: usdToMicros(body.cacheWrite ?? body.input),
    cacheWrite1h: usdToMicros(body.cacheWrite1h ?? body.input),
    output: usdToMicros(body.output),
    ...(body.tiers && Object.keys(body.tiers).length > 0 ? { tiers: tierMicros(body.tiers) } : {}),
    ...(body.longContext ? { longContext: { aboveInputTokens: body.longContext.aboveInputTokens, ...ratesMicros(body.longContext) } } : {}),
    updatedAt: now.toISOString(),
  };
  if ((await repo.putOwnPrice(accountId, price, MAX_OWN_PRICES)) === 'cap') {
    throw new Conflict(`An account can have at most ${MAX_OWN_PRICES} own prices. Delete one first.`, 'price-limit');
  }
  return view(price, OWN, price.updatedAt);
}

function tierMicros(tiers: NonNullable<PutPriceBody['tiers']>): TierPrices {
  const out: Partial<Record<PricedTier, Required<TierRates>>> = {};
  for (const t of PRICED_TIERS) {
    const r = tiers[t];
    if (!r) continue;
    out[t] = ratesMicros(r);
  }
  return out;
}

/** Rates in dollars → µ$ (an absent cache-write rate is the input rate). */
function ratesMicros(r: { input: number; cachedInput: number; cacheWrite?: number; cacheWrite1h?: number; output: number }): Required<TierRates> {
  const input = usdToMicros(r.input);
  return {
    input,
    cachedInput: usdToMicros(r.cachedInput),
    cacheWrite: r.cacheWrite === undefined ? input : usdToMicros(r.cacheWrite),
    cacheWrite1h: r.cacheWrite1h === undefined ? input : usdToMicros(r.cacheWrite1h),
    output: usdToMicros(r.output),
  };
}

export async function deletePrice(accountId: string, params: PriceParams): Promise<void> {
  if (!(await repo.deleteOwnPrice(accountId, params.provider, params.model))) throw new NotFound('The account has no own price for this model.');
}
