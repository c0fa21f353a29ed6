/**
 * The `unpriced_model` alert: a model a connection or an event brought that neither the account's own prices nor the
 * built-in table can price. Raised once per account and model (provider + model id), ever, to the admins, naming the
 * model and how to price it; its usage counts at $0 (and in `unpricedRequests`) until a price exists.
 */
import { logger } from '#shared/http/logger.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { makeAlert } from '#shared/alerting/evaluate.ts';
import { publishAlerts } from '#shared/alerting/queue.ts';
import { familyOf, resolvePrice, unitPriceFor, type OwnPriceLookup } from '#shared/pricing/pricing.ts';
import { unitEndpointOf } from '#shared/usage/units.ts';

export interface ModelName {
  provider: string;
  model: string;
}

/** The distinct (provider, model) pairs of `items` that neither `own` nor the built-in table prices. Pure. */
export function unpricedModels(items: Iterable<ModelName>, own?: OwnPriceLookup): ModelName[] {
  const out = new Map<string, ModelName>();
  for (const { provider, model } of items) {
    const id = `${provider.toLowerCase()}/${model.toLowerCase()}`;
    if (out.has(id) || resolvePrice(provider, model, own)) continue;
    out.set(id, { provider: provider.toLowerCase(), model: model.toLowerCase() });
  }
  return [...out.values()];
}

/**
 * The distinct unit rows of `cells` (`images:gpt-image-9`: usage beyond tokens, shared/usage/units.ts) that
 * the table cannot price and that used something (quantity > 0), lower-cased. Token cells are `unpricedModels`' part.
 */
export function unpricedUnits(provider: string, cells: Iterable<{ tier: string; model: string; quantity: number }>): ModelName[] {
  const p = provider.toLowerCase();
  const out = new Map<string, ModelName>();
  for (const { tier, model, quantity } of cells) {
    const endpoint = unitEndpointOf(tier);
    if (!endpoint || quantity <= 0) continue;
    const name = model.toLowerCase();
    if (out.has(name)) continue;
    const ofModel = name.startsWith(`${endpoint.name}:`) ? name.slice(endpoint.name.length + 1) : null;
    if (!unitPriceFor(p, endpoint.item, ofModel)) out.set(name, { provider: p, model: name });
  }
  return [...out.values()];
}

/** A unit row's endpoint and model (`images:gpt-image-9` → images, gpt-image-9), if `model` names one. */
function unitRowOf(model: string): { endpoint: string; model: string | null } | undefined {
  const colon = model.indexOf(':');
  const endpoint = colon < 0 ? model : model.slice(0, colon);
  if (!unitEndpointOf(endpoint)) return undefined;
  return { endpoint, model: colon < 0 ? null : model.slice(colon + 1) };
}

const providerName = (provider: string) => (provider === 'openai' ? 'OpenAI' : provider === 'anthropic' ? 'Anthropic' : provider);

/** Title and message (pure): which model, what it costs until priced, how to price it. */
export function unpricedModelText({ provider, model }: ModelName): { title: string; message: string } {
  const unit = unitRowOf(model);
  if (unit) {
    const what = `${providerName(provider)} ${unit.endpoint.replace(/_/g, ' ')}${unit.model ? ` of model ${unit.model}` : ''}`;
    return {
      title: `No price for ${what}`,
      message:
        `Burnrate's price table has no price for ${what}, so this usage counts at $0 in estimates until the provider's bill settles its day ` +
        `(settled days carry the billed amount). Prices of usage beyond tokens come from the built-in table only.`,
    };
  }
  const family = familyOf(provider, model);
  return {
    title: `No price for ${providerName(provider)} model ${model}`,
    message:
      `Burnrate has no price for the ${providerName(provider)} model "${model}", so its usage counts at $0 and its requests as unpriced. ` +
      `Set a price for it under Prices (PUT /prices/${encodeURIComponent(provider)}/${encodeURIComponent(family ?? model)}, in dollars per million tokens` +
      `${family ? `; the price of "${family}" also prices its dated versions` : ''}); usage counted from then on is priced with it.`,
  };
}

/** One alert per (account, provider, model), ever: the fired item `unpriced:<provider>/<model>` decides who raises it. */
/** Raises each model's one unpriced_model alert; throws what DynamoDB throws (a sync's evaluator retries its message). */
export async function fireUnpricedModelAlerts(accountId: string, models: readonly ModelName[], now = new Date()): Promise<void> {
  if (models.length === 0) return;
  const fired = models.map((m) => ({ model: m, key: { source: `unpriced:${m.provider}/${m.model}`, level: 'unpriced', period: 'once' } }));
  const seen = await alreadyFired(accountId, fired.map((f) => f.key));
  const raised: { accountId: string; alertId: string }[] = [];
  for (const { model, key } of fired) {
    if (seen.has(firedPk(accountId, key))) continue;
    const alert = {
      ...makeAlert(accountId, now, { type: 'unpriced_model', ...unpricedModelText(model), period: now.toISOString().slice(0, 10), thresholdMicros: null, observedMicros: null, channels: ['email'] }),
      adminsOnly: true as const,
    };
    if (await fireAlert(alert, key)) raised.push({ accountId, alertId: alert.id });
  }
  if (raised.length > 0) await publishAlerts(raised);
}

/** `fireUnpricedModelAlerts` for ingestion: never throws, a failure is logged. */
export async function raiseUnpricedModelAlerts(accountId: string, models: readonly ModelName[], now = new Date()): Promise<void> {
  try {
    await fireUnpricedModelAlerts(accountId, models, now);
  } catch (error) {
    logger.error('unpriced model alert failed', error as Error);
  }
}
