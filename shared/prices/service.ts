/**
 * An account's own prices: listed over the built-in table, set (admin) and deleted. Ingestion prices events with
 * them from the moment they are written (shared/ingest/own-prices.ts); nothing already counted is repriced.
 */
import * as repo from '#shared/db/prices.ts';
import { Conflict, NotFound } from '#shared/http/errors.ts';
import { microsToUsd, PRICE_TABLE, usdToMicros } from '#shared/pricing/pricing.ts';
import type { PriceParams, PutPriceBody } from '#shared/prices/schemas.ts';

export const MAX_OWN_PRICES = 200;

type Source = 'builtin' | 'account';
const view = (p: { provider: string; model: string; input: number; cachedInput: number; output: number }, source: Source, updatedAt: string) => ({
  provider: p.provider,
  model: p.model,
  input: microsToUsd(p.input),
  cachedInput: microsToUsd(p.cachedInput),
  output: microsToUsd(p.output),
  source,
  updatedAt,
});
export type PriceView = ReturnType<typeof view>;

const BUILTIN_AT = `${PRICE_TABLE.asOf}T00:00:00.000Z`;

/** The built-in table with the account's own prices over it, by provider then model. */
export async function listPrices(accountId: string): Promise<{ items: PriceView[] }> {
  const own = await repo.listOwnPrices(accountId);
  const byId = new Map<string, PriceView>();
  for (const p of PRICE_TABLE.models) byId.set(`${p.provider}/${p.model.toLowerCase()}`, view({ ...p, model: p.model.toLowerCase() }, 'builtin', BUILTIN_AT));
  for (const p of own) byId.set(`${p.provider}/${p.model}`, view(p, 'account', p.updatedAt));
  return { items: [...byId.values()].sort((a, b) => (a.provider + '/' + a.model < b.provider + '/' + b.model ? -1 : 1)) };
}

export async function putPrice(accountId: string, params: PriceParams, body: PutPriceBody, now = new Date()): Promise<PriceView> {
  const price: repo.OwnPrice = {
    provider: params.provider,
    model: params.model,
    input: usdToMicros(body.input),
    cachedInput: usdToMicros(body.cachedInput ?? body.input),
    output: usdToMicros(body.output),
    updatedAt: now.toISOString(),
  };
  if ((await repo.putOwnPrice(accountId, price, MAX_OWN_PRICES)) === 'cap') {
    throw new Conflict(`An account can have at most ${MAX_OWN_PRICES} own prices. Delete one first.`, 'price-limit');
  }
  return view(price, 'account', price.updatedAt);
}

export async function deletePrice(accountId: string, params: PriceParams): Promise<void> {
  if (!(await repo.deleteOwnPrice(accountId, params.provider, params.model))) throw new NotFound('The account has no own price for this model.');
}
