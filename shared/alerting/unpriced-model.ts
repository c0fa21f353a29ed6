/**
 * The `unpriced_model` alert: a model a connection or an event brought that neither the account's own prices nor the
 * built-in table can price. Raised once per account and model (provider + model id), ever, to the admins, naming the
 * model and how to price it; its usage counts at $0 (and in `unpricedRequests`) until a price exists.
 */
import { logger } from '#shared/http/logger.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { makeAlert } from '#shared/alerting/evaluate.ts';
import { publishAlerts } from '#shared/notify/queue.ts';
import { familyOf, resolvePrice, type OwnPriceLookup } from '#shared/pricing/pricing.ts';

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

const providerName = (provider: string) => (provider === 'openai' ? 'OpenAI' : provider === 'anthropic' ? 'Anthropic' : provider);

/** Title and message (pure): which model, what it costs until priced, how to price it. */
export function unpricedModelText({ provider, model }: ModelName): { title: string; message: string } {
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
export async function raiseUnpricedModelAlerts(accountId: string, models: readonly ModelName[], now = new Date()): Promise<void> {
  if (models.length === 0) return;
  try {
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
  } catch (error) {
    logger.error('unpriced model alert failed', error as Error);
  }
}
