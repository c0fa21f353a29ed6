/**
 * The FOCUS export (docs/features/spend-and-exports.md): the export rows (one per UTC day × key × model-or-line) as a
 * FOCUS 1.2 cost-and-usage dataset, the open format of the FinOps Foundation that Vantage, CloudZero and Finout read.
 * Pure: one row in, one CSV line out (quoting as the CSV export, shared/spend/csv.ts).
 *
 * Column by column: money as exact decimals with 6 places (`BilledCost` = `EffectiveCost` = `ListCost` =
 * `ContractedCost`: Burnrate's figure, the provider's bill where settled); dates as `YYYY-MM-DDTHH:MM:SSZ` (UTC),
 * the charge period the UTC day, the billing period its calendar month; `ResourceId` the key hash, `ResourceName`
 * its label, else the provider's name, else its hint; `SubAccountId`/`SubAccountName` the OpenAI project or Anthropic
 * workspace (empty where none); `Tags` a JSON object of strings (`label` when set, `source`, `settled`);
 * `ConsumedQuantity` the tokens (input + output) in `ConsumedUnit` `Tokens`. Columns of our own start with `x_`.
 */
import { shownModel } from '#shared/usage/names.ts';
import type { Item } from '#shared/db/client.ts';
import { readInt } from '#shared/db/numbers.ts';
import { providerName } from '#shared/connections/alerts.ts';
import { addDays } from '#shared/time/periods.ts';
import { csvText, csvUsd, rowSettled, type RowKey } from '#shared/spend/csv.ts';

export const FOCUS_COLUMNS = [
  'BilledCost',
  'BillingAccountId',
  'BillingAccountName',
  'BillingCurrency',
  'BillingPeriodStart',
  'BillingPeriodEnd',
  'ChargeCategory',
  'ChargeClass',
  'ChargeDescription',
  'ChargeFrequency',
  'ChargePeriodStart',
  'ChargePeriodEnd',
  'ConsumedQuantity',
  'ConsumedUnit',
  'ContractedCost',
  'EffectiveCost',
  'InvoiceIssuerName',
  'ListCost',
  'ProviderName',
  'PublisherName',
  'ResourceId',
  'ResourceName',
  'ResourceType',
  'ServiceCategory',
  'ServiceName',
  'SubAccountId',
  'SubAccountName',
  'Tags',
  'x_Model',
  'x_Requests',
  'x_InputTokens',
  'x_CachedInputTokens',
  'x_OutputTokens',
] as const;

export const FOCUS_HEADER = FOCUS_COLUMNS.join(',');

/** A key as the FOCUS row names it: the CSV's key, its source and hint. */
export interface FocusKey extends RowKey {
  source: 'ingest' | 'connection';
  hint: string | null;
}

/** `2026-11-05` → `2026-11-05T00:00:00Z`. */
const at = (date: string) => `${date}T00:00:00Z`;
const firstOfNextMonth = (date: string) => {
  const d = new Date(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)), 1));
  return d.toISOString().slice(0, 10);
};

/** Who published the model: OpenRouter's model ids carry it (`anthropic/claude-…`); else the provider itself. */
function publisherOf(provider: string, model: string): string {
  if (provider === 'openrouter' && model.includes('/')) return providerName(model.split('/')[0]!);
  return providerName(provider);
}

/** One export row (key × day × model item) as a FOCUS line, without its line end. */
export function focusRow(item: Item, key: FocusKey | null, account: { id: string; name: string }): string {
  const int = (name: string) => readInt(item[name], name);
  const date = item.date as string;
  const provider = item.provider as string;
  // A day its provider breaks down by model only once complete (OpenRouter's today) has no model.
  const model = shownModel(item.model as string) ?? '';
  const hash = item.keyHash as string;
  const cost = csvUsd(readInt(item.costMicros, 'costMicros'));
  const settled = rowSettled(item);
  const input = int('inputTokens');
  const output = int('outputTokens');
  const requests = int('requests');
  const name = key?.label ?? key?.name ?? key?.hint ?? hash.slice(0, 12);
  const tags: Record<string, string> = { ...(key?.label ? { label: key.label } : {}), source: key?.source ?? 'ingest', settled: String(settled) };
  const vendor = providerName(provider);
  const month = `${date.slice(0, 7)}-01`;
  const values: Record<(typeof FOCUS_COLUMNS)[number], string> = {
    BilledCost: cost,
    BillingAccountId: account.id,
    BillingAccountName: csvText(account.name),
    BillingCurrency: 'USD',
    BillingPeriodStart: at(month),
    BillingPeriodEnd: at(firstOfNextMonth(date)),
    ChargeCategory: 'Usage',
    ChargeClass: '',
    ChargeDescription: csvText(`${model || 'all models (by model once the day is complete)'} via ${vendor}: ${requests} requests, ${input} input and ${output} output tokens${settled ? ' (settled)' : ''}`),
    ChargeFrequency: 'Usage-Based',
    ChargePeriodStart: at(date),
    ChargePeriodEnd: at(addDays(date, 1)),
    ConsumedQuantity: String(input + output),
    ConsumedUnit: 'Tokens',
    ContractedCost: cost,
    EffectiveCost: cost,
    InvoiceIssuerName: csvText(vendor),
    ListCost: cost,
    ProviderName: csvText(vendor),
    PublisherName: csvText(publisherOf(provider, model)),
    ResourceId: hash,
    ResourceName: csvText(name),
    ResourceType: 'API Key',
    ServiceCategory: 'AI and Machine Learning',
    ServiceName: csvText(`${vendor} API`),
    SubAccountId: csvText(key?.project?.id ?? ''),
    SubAccountName: csvText(key?.project?.name ?? ''),
    Tags: csvText(JSON.stringify(tags)),
    x_Model: csvText(model),
    x_Requests: String(requests),
    x_InputTokens: String(input),
    x_CachedInputTokens: String(int('cachedInputTokens')),
    x_OutputTokens: String(output),
  };
  return FOCUS_COLUMNS.map((c) => values[c]).join(',');
}
