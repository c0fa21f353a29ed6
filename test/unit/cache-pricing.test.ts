/**
 * Exact prompt-cache pricing and the batch tier (docs/features/ingestion-and-pricing.md): each token class at
 * its own rate, a missing cache-write rate is the input rate, batch is exactly half, rounding once at the end,
 * the account's own prices before the built-in table (the entry point the connections sync calls).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costAt, priceFor, priceUsage, resolvePrice, tierOf, type OwnPriceLookup, type PriceRates, type TierRates, type Usage } from '#shared/pricing/pricing.ts';
import { isRejection, priceEvent, CACHE_PARTS_MESSAGE } from '#shared/ingest/events.ts';
import { toOwnPrice } from '#shared/db/prices.ts';

const M = 1_000_000;
/** Distinct rates (µ$ per 1M tokens) so a token class priced at another's rate shows. */
const RATES: Required<TierRates> = { input: 3_000_000, cachedInput: 300_000, cacheWrite: 3_750_000, cacheWrite1h: 6_000_000, output: 15_000_000 };
const usage = (counts: Partial<Usage>): Usage => ({ provider: 'x', model: 'y', inputTokens: 0, outputTokens: 0, ...counts });
const at = (counts: Partial<Usage>, rates: PriceRates = RATES) => costAt(usage(counts), rates).costMicros;

describe('each token class at its own rate', () => {
  it.each([
    ['uncached input', { inputTokens: M }, RATES.input],
    ['cache reads', { inputTokens: M, cachedInputTokens: M }, RATES.cachedInput],
    ['5-minute cache writes', { inputTokens: M, cacheWriteInputTokens: M }, RATES.cacheWrite],
    ['1-hour cache writes', { inputTokens: M, cacheWrite1hInputTokens: M }, RATES.cacheWrite1h],
    ['output', { outputTokens: M }, RATES.output],
  ])('1M tokens of %s cost that rate', (_name, counts, expected) => {
    expect(at(counts)).toBe(expected);
  });

  it('sums the classes: the contract formula, the uncached part being input minus the three cache parts', () => {
    // 10M input = 1M uncached + 4M read + 3M 5m-write + 2M 1h-write; 1M output
    const cost = at({ inputTokens: 10 * M, cachedInputTokens: 4 * M, cacheWriteInputTokens: 3 * M, cacheWrite1hInputTokens: 2 * M, outputTokens: M });
    expect(cost).toBe(1 * 3_000_000 + 4 * 300_000 + 3 * 3_750_000 + 2 * 6_000_000 + 15_000_000); // $42.45
  });

  it('prices a cache write at the input rate when the price has none (own prices without the fields; OpenAI)', () => {
    const noWrites = { input: 2_000_000, cachedInput: 500_000, output: 8_000_000 };
    expect(at({ inputTokens: 3 * M, cacheWriteInputTokens: M, cacheWrite1hInputTokens: M }, noWrites)).toBe(3 * 2_000_000);
    expect(at({ inputTokens: 3 * M, cacheWriteInputTokens: M, cacheWrite1hInputTokens: M }, { ...noWrites, cacheWrite: 1 })).toBe(2 * 2_000_000 + 1);
  });

  it('rounds the exact sum once, half-up: parts that alone round to 0 add up', () => {
    // one token of each cache class: 0.3 + 3.75 + 6 = 10.05 µ$ → 10
    expect(at({ inputTokens: 3, cachedInputTokens: 1, cacheWriteInputTokens: 1, cacheWrite1hInputTokens: 1 })).toBe(10);
    // 0.3 + 3.75 + 3.75 = 7.8 µ$ → 8 (each rounded alone: 0 + 4 + 4 = 8); + 0.3 + 0.3 = 8.4 → 8 (alone: 8 + 0 + 0)
    expect(at({ inputTokens: 5, cachedInputTokens: 3, cacheWriteInputTokens: 2 })).toBe(8);
    // 0.3 + 0.3 = 0.6 µ$ of reads → 1; each alone 0
    expect(at({ inputTokens: 2, cachedInputTokens: 2 })).toBe(1);
    expect(at({ inputTokens: 1, cachedInputTokens: 1 })).toBe(0);
  });

  it('refuses cache parts that together exceed the input (a guard; ingestion rejects the event first)', () => {
    expect(() => at({ inputTokens: 10, cachedInputTokens: 4, cacheWriteInputTokens: 4, cacheWrite1hInputTokens: 3 })).toThrow(RangeError);
    expect(() => at({ inputTokens: 10, cacheWriteInputTokens: 11 })).toThrow(RangeError);
    expect(() => at({ inputTokens: 10, cacheWrite1hInputTokens: -1 })).toThrow(RangeError);
    expect(() => at({ inputTokens: 10, cacheWriteInputTokens: 1.5 })).toThrow(RangeError);
    expect(() => costAt(usage({ inputTokens: 1, cacheWriteInputTokens: 2 }), undefined)).toThrow(RangeError); // unpriced too
    expect(at({ inputTokens: 10, cachedInputTokens: 4, cacheWriteInputTokens: 3, cacheWrite1hInputTokens: 3 })).toBe(
      Math.round((4 * 300_000 + 3 * 3_750_000 + 3 * 6_000_000) / M),
    );
  });
});

describe('batch tier: half price, exactly', () => {
  it('halves every class', () => {
    const counts = { inputTokens: 10 * M, cachedInputTokens: 4 * M, cacheWriteInputTokens: 3 * M, cacheWrite1hInputTokens: 2 * M, outputTokens: M };
    expect(at({ ...counts, tier: 'batch' })).toBe(at(counts) / 2);
    expect(at({ ...counts, tier: 'standard' })).toBe(at(counts));
  });

  it.each([
    // input at 1 µ$ a token: the batch cost is tokens / 2, rounded half-up once
    [1, 1], // 0.5 µ$ → 1
    [2, 1],
    [3, 2], // 1.5 → 2
    [0, 0],
  ])('rounds the exact half once: %i tokens at 1 µ$ cost %i µ$ in batch', (tokens, expected) => {
    expect(at({ inputTokens: tokens, tier: 'batch' }, { input: M, cachedInput: 0, output: 0 })).toBe(expected);
  });

  it('rounds the half of the exact sum, not half of the rounded standard cost', () => {
    // 3 reads at 0.3 µ$: standard 0.9 µ$ → 1; batch 0.45 µ$ → 0 (half of the rounded 1 would be 0.5 → 1)
    expect(at({ inputTokens: 3, cachedInputTokens: 3 })).toBe(1);
    expect(at({ inputTokens: 3, cachedInputTokens: 3, tier: 'batch' })).toBe(0);
    // 5 reads: standard 1.5 µ$ → 2; batch 0.75 µ$ → 1
    expect(at({ inputTokens: 5, cachedInputTokens: 5, tier: 'batch' })).toBe(1);
  });
});

describe('tierOf: the tier of a provider usage row', () => {
  it.each([
    [{ batch: true }, 'batch'],
    [{ batch: false }, 'standard'],
    [{ batch: null }, 'standard'],
    [{ service_tier: 'batch' }, 'batch'],
    [{ service_tier: 'standard' }, 'standard'],
    [{ service_tier: 'priority' }, 'priority'],
    [{ service_tier: 'priority_on_demand' }, 'priority'],
    [{ service_tier: 'flex' }, 'flex'],
    [{ service_tier: 'default' }, 'standard'],
    [{ service_tier: 'auto' }, 'standard'],
    [{ service_tier: 'scale' }, 'scale'],
    // OpenAI batch usage reports service_tier "default": the batch price, once.
    [{ batch: true, service_tier: 'default' }, 'batch'],
    [{ service_tier: null }, 'standard'],
    [{}, 'standard'],
  ] as const)('%j is %s', (row, tier) => {
    expect(tierOf(row)).toBe(tier);
  });
});

describe('properties', () => {
  const counts = fc
    .record({
      uncached: fc.nat({ max: 2_000_000_000 }),
      cached: fc.nat({ max: 2_000_000_000 }),
      write: fc.nat({ max: 2_000_000_000 }),
      write1h: fc.nat({ max: 2_000_000_000 }),
      outputTokens: fc.nat({ max: 2_000_000_000 }),
    })
    .map(({ uncached, cached, write, write1h, outputTokens }) => ({
      inputTokens: uncached + cached + write + write1h,
      cachedInputTokens: cached,
      cacheWriteInputTokens: write,
      cacheWrite1hInputTokens: write1h,
      outputTokens,
    }));
  const rates = fc.record({
    input: fc.nat({ max: 100_000_000 }),
    cachedInput: fc.nat({ max: 100_000_000 }),
    cacheWrite: fc.nat({ max: 100_000_000 }),
    cacheWrite1h: fc.nat({ max: 100_000_000 }),
    output: fc.nat({ max: 100_000_000 }),
  });
  const twice = (c: Record<string, number>) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v * 2]));

  it('batch of doubled counts costs exactly the standard cost of the counts', () => {
    fc.assert(fc.property(counts, rates, (c, r) => at({ ...twice(c), tier: 'batch' }, r) === at(c, r)));
  });

  it('batch is within rounding of half the standard cost', () => {
    fc.assert(fc.property(counts, rates, (c, r) => Math.abs(2 * at({ ...c, tier: 'batch' }, r) - at(c, r)) <= 1));
  });

  it('a cache-write rate equal to input costs the same as no cache-write rate, and as uncached input', () => {
    fc.assert(
      fc.property(counts, rates, (c, r) => {
        const plain = { input: r.input, cachedInput: r.cachedInput, output: r.output };
        const sameAsInput = { ...plain, cacheWrite: r.input, cacheWrite1h: r.input };
        const uncached = { ...c, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0 };
        return at(c, plain) === at(c, sameAsInput) && at(c, plain) === at(uncached, plain);
      }),
    );
  });

  it('is within 1 µ$ of the sum of its classes priced one by one (one rounding, not five)', () => {
    fc.assert(
      fc.property(counts, rates, (c, r) => {
        const parts = [
          at({ inputTokens: c.inputTokens - c.cachedInputTokens - c.cacheWriteInputTokens - c.cacheWrite1hInputTokens }, r),
          at({ inputTokens: c.cachedInputTokens, cachedInputTokens: c.cachedInputTokens }, r),
          at({ inputTokens: c.cacheWriteInputTokens, cacheWriteInputTokens: c.cacheWriteInputTokens }, r),
          at({ inputTokens: c.cacheWrite1hInputTokens, cacheWrite1hInputTokens: c.cacheWrite1hInputTokens }, r),
          at({ outputTokens: c.outputTokens }, r),
        ].reduce((a, b) => a + b, 0);
        return Math.abs(at(c, r) - parts) <= 3; // five half-up roundings of parts vs one of the sum: at most 2.5 µ$ apart
      }),
    );
  });
});

describe('priceUsage: own prices before the built-in table', () => {
  const own: OwnPriceLookup = new Map([
    ['anthropic/claude-sonnet-4', { input: M, cachedInput: M, output: M }],
    ['openai/gpt-4o-2024-08-06', { input: 2 * M, cachedInput: 2 * M, cacheWrite: 5 * M, output: 2 * M }],
  ]);

  it('takes the own price of the exact model, then of its family, then the built-in one', () => {
    expect(resolvePrice('openai', 'gpt-4o-2024-08-06', own)).toBe(own.get('openai/gpt-4o-2024-08-06'));
    expect(resolvePrice('Anthropic', 'claude-sonnet-4-20250514', own)).toBe(own.get('anthropic/claude-sonnet-4'));
    expect(resolvePrice('openai', 'gpt-4o', own)).toBe(priceFor('openai', 'gpt-4o'));
    expect(resolvePrice('openai', 'gpt-4o')).toBe(priceFor('openai', 'gpt-4o'));
    expect(resolvePrice('openai', 'no-such-model', own)).toBeUndefined();
  });

  it("prices a connection's Anthropic batch row with 1-hour writes at the account's price (own: writes at input)", () => {
    const row: Usage = { provider: 'anthropic', model: 'claude-sonnet-4-20250514', inputTokens: 4 * M, cachedInputTokens: M, cacheWriteInputTokens: M, cacheWrite1hInputTokens: M, outputTokens: M, tier: 'batch' };
    expect(priceUsage(row, own)).toEqual({ costMicros: (5 * M) / 2, priced: true });
    expect(priceUsage({ ...row, tier: 'standard' }, own)).toEqual({ costMicros: 5 * M, priced: true });
  });

  it('prices Anthropic cache writes from the built-in table at 1.25× and 2× input, reads at 0.1×', () => {
    const row: Usage = { provider: 'anthropic', model: 'claude-sonnet-4', inputTokens: 4 * M, cachedInputTokens: M, cacheWriteInputTokens: M, cacheWrite1hInputTokens: M, outputTokens: 0, longContext: false }; // a connection's row of short-context calls
    expect(priceUsage(row)).toEqual({ costMicros: 3 * M + 300_000 + 3_750_000 + 6 * M, priced: true });
    expect(priceUsage({ ...row, tier: 'batch' })).toEqual({ costMicros: (3 * M + 300_000 + 3_750_000 + 6 * M) / 2, priced: true });
    expect(priceUsage({ ...row, model: 'unknown' })).toEqual({ costMicros: 0, priced: false });
  });
});

describe('events with cache writes', () => {
  const now = new Date('2026-11-24T12:00:00Z');
  const event = (extra: object) => ({ requestId: 'r1', keyHash: 'a'.repeat(64), provider: 'anthropic', model: 'claude-sonnet-4', inputTokens: 1000, outputTokens: 0, ...extra });

  it('prices the two write classes and keeps their counts on the priced event', () => {
    const priced = priceEvent(event({ cachedInputTokens: 100, cacheWriteInputTokens: 200, cacheWrite1hInputTokens: 300 }), 0, now);
    expect(priced).toMatchObject({ cachedInputTokens: 100, cacheWriteInputTokens: 200, cacheWrite1hInputTokens: 300, priced: true });
    // 400 × 3 + 100 × 0.3 + 200 × 3.75 + 300 × 6 µ$
    expect(isRejection(priced) ? undefined : priced.costMicros).toBe(1200 + 30 + 750 + 1800);
  });

  it('rejects cache parts that together exceed inputTokens, with a message naming the three fields', () => {
    for (const extra of [{ cachedInputTokens: 500, cacheWriteInputTokens: 300, cacheWrite1hInputTokens: 201 }, { cacheWriteInputTokens: 1001 }, { cacheWrite1hInputTokens: 1001 }]) {
      expect(priceEvent(event(extra), 3, now)).toEqual({ index: 3, code: 'invalid_event', message: CACHE_PARTS_MESSAGE });
    }
    expect(CACHE_PARTS_MESSAGE).toMatch(/cachedInputTokens \+ cacheWriteInputTokens \+ cacheWrite1hInputTokens/);
    expect(priceEvent(event({ cacheWriteInputTokens: -1 }), 0, now)).toMatchObject({ code: 'invalid_event', message: expect.stringContaining('cacheWriteInputTokens') });
    expect(priceEvent(event({ cacheWrite1hInputTokens: 0.5 }), 0, now)).toMatchObject({ code: 'invalid_event', message: expect.stringContaining('cacheWrite1hInputTokens') });
  });

  it('an event without the new fields is priced as before (write counts 0, the old cached-only message)', () => {
    expect(priceEvent(event({ cachedInputTokens: 1001 }), 0, now)).toEqual({ index: 0, code: 'invalid_event', message: 'cachedInputTokens: must not be more than inputTokens.' });
    expect(priceEvent(event({ cachedInputTokens: 100 }), 0, now)).toMatchObject({ costMicros: 900 * 3 + 30, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0 });
  });
});

describe('own prices stored before cache-write prices existed', () => {
  it('read both cache-write prices as the input price (what they were priced at then)', () => {
    const before = { provider: 'selfhosted', model: 'm', inputMicros: 2_000_000, cachedInputMicros: 500_000, outputMicros: 8_000_000, updatedAt: '2026-01-01T00:00:00.000Z' };
    expect(toOwnPrice(before)).toMatchObject({ input: 2_000_000, cachedInput: 500_000, cacheWrite: 2_000_000, cacheWrite1h: 2_000_000, output: 8_000_000 });
    expect(toOwnPrice({ ...before, cacheWriteMicros: 2_500_000, cacheWrite1hMicros: 4_000_000 })).toMatchObject({ cacheWrite: 2_500_000, cacheWrite1h: 4_000_000 });
  });
});

describe('tiers: each at its own price', () => {
  const row = (model: string, tier: Usage['tier'], provider = 'openai'): Usage => ({ provider, model, inputTokens: 2 * M, cachedInputTokens: M, outputTokens: M, tier });

  it('prices OpenAI priority at the published priority rates (gpt-5.1: $2.50 / $0.25 / $20)', () => {
    expect(priceUsage(row('gpt-5.1-2025-11-13', 'priority'))).toEqual({ costMicros: 2_500_000 + 250_000 + 20_000_000, priced: true });
    expect(priceUsage(row('gpt-5.1-2025-11-13', 'standard'))).toEqual({ costMicros: 1_250_000 + 125_000 + 10_000_000, priced: true });
  });

  it('prices OpenAI flex at the published factor (Batch API rates: half), batch at half once', () => {
    const standard = priceUsage(row('gpt-5-mini', 'standard')).costMicros;
    expect(priceUsage(row('gpt-5-mini', 'flex'))).toEqual({ costMicros: standard / 2, priced: true });
    expect(priceUsage(row('gpt-5-mini', tierOf({ batch: true, service_tier: 'default' })))).toEqual({ costMicros: standard / 2, priced: true });
  });

  it('a tier without a published price: the standard price, not exact (Anthropic priority and flex, OpenAI scale, a model without priority rates)', () => {
    const anthropic = priceUsage(row('claude-opus-4-5', 'standard', 'anthropic')).costMicros;
    expect(priceUsage(row('claude-opus-4-5', 'priority', 'anthropic'))).toEqual({ costMicros: anthropic, priced: true, tierUnpriced: true });
    expect(priceUsage(row('claude-opus-4-5', 'flex', 'anthropic'))).toEqual({ costMicros: anthropic, priced: true, tierUnpriced: true });
    const o3pro = priceUsage(row('o3-pro', 'standard')).costMicros;
    expect(priceUsage(row('o3-pro', 'priority'))).toEqual({ costMicros: o3pro, priced: true, tierUnpriced: true });
    expect(priceUsage(row('gpt-4o', 'scale'))).toEqual({ costMicros: priceUsage(row('gpt-4o', 'standard')).costMicros, priced: true, tierUnpriced: true });
  });

  it("takes an own price's tier rates first, and its absent tiers by the same rules", () => {
    const own: OwnPriceLookup = new Map([
      ['anthropic/claude-opus-4-5', { input: 10 * M, cachedInput: M, output: 50 * M, tiers: { priority: { input: 12 * M, cachedInput: 2 * M, output: 60 * M } } }],
    ]);
    expect(priceUsage(row('claude-opus-4-5-20251101', 'priority', 'anthropic'), own)).toEqual({ costMicros: 12 * M + 2 * M + 60 * M, priced: true });
    expect(priceUsage(row('claude-opus-4-5-20251101', 'batch', 'anthropic'), own)).toEqual({ costMicros: (10 * M + M + 50 * M) / 2, priced: true });
  });

  it('adds web searches at the table price per 1,000 (Anthropic $10 / 1,000)', () => {
    const base = priceUsage(row('claude-opus-4-5', 'standard', 'anthropic')).costMicros;
    expect(priceUsage({ ...row('claude-opus-4-5', 'standard', 'anthropic'), webSearchRequests: 3 })).toEqual({ costMicros: base + 30_000, priced: true });
    // A provider the table has no search price for: the tokens priced, the call not exact.
    expect(priceUsage({ ...row('gemini-2.5-pro', 'standard', 'google'), webSearchRequests: 1 })).toMatchObject({ priced: true, tierUnpriced: true });
  });
});
