/**
 * The FOCUS export (docs/features/spend-and-exports.md): the export rows as a
 * FOCUS 1.2 cost-and-usage dataset, ONE ROW PER UTC DAY × KEY × PRICE LINE (shared/spend/rows.ts), so that
 * unit price × quantity = cost holds. Pure: one price line in, one CSV line out (RFC 4180 quoting only: FOCUS is read
 * by tools, its values are exact, never neutralised for spreadsheets).
 *
 * Column by column (docs/features/spend-and-exports.md has the table):
 * - `SkuId` `<provider>/<model>`, `SkuPriceId` `<provider>/<model>/<line>[/<tier>]`, `SkuMeter` the line in words,
 *   `SkuPriceDetails` a JSON object of `x_` properties (line, tier, context window);
 * - `PricingUnit` (`1M Tokens`, `1000 Requests`, `Images`, …; `USD` for a row counted in the dollars billed) and
 *   `PricingQuantity` in it; `ListUnitPrice` the built-in table's price, `ContractedUnitPrice` the account's own
 *   price where set (else the list price); `ListCost`/`ContractedCost` = unit price × PricingQuantity, the exact
 *   decimal product (never rounded: a reader multiplying the two in exact decimals finds it to the last digit);
 * - `BilledCost` = `EffectiveCost` what Burnrate counts: the row's cost (the provider's bill where settled, allocated
 *   as part 5 says) split over its lines by their contracted costs, exact to the micro-dollar;
 * - `ConsumedQuantity`/`ConsumedUnit` the raw count (`Tokens`, `Requests`, `Images`, …);
 * - `BillingAccountId`/`BillingAccountName` the provider organization the invoice goes to (Anthropic's organization
 *   id from `GET /v1/organizations/me`, else the connection's id; the connection's name); keys that report through
 *   `/ingest`: the Burnrate account; `ProviderName` = `InvoiceIssuerName` and `PublisherName` display names from the
 *   one table (shared/providers/names.ts);
 * - `ResourceId`/`ResourceName`/`ResourceType` the key, null for usage without a key;
 * - Burnrate's own facts in `x_` columns; `Tags` only the key's effective tags.
 */
import type { Item } from '#shared/db/client.ts';
import { providerName as displayName } from '#shared/providers/names.ts';
import { shownModel } from '#shared/usage/names.ts';
import { addDays } from '#shared/time/periods.ts';
import { decimalText, lineCost, ratio, usdText, type Ratio } from '#shared/pricing/lines.ts';
import { csvUsd } from '#shared/spend/csv.ts';
import { connectionOf, type BilledLine, type ExportContext, type ExportKey, type RowPart } from '#shared/spend/rows.ts';

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
  'CommitmentDiscountStatus',
  'ConsumedQuantity',
  'ConsumedUnit',
  'ContractedCost',
  'ContractedUnitPrice',
  'EffectiveCost',
  'InvoiceIssuerName',
  'ListCost',
  'ListUnitPrice',
  'PricingCategory',
  'PricingCurrency',
  'PricingCurrencyContractedUnitPrice',
  'PricingCurrencyEffectiveCost',
  'PricingCurrencyListUnitPrice',
  'PricingQuantity',
  'PricingUnit',
  'ProviderName',
  'PublisherName',
  'ResourceId',
  'ResourceName',
  'ResourceType',
  'ServiceCategory',
  'ServiceName',
  'ServiceSubcategory',
  'SkuId',
  'SkuMeter',
  'SkuPriceDetails',
  'SkuPriceId',
  'SubAccountId',
  'SubAccountName',
  'Tags',
  'x_Settled',
  'x_Source',
  'x_Provider',
  'x_KeyLabel',
  'x_KeyName',
  'x_Model',
  'x_Line',
  'x_PriceSource',
  'x_Requests',
  'x_InputTokens',
  'x_CachedInputTokens',
  'x_OutputTokens',
] as const;

export type FocusColumn = (typeof FOCUS_COLUMNS)[number];
export const FOCUS_HEADER = FOCUS_COLUMNS.join(',');

/** RFC 4180 only: quoted when it holds a comma, a quote or a line break (quotes doubled). Values stay exact. */
export function focusText(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** `2026-11-05` → `2026-11-05T00:00:00Z`. */
const at = (date: string) => `${date}T00:00:00Z`;
const firstOfNextMonth = (date: string) => new Date(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)), 1)).toISOString().slice(0, 10);

/** Who published the model: OpenRouter's model ids carry it (`anthropic/claude-…`); else the provider itself. */
function publisherOf(provider: string, model: string): string {
  if (provider === 'openrouter' && model.includes('/')) return displayName(model.split('/')[0]!);
  return displayName(provider);
}

/** The billing account of a row: the provider organization (or the connection), else the Burnrate account. */
function billingAccount(key: ExportKey | null, provider: string, ctx: ExportContext): { id: string; name: string } {
  const c = connectionOf(key, provider, ctx);
  if (!c) return ctx.account;
  const org = c.provider === 'anthropic' && c.organization && c.organization.length > 0 ? c.organization[0]! : c.id;
  return { id: org, name: c.name };
}

/** The FOCUS lines of one part of a key × day × model item (without their line ends). */
export function focusRows(item: Item, part: RowPart, key: ExportKey | null, ctx: ExportContext): string[] {
  const provider = item.provider as string;
  // A day its provider breaks down by model only once complete (OpenRouter's today) has no model.
  const model = shownModel(item.model as string) ?? '';
  const date = item.date as string;
  const hash = item.keyHash as string;
  const vendor = displayName(provider);
  const account = billingAccount(key, provider, ctx);
  const month = `${date.slice(0, 7)}-01`;
  const sku = model ? `${provider}/${item.unit !== undefined && model.includes(':') ? model.slice(model.indexOf(':') + 1) : model}` : provider;
  const keyless = key?.keyless ?? false;
  const label = key?.label ?? '';
  return part.lines.map((b: BilledLine, index) => {
    const l = b.line;
    const billed = b.priceSource === 'billed';
    const pq = ratio(l.quantity * l.scale.num, l.scale.den);
    const pqText = decimalText(pq);
    const contracted = l.contracted!;
    const list = l.list ?? contracted;
    const listText = usdText(list);
    const contractedText = usdText(contracted);
    const cost = csvUsd(b.billedMicros);
    const details: Record<string, string> = { x_Line: l.line };
    if (l.tier) details.x_Tier = l.tier;
    if (billed) details.x_BilledIn = 'USD';
    const tokens = (which: 'input' | 'cached' | 'output') => {
      if (l.consumedUnit !== 'Tokens' || billed) return 0n;
      if (which === 'output') return l.line === 'output' ? l.quantity : 0n;
      if (which === 'cached') return l.line === 'cached_input' ? l.quantity : 0n;
      return l.line === 'output' ? 0n : l.quantity;
    };
    const values: Record<FocusColumn, string> = {
      BilledCost: cost,
      BillingAccountId: focusText(account.id),
      BillingAccountName: focusText(account.name),
      BillingCurrency: 'USD',
      BillingPeriodStart: at(month),
      BillingPeriodEnd: at(firstOfNextMonth(date)),
      ChargeCategory: 'Usage',
      ChargeClass: part.correction ? 'Correction' : '',
      ChargeDescription: focusText(`${l.meter} of ${model || 'all models (by model once the day is complete)'}${l.tier ? ` (${l.tier.replaceAll('_', ' ')})` : ''} via ${vendor}`),
      ChargeFrequency: 'Usage-Based',
      // A correction's charge period is the day it corrects; its billing period the month it is booked in.
      ChargePeriodStart: at(part.chargeDate),
      ChargePeriodEnd: at(addDays(part.chargeDate, 1)),
      CommitmentDiscountStatus: '',
      ConsumedQuantity: decimalText(ratio(l.quantity, 1n)),
      ConsumedUnit: l.consumedUnit,
      ContractedCost: billed ? cost : usdText(lineCost(l, contracted)),
      ContractedUnitPrice: contractedText,
      EffectiveCost: cost,
      InvoiceIssuerName: focusText(vendor),
      ListCost: billed ? cost : usdText(lineCost(l, list)),
      ListUnitPrice: listText,
      PricingCategory: 'Standard',
      PricingCurrency: 'USD',
      PricingCurrencyContractedUnitPrice: contractedText,
      PricingCurrencyEffectiveCost: cost,
      PricingCurrencyListUnitPrice: listText,
      PricingQuantity: billed ? cost : pqText,
      PricingUnit: l.pricingUnit,
      ProviderName: focusText(vendor),
      PublisherName: focusText(publisherOf(provider, model)),
      ResourceId: keyless ? '' : hash,
      ResourceName: keyless ? '' : focusText(label || key?.name || key?.hint || hash.slice(0, 12)),
      ResourceType: keyless ? '' : 'API Key',
      ServiceCategory: 'AI and Machine Learning',
      ServiceName: focusText(`${vendor} API`),
      ServiceSubcategory: 'Generative AI',
      SkuId: focusText(sku),
      SkuMeter: focusText(l.meter),
      SkuPriceDetails: focusText(JSON.stringify(details)),
      SkuPriceId: focusText(`${sku}/${l.id}`),
      SubAccountId: focusText(key?.project?.id ?? ''),
      SubAccountName: focusText(key?.project?.name ?? ''),
      Tags: focusText(JSON.stringify(key?.tags ?? {})),
      x_Settled: String(part.settled),
      x_Source: key?.source ?? 'ingest',
      x_Provider: focusText(provider),
      x_KeyLabel: keyless ? '' : focusText(label),
      x_KeyName: focusText(key?.name ?? ''),
      x_Model: focusText(part.model),
      x_Line: focusText(l.id),
      x_PriceSource: b.priceSource,
      // The part's requests on its first line only, and each line's own tokens: every x_ count sums as the CSV's.
      x_Requests: index === 0 ? part.requests.toString() : '0',
      x_InputTokens: (billed ? part.inputTokens : tokens('input')).toString(),
      x_CachedInputTokens: (billed ? part.cachedInputTokens : tokens('cached')).toString(),
      x_OutputTokens: (billed ? part.outputTokens : tokens('output')).toString(),
    };
    return FOCUS_COLUMNS.map((c) => values[c]).join(',');
  });
}
