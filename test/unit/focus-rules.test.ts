/**
 * The evaluator of the Foundation's FOCUS 1.2 rules (test/support/focus-rules.ts) is not vacuous: Burnrate's FOCUS
 * lines of a priced row (own price, batch tier, web search), a row billed in dollars and usage without a key pass
 * every applicable MUST rule, and each defect the issue quotes fails the rule that forbids it.
 */
import { describe, expect, it } from 'vitest';
import { FOCUS_HEADER, focusRows } from '#shared/spend/focus.ts';
import { rowParts, type ExportContext, type ExportKey } from '#shared/spend/rows.ts';
import { parseCsv } from '../integration/csv.ts';
import { BURNRATE_CRITERIA, datasetOf, evaluate } from '../support/focus-rules.ts';

const key = (over: Partial<ExportKey> = {}): ExportKey => ({ label: 'prod', name: null, project: null, source: 'ingest', hint: null, connectionId: null, keyless: false, tags: {}, ...over });
const ctx: ExportContext = {
  today: '2026-11-28',
  keys: new Map(),
  connections: [],
  account: { id: 'acc_1', name: 'Acme' },
  own: new Map([['anthropic/claude-haiku-4-5', { input: 800_000, cachedInput: 80_000, output: 4_000_000 }]]),
};
const item = (over: Record<string, unknown>) => ({ date: '2026-11-05', keyHash: 'a'.repeat(64), requests: 3n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n, ...over });

function dataset(mutate: (cells: Record<string, string>) => void = () => undefined) {
  const rows = [
    item({ provider: 'anthropic', model: 'claude-haiku-4-5', costMicros: 2_234_567n, inputTokens: 1_300_000n, cachedInputTokens: 300_000n, outputTokens: 70_000n, 'ln:input': 1_000_000n, 'ln:cached_input': 300_000n, 'ln:output/batch': 70_000n, 'ln:web_search': 7n }),
    item({ provider: 'openai', model: 'gpt-4o', costMicros: 1_000_001n, inputTokens: 123_457n, outputTokens: 3n, 'ln:input': 123_457n, 'ln:output': 3n }),
    item({ provider: 'openrouter', model: 'openai/gpt-4.1', costMicros: 1_234_567n, inputTokens: 900n, outputTokens: 100n }),
    item({ provider: 'google', model: 'gemini-9', costMicros: 12_300n, keyHash: 'b'.repeat(64), inputTokens: 1200n, outputTokens: 300n, 'ln:input': 1200n, 'ln:output': 300n }),
    // A correction booked on Nov 5 of a closed October day's bill (a revision downwards).
    item({ provider: 'openai', model: 'gpt-4o', costMicros: -250_000n, requests: 0n, correction: true, correctionOf: '2026-10-30' }),
  ];
  const lines = rows.flatMap((r, i) => {
    const k = i === 3 ? key({ keyless: true, source: 'connection' }) : key();
    return rowParts(r, k, ctx).flatMap((p) => focusRows(r, p, k, ctx));
  });
  const csv = parseCsv(`${FOCUS_HEADER}\r\n${lines.map((l) => `${l}\r\n`).join('')}`);
  const header = csv[0]!;
  for (const row of csv.slice(1)) {
    const cells = Object.fromEntries(header.map((c, i) => [c, row[i]!]));
    mutate(cells);
    header.forEach((c, i) => (row[i] = cells[c]!));
  }
  return datasetOf(csv);
}

const failing = (mutate?: (cells: Record<string, string>) => void) => evaluate(dataset(mutate), BURNRATE_CRITERIA).failures.map((f) => f.rule);

describe("the Foundation's FOCUS 1.2 rules", () => {
  it('Burnrate lines pass every applicable MUST rule; unit price × quantity = cost per line', () => {
    const data = dataset();
    expect(data.rows.length).toBe(4 + 2 + 1 + 1 + 1);
    const correction = data.rows.find((r) => r.ChargeClass === 'Correction')!;
    expect([correction.ChargePeriodStart, correction.BillingPeriodStart, correction.BilledCost, correction.x_PriceSource]).toEqual(['2026-10-30T00:00:00Z', '2026-11-01T00:00:00Z', '-0.250000', 'billed']);
    const result = evaluate(data, BURNRATE_CRITERIA);
    expect(result.failures).toEqual([]);
    expect(result.evaluated.length).toBeGreaterThan(150);
    const own = data.rows.find((r) => r.SkuPriceId === 'anthropic/claude-haiku-4-5/input')!;
    expect([own.ListUnitPrice, own.ContractedUnitPrice, own.PricingUnit, own.PricingQuantity, own.ContractedCost, own.x_PriceSource]).toEqual(['1.0', '0.8', '1M Tokens', '1.0', '0.8', 'own']);
    // The row's cost, split over its lines by their contracted costs, sums exactly.
    const billed = data.rows.filter((r) => r.SkuId === 'anthropic/claude-haiku-4-5').reduce((s, r) => s + Math.round(Number(r.BilledCost) * 1e6), 0);
    expect(billed).toBe(2_234_567);
    const search = data.rows.find((r) => r.SkuPriceId === 'anthropic/claude-haiku-4-5/web_search')!;
    expect([search.ConsumedQuantity, search.ConsumedUnit, search.PricingUnit, search.PricingQuantity, search.ListUnitPrice]).toEqual(['7.0', 'Requests', '1000 Requests', '0.007', '10.0']);
    const openrouter = data.rows.find((r) => r.SkuId === 'openrouter/openai/gpt-4.1')!;
    expect([openrouter.x_PriceSource, openrouter.PricingUnit, openrouter.PricingQuantity, openrouter.ListUnitPrice, openrouter.ConsumedQuantity, openrouter.PublisherName]).toEqual(['billed', 'USD', '1.234567', '1.0', '1000.0', 'OpenAI']);
    expect(data.rows.filter((r) => r.ProviderName === 'Google').every((r) => r.ResourceId === null && r.ResourceName === null && r.ResourceType === null)).toBe(true);
  });

  it('fails on the defects of the old export: no price columns, integer quantities, cost ≠ price × quantity, non-ASCII names, another issuer', () => {
    expect(failing((c) => (c.ConsumedQuantity = c.ConsumedQuantity!.replace('.0', '')))).toContain('ConsumedQuantity-C-001-M');
    expect(failing((c) => (c.ListCost = c.BilledCost!))).toContain('ListCost-C-009-C');
    expect(failing((c) => (c.PricingQuantity = ''))).toContain('PricingQuantity-C-005-C');
    expect(failing((c) => (c.SkuPriceId = ''))).toContain('SkuPriceId-C-005-C');
    expect(failing((c) => (c.SkuMeter = 'Entrée Tokens'))).toContain('SkuMeter-C-002-M');
    expect(failing((c) => (c.InvoiceIssuerName = 'Burnrate'))).toContain('BilledCost-C-005-C');
    expect(failing((c) => (c.ChargeCategory = 'Tokens'))).toEqual(expect.arrayContaining([expect.stringMatching(/^ChargeCategory-C-/)]));
    expect(failing((c) => (c.Tags = '{label: x}'))).toContain('Tags-C-001-M');
    expect(failing((c) => (c.SkuPriceId = 'one/price/for/every/sku'))).toContain('SkuPriceId-C-008-M');
  });

  it('a dataset without the price and SKU columns fails their presence rules', () => {
    const data = dataset();
    for (const c of ['PricingQuantity', 'PricingUnit', 'ListUnitPrice', 'SkuId', 'SkuPriceId', 'SkuMeter', 'SkuPriceDetails']) {
      data.columns = data.columns.filter((x) => x !== c);
    }
    const rules = evaluate(data, BURNRATE_CRITERIA).failures.map((f) => f.rule);
    for (const r of ['CostAndUsage-D-036-M', 'CostAndUsage-D-068-M', 'CostAndUsage-D-004-C', 'CostAndUsage-D-058-C', 'CostAndUsage-D-059-C', 'CostAndUsage-D-060-C', 'CostAndUsage-D-061-C']) expect(rules).toContain(r);
  });
});
