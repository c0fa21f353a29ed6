import { describe, expect, it } from 'vitest';
import {
  costMicros,
  hasAtMostSixDecimals,
  loadPriceTable,
  microsToUsd,
  PRICE_TABLE,
  priceFor,
  usdToMicros,
} from '#shared/pricing/pricing.ts';

const M = 1_000_000;

/**
 * Every model of prices.json with its prices in USD per 1M tokens: input / cached input / output, then the 5-minute
 * and 1-hour cache writes where the provider prices them apart (else they are the input price).
 */
const LISTED: [provider: string, model: string, input: string, cachedInput: string, output: string, cacheWrite?: string, cacheWrite1h?: string][] = [
  ['openai', 'gpt-6.1-sol', '2.00', '0.10', '10.00', '2.50', '2.00'],
  ['openai', 'gpt-6-sol', '2.00', '0.20', '10.00', '2.50', '2.00'],
  ['openai', 'gpt-6-luna', '0.10', '0.01', '0.50', '0.125', '0.10'],
  ['openai', 'gpt-6.1-terra', '1.00', '0.05', '5.00', '1.25', '1.00'],
  ['openai', 'gpt-6-astra', '10.00', '1.00', '50.00'],
  ['openai', 'gpt-5.6-sol', '4.00', '0.40', '20.00', '5.00'],
  ['openai', 'gpt-5.6-terra', '2.00', '0.20', '12.00', '2.50', '2.00'],
  ['openai', 'gpt-5.6-luna', '0.20', '0.02', '1.20', '0.25', '0.20'],
  ['openai', 'gpt-5.5', '5.00', '0.50', '30.00'],
  ['openai', 'gpt-5.5-pro', '30.00', '30.00', '180.00'],
  ['openai', 'gpt-5.4-pro', '30.00', '3.00', '180.00'],
  ['openai', 'gpt-5.4', '2.50', '0.25', '15.00'],
  ['openai', 'gpt-5.4-mini', '0.75', '0.075', '4.50'],
  ['openai', 'gpt-5.4-nano', '0.20', '0.02', '1.25'],
  ['openai', 'gpt-5.2', '1.75', '0.175', '14.00'],
  ['openai', 'text-embedding-3-small', '0.02', '0.02', '0.00'],
  ['openai', 'text-embedding-3-large', '0.13', '0.13', '0.00'],
  ['openai', 'text-embedding-ada-002', '0.10', '0.10', '0.00'],
  ['openai', 'gpt-5.1', '1.25', '0.125', '10.00'],
  ['openai', 'gpt-5', '1.25', '0.125', '10.00'],
  ['openai', 'gpt-5-mini', '0.25', '0.025', '2.00'],
  ['openai', 'gpt-5-nano', '0.05', '0.005', '0.40'],
  ['openai', 'gpt-5-pro', '15.00', '15.00', '120.00'],
  ['openai', 'gpt-4.1', '2.00', '0.50', '8.00'],
  ['openai', 'gpt-4.1-mini', '0.40', '0.10', '1.60'],
  ['openai', 'gpt-4.1-nano', '0.10', '0.025', '0.40'],
  ['openai', 'gpt-4o', '2.50', '1.25', '10.00'],
  ['openai', 'gpt-4o-2024-05-13', '5.00', '5.00', '15.00'],
  ['openai', 'gpt-4o-mini', '0.15', '0.075', '0.60'],
  ['openai', 'o1', '15.00', '7.50', '60.00'],
  ['openai', 'o1-mini', '1.10', '0.55', '4.40'],
  ['openai', 'o3', '2.00', '0.50', '8.00'],
  ['openai', 'o3-pro', '20.00', '20.00', '80.00'],
  ['openai', 'o3-mini', '1.10', '0.55', '4.40'],
  ['openai', 'o4-mini', '1.10', '0.275', '4.40'],
  ['openai', 'gpt-4-turbo', '10.00', '10.00', '30.00'],
  ['openai', 'gpt-3.5-turbo', '0.50', '0.50', '1.50'],
  ['anthropic', 'claude-fable-5-2', '8.00', '0.20', '40.00', '10.00', '16.00'],
  ['anthropic', 'claude-fable-5-1', '10.00', '0.25', '50.00', '12.50', '20.00'],
  ['anthropic', 'claude-mythos-5-1', '10.00', '0.25', '50.00', '12.50', '20.00'],
  ['anthropic', 'claude-fable-5', '10.00', '1.00', '50.00', '12.50', '20.00'],
  ['anthropic', 'claude-mythos-5', '10.00', '1.00', '50.00', '12.50', '20.00'],
  ['anthropic', 'claude-opus-5-5', '4.00', '0.20', '20.00', '5.00', '8.00'],
  ['anthropic', 'claude-opus-5', '5.00', '0.50', '25.00', '6.25', '10.00'],
  ['anthropic', 'claude-opus-4-8', '5.00', '0.50', '25.00', '6.25', '10.00'],
  ['anthropic', 'claude-opus-4-7', '5.00', '0.50', '25.00', '6.25', '10.00'],
  ['anthropic', 'claude-opus-4-6', '5.00', '0.50', '25.00', '6.25', '10.00'],
  ['anthropic', 'claude-opus-4-5', '5.00', '0.50', '25.00', '6.25', '10.00'],
  ['anthropic', 'claude-opus-4-1', '15.00', '1.50', '75.00', '18.75', '30.00'],
  ['anthropic', 'claude-opus-4', '15.00', '1.50', '75.00', '18.75', '30.00'],
  ['anthropic', 'claude-sonnet-5-5', '2.00', '0.10', '10.00', '2.50', '4.00'],
  ['anthropic', 'claude-sonnet-5', '2.00', '0.20', '10.00', '2.50', '4.00'],
  ['anthropic', 'claude-sonnet-4-6', '3.00', '0.30', '15.00', '3.75', '6.00'],
  ['anthropic', 'claude-sonnet-4-5', '3.00', '0.30', '15.00', '3.75', '6.00'],
  ['anthropic', 'claude-sonnet-4', '3.00', '0.30', '15.00', '3.75', '6.00'],
  ['anthropic', 'claude-haiku-5-5', '0.10', '0.01', '0.50', '0.125', '0.20'],
  ['anthropic', 'claude-haiku-4-5', '1.00', '0.10', '5.00', '1.25', '2.00'],
  ['anthropic', 'claude-3-7-sonnet', '3.00', '0.30', '15.00', '3.75', '6.00'],
  ['anthropic', 'claude-3-5-sonnet', '3.00', '0.30', '15.00', '3.75', '6.00'],
  ['anthropic', 'claude-3-5-haiku', '0.80', '0.08', '4.00', '1.00', '1.60'],
  ['anthropic', 'claude-3-opus', '15.00', '1.50', '75.00', '18.75', '30.00'],
  ['anthropic', 'claude-3-haiku', '0.25', '0.03', '1.25', '0.30', '0.50'],
  ['google', 'gemini-3-pro-preview', '2.00', '0.20', '12.00'],
  ['google', 'gemini-2.5-pro', '1.25', '0.125', '10.00'],
  ['google', 'gemini-2.5-flash', '0.30', '0.03', '2.50'],
  ['google', 'gemini-2.5-flash-lite', '0.10', '0.01', '0.40'],
  ['google', 'gemini-2.0-flash', '0.10', '0.025', '0.40'],
  ['google', 'gemini-2.0-flash-lite', '0.075', '0.075', '0.30'],
  ['google', 'gemini-1.5-pro', '1.25', '0.3125', '5.00'],
  ['google', 'gemini-1.5-flash', '0.075', '0.01875', '0.30'],
  ['mistral', 'mistral-large-latest', '2.00', '2.00', '6.00'],
  ['mistral', 'mistral-medium-latest', '0.40', '0.40', '2.00'],
  ['mistral', 'mistral-small-latest', '0.10', '0.10', '0.30'],
  ['mistral', 'magistral-medium-latest', '2.00', '2.00', '5.00'],
  ['mistral', 'magistral-small-latest', '0.50', '0.50', '1.50'],
  ['mistral', 'codestral-latest', '0.30', '0.30', '0.90'],
  ['mistral', 'devstral-medium-latest', '0.40', '0.40', '2.00'],
  ['mistral', 'devstral-small-latest', '0.10', '0.10', '0.30'],
  ['mistral', 'pixtral-large-latest', '2.00', '2.00', '6.00'],
  ['mistral', 'ministral-8b-latest', '0.10', '0.10', '0.10'],
  ['mistral', 'ministral-3b-latest', '0.04', '0.04', '0.04'],
  ['mistral', 'open-mistral-nemo', '0.15', '0.15', '0.15'],
  ['deepseek', 'deepseek-chat', '0.28', '0.028', '0.42'],
  ['deepseek', 'deepseek-reasoner', '0.28', '0.028', '0.42'],
];

/** OpenAI's published Priority processing rates (input, cached input, output), the only per-model tier rates listed. */
/** The models with Anthropic's long-context rates ($6 / $0.60 / $7.50 / $12 / $22.50 past 200K input tokens). */
const LONG_CONTEXT = ['claude-sonnet-4-5', 'claude-sonnet-4'];

const PRIORITY: Record<string, [string, string, string]> = {
  'gpt-5.4': ['5.00', '0.50', '30.00'],
  'gpt-5.4-mini': ['1.50', '0.15', '9.00'],
  'gpt-5.2': ['3.50', '0.35', '28.00'],
  'gpt-5.1': ['2.50', '0.25', '20.00'],
  'gpt-5': ['2.50', '0.25', '20.00'],
  'gpt-5-mini': ['0.45', '0.045', '3.60'],
  'gpt-4.1': ['3.50', '0.875', '14.00'],
  'gpt-4.1-mini': ['0.70', '0.175', '2.80'],
  'gpt-4.1-nano': ['0.20', '0.05', '0.80'],
  'gpt-4o': ['4.25', '2.125', '17.00'],
  'gpt-4o-2024-05-13': ['8.75', '8.75', '26.25'],
  'gpt-4o-mini': ['0.25', '0.125', '1.00'],
  o3: ['3.50', '0.875', '14.00'],
  'o4-mini': ['2.00', '0.50', '8.00'],
};
const priorityRates = ([input, cached, output]: [string, string, string]) => ({
  input: micros(input),
  cachedInput: micros(cached),
  cacheWrite: micros(input),
  cacheWrite1h: micros(input),
  output: micros(output),
});

/** Test-side conversion "0.075" → 75_000 µ$ per 1M tokens, independent of the module's. */
const micros = (usd: string): number => {
  const [whole = '', fraction = ''] = usd.split('.');
  return Number(whole) * M + Number(fraction.padEnd(6, '0'));
};

const cost = (model: string, inputTokens: number, outputTokens = 0, cachedInputTokens = 0, provider = 'openai') =>
  costMicros({ provider, model, inputTokens, cachedInputTokens, outputTokens });

describe('price table', () => {
  it('names its date (where each row comes from: price-sources.test.ts)', () => {
    expect(PRICE_TABLE.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('holds exactly the listed models', () => {
    expect(PRICE_TABLE.models.map((p) => `${p.provider}/${p.model}`).sort()).toEqual(
      LISTED.map(([provider, model]) => `${provider}/${model}`).sort(),
    );
  });

  it.each(LISTED)('%s %s costs %s / %s / %s per 1M tokens', (provider, model, input, cachedInput, output, cacheWrite = input, cacheWrite1h = input) => {
    expect(priceFor(provider, model)).toEqual({
      provider,
      model,
      input: micros(input),
      cachedInput: micros(cachedInput),
      cacheWrite: micros(cacheWrite),
      cacheWrite1h: micros(cacheWrite1h),
      output: micros(output),
      ...(PRIORITY[model] ? { tiers: { priority: priorityRates(PRIORITY[model]) } } : {}),
      ...(LONG_CONTEXT.includes(model) ? { longContext: { aboveInputTokens: 200_000, input: 6 * M, cachedInput: 600_000, cacheWrite: 7_500_000, cacheWrite1h: 12 * M, output: 22_500_000 } } : {}),
    });
    const uncached = costMicros({ provider, model, inputTokens: M, outputTokens: 0, longContext: false });
    const cached = costMicros({ provider, model, inputTokens: M, cachedInputTokens: M, outputTokens: 0, longContext: false });
    const written = costMicros({ provider, model, inputTokens: M, cacheWriteInputTokens: M, outputTokens: 0, longContext: false });
    const written1h = costMicros({ provider, model, inputTokens: M, cacheWrite1hInputTokens: M, outputTokens: 0, longContext: false });
    const out = costMicros({ provider, model, inputTokens: 0, outputTokens: M });
    expect([uncached, cached, written, written1h, out].map((c) => c.costMicros)).toEqual(
      [input, cachedInput, cacheWrite, cacheWrite1h, output].map(micros),
    );
  });

  it("holds Anthropic's cache multipliers: 5-minute writes 1.25×, 1-hour writes 2×, reads 0.1× input (the exceptions as listed)", () => {
    /** Reads below 0.1× input: the newest models' footnotes (Haiku 3's prices are not multiples at all). */
    const reads: Record<string, number> = { 'claude-fable-5-2': 0.025, 'claude-fable-5-1': 0.025, 'claude-mythos-5-1': 0.025, 'claude-opus-5-5': 0.05, 'claude-sonnet-5-5': 0.05 };
    for (const p of PRICE_TABLE.models.filter((m) => m.provider === 'anthropic' && m.model !== 'claude-3-haiku')) {
      expect([p.cacheWrite * 4, p.cacheWrite1h, p.cachedInput], p.model).toEqual([p.input * 5, p.input * 2, p.input * (reads[p.model] ?? 0.1)]);
    }
  });

  it('converts price strings exactly and refuses more than 6 decimals at load', () => {
    const table = (price: string) => ({
      source: 's',
      asOf: '2025-01-01',
      unit: 'USD per 1M tokens',
      models: [{ provider: 'x', model: 'y', input: price, cachedInput: '0', output: '0', source: 'https://example.com/p', checkedAt: '2025-01-01' }],
    });
    expect(loadPriceTable(table('0.075')).models[0]?.input).toBe(75_000);
    expect(loadPriceTable(table('0.000001')).models[0]?.input).toBe(1);
    expect(loadPriceTable(table('123.456789')).models[0]?.input).toBe(123_456_789);
    expect(() => loadPriceTable(table('0.0000001'))).toThrow(RangeError);
    expect(() => loadPriceTable(table('1.0000000'))).toThrow(RangeError);
    expect(() => loadPriceTable(table('-1'))).toThrow();
    expect(() => loadPriceTable(table('1e-3'))).toThrow();
    expect(() => loadPriceTable({ ...table('1'), models: [0.15] })).toThrow();
    const twice = table('1');
    twice.models.push({ provider: 'X', model: 'Y', input: '2', cachedInput: '0', output: '0', source: 'https://example.com/p', checkedAt: '2025-01-01' });
    expect(() => loadPriceTable(twice)).toThrow(/duplicate/);
  });

  it('defaults the cache-write prices to input and converts them exactly', () => {
    const row = { provider: 'x', model: 'y', input: '3', cachedInput: '0.3', output: '15', source: 'https://example.com/p', checkedAt: '2025-01-01' };
    const load = (extra: object) => loadPriceTable({ source: 's', asOf: '2025-01-01', unit: 'USD per 1M tokens', models: [{ ...row, ...extra }] }).models[0];
    expect(load({})).toMatchObject({ cacheWrite: 3_000_000, cacheWrite1h: 3_000_000 });
    expect(load({ cacheWrite: '3.75', cacheWrite1h: '0.000001' })).toMatchObject({ cacheWrite: 3_750_000, cacheWrite1h: 1 });
    expect(() => load({ cacheWrite: '0.0000001' })).toThrow(RangeError);
    expect(() => load({ cacheWrite1h: 6 })).toThrow(/decimal string/);
  });
});

describe('priceFor', () => {
  it.each([
    ['openai', 'gpt-4o-2024-08-06', 'gpt-4o'],
    ['openai', 'gpt-4o-2024-11-20', 'gpt-4o'],
    ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['openai', 'gpt-4.1-2025-04-14', 'gpt-4.1'],
    ['openai', 'gpt-4.1-mini-2025-04-14', 'gpt-4.1-mini'],
    ['openai', 'gpt-4.1-nano-2025-04-14', 'gpt-4.1-nano'],
    ['openai', 'o3-2025-04-16', 'o3'],
    ['openai', 'o4-mini-2025-04-16', 'o4-mini'],
    ['anthropic', 'claude-3-5-haiku-20241022', 'claude-3-5-haiku'],
    ['anthropic', 'claude-3-5-haiku-latest', 'claude-3-5-haiku'],
    ['anthropic', 'claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['anthropic', 'claude-opus-4-20250514', 'claude-opus-4'],
    ['anthropic', 'claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['anthropic', 'claude-3-5-sonnet-20241022', 'claude-3-5-sonnet'],
    ['anthropic', 'claude-3-7-sonnet-latest', 'claude-3-7-sonnet'],
    ['anthropic', 'claude-3-haiku-20240307', 'claude-3-haiku'],
  ])('%s %s takes the price of %s', (provider, dated, family) => {
    expect(priceFor(provider, dated)).toBe(priceFor(provider, family));
    expect(priceFor(provider, dated)?.model).toBe(family);
  });

  it('gives gpt-4o-mini-2024-07-18 the mini price, not gpt-4o', () => {
    const price = priceFor('openai', 'gpt-4o-mini-2024-07-18');
    expect(price).toMatchObject({ input: 150_000, cachedInput: 75_000, output: 600_000 });
    expect(cost('gpt-4o-mini-2024-07-18', M, M, 400_000)).toEqual(cost('gpt-4o-mini', M, M, 400_000));
  });

  it('prefers an exact entry over the family (gpt-4o-2024-05-13 is its own price)', () => {
    expect(priceFor('openai', 'gpt-4o-2024-05-13')?.input).toBe(5_000_000);
  });

  it.each([
    ['openai', 'gpt-4o-audio-preview'],
    ['openai', 'gpt-4o-audio-preview-2024-12-17'],
    ['openai', 'gpt-4o-realtime-preview'],
    ['openai', 'gpt-4'],
    ['openai', 'gpt-4o-'],
    ['openai', 'chatgpt-4o-latest'],
    ['openai', 'gpt-4o-latest'],
    ['openai', 'claude-sonnet-4'],
    ['anthropic', 'gpt-4o'],
    ['anthropic', 'claude-sonnet-4-9'], // no prefix matching: not claude-sonnet-4
    ['anthropic', 'claude-sonnet'],
    ['anthropic', 'claude-3-5-haiku-2024'],
    ['mistral', 'mistral-large'],
    ['', ''],
  ])('leaves %s "%s" unknown', (provider, model) => {
    expect(priceFor(provider, model)).toBeUndefined();
    expect(cost(model, 1000, 1000, 0, provider)).toEqual({ costMicros: 0, priced: false });
  });

  it('ignores the case of provider and model', () => {
    expect(priceFor('OpenAI', 'GPT-4o-Mini')).toBe(priceFor('openai', 'gpt-4o-mini'));
    expect(priceFor('ANTHROPIC', 'Claude-Sonnet-4-20250514')).toBe(priceFor('anthropic', 'claude-sonnet-4'));
    expect(priceFor('Anthropic', 'CLAUDE-3-5-HAIKU-LATEST')).toBe(priceFor('anthropic', 'claude-3-5-haiku'));
    expect(priceFor('OPENAI', 'GPT-4.1-MINI-2025-04-14')).toBe(priceFor('openai', 'gpt-4.1-mini'));
  });
});

describe('costMicros', () => {
  it("matches the contract's example: gpt-4o-mini, 1M input (400k cached), 1M output = $0.72", () => {
    const result = costMicros({
      provider: 'openai',
      model: 'gpt-4o-mini',
      inputTokens: 1_000_000,
      cachedInputTokens: 400_000,
      outputTokens: 1_000_000,
    });
    expect(result).toEqual({ costMicros: 720_000, priced: true });
    expect(microsToUsd(result.costMicros)).toBe(0.72);
  });

  it('defaults cachedInputTokens to 0', () => {
    expect(costMicros({ provider: 'openai', model: 'gpt-4o', inputTokens: 1000, outputTokens: 100 })).toEqual({
      costMicros: 1000 * 2.5 + 100 * 10,
      priced: true,
    });
  });

  it('costs nothing for no tokens, priced', () => {
    expect(cost('gpt-4o', 0, 0)).toEqual({ costMicros: 0, priced: true });
  });

  it.each([
    // gpt-4o-mini input is 0.15 µ$ a token
    [1, 0], // 0.15 µ$
    [3, 0], // 0.45 µ$
    [4, 1], // 0.60 µ$
    [10, 2], // 1.50 µ$: half rounds up
    [30, 5], // 4.50 µ$: half rounds up
    [23, 3], // 3.45 µ$
  ])('rounds half-up once at the end: %i gpt-4o-mini input tokens cost %i µ$', (tokens, expected) => {
    expect(cost('gpt-4o-mini', tokens).costMicros).toBe(expected);
  });

  it('rounds the exact sum once, not each part', () => {
    // gpt-4o-mini: 6 input of which 3 cached = 3 × 0.15 + 3 × 0.075 = 0.675 µ$ → 1 (parts rounded alone: 0 + 0)
    expect(cost('gpt-4o-mini', 6, 0, 3).costMicros).toBe(1);
    // gpt-4o-mini: 4 input of which 1 cached = 0.45 + 0.075 = 0.525 µ$ → 1
    expect(cost('gpt-4o-mini', 4, 0, 1).costMicros).toBe(1);
    // gpt-4o-mini: 2 input of which 1 cached = 0.15 + 0.075 = 0.225 µ$ → 0
    expect(cost('gpt-4o-mini', 2, 0, 1).costMicros).toBe(0);
    // gpt-4.1-nano: 3 input + 1 output = 0.3 + 0.4 = 0.7 µ$ → 1 (parts rounded alone: 0 + 0)
    expect(cost('gpt-4.1-nano', 3, 1).costMicros).toBe(1);
  });

  it('sums 1,000 events of 1 µ$ to exactly 1000 µ$ ($0.001)', () => {
    let total = 0;
    for (let i = 0; i < 1000; i += 1) total += cost('gpt-4o-mini', 4).costMicros; // 0.6 µ$ → 1 each
    expect(total).toBe(1000);
    expect(microsToUsd(total)).toBe(0.001);
  });

  it('handles large but plausible counts exactly', () => {
    // 10 billion output tokens of claude-opus-4 at $75 / 1M = $750,000
    expect(cost('claude-opus-4', 0, 10_000_000_000, 0, 'anthropic').costMicros).toBe(750_000 * M);
  });

  it.each([
    ['a negative input count', { inputTokens: -1, outputTokens: 0 }],
    ['a negative output count', { inputTokens: 0, outputTokens: -1 }],
    ['a negative cached count', { inputTokens: 1, cachedInputTokens: -1, outputTokens: 0 }],
    ['a fractional count', { inputTokens: 1.5, outputTokens: 0 }],
    ['NaN', { inputTokens: Number.NaN, outputTokens: 0 }],
    ['Infinity', { inputTokens: 0, outputTokens: Number.POSITIVE_INFINITY }],
    ['an unsafe integer', { inputTokens: 2 ** 53, outputTokens: 0 }],
    ['more cached than input tokens', { inputTokens: 1, cachedInputTokens: 2, outputTokens: 0 }],
  ])('throws RangeError on %s (priced or not)', (_name, counts) => {
    expect(() => costMicros({ provider: 'openai', model: 'gpt-4o', ...counts })).toThrow(RangeError);
    expect(() => costMicros({ provider: 'openai', model: 'nope', ...counts })).toThrow(RangeError);
  });

  it('throws RangeError when the cost does not fit a safe integer', () => {
    // 2^53 − 1 output tokens at $75 / 1M ≈ 6.8e17 µ$
    expect(() => cost('claude-opus-4', 0, Number.MAX_SAFE_INTEGER, 0, 'anthropic')).toThrow(RangeError);
  });
});

describe('usdToMicros / microsToUsd', () => {
  it.each([
    [0, 0],
    [0.000001, 1],
    [0.72, 720_000],
    [10, 10_000_000],
    [1_000_000_000, 1_000_000_000_000_000],
    [123.456789, 123_456_789],
    [0.3, 300_000],
    [1e-6, 1],
    [5e-6, 5],
    [1.5e-5, 15],
    [4.35, 4_350_000],
    [1.005, 1_005_000],
    [0.29, 290_000],
  ])('%d dollars is %i µ$ and back', (usd, expected) => {
    expect(usdToMicros(usd)).toBe(expected);
    expect(microsToUsd(expected)).toBe(usd);
    expect(String(microsToUsd(expected))).toBe(String(usd));
  });

  it('prints exactly', () => {
    expect(microsToUsd(720_000)).toBe(0.72);
    expect(microsToUsd(1)).toBe(0.000001);
    expect(microsToUsd(10_000_000)).toBe(10);
    expect(JSON.stringify({ v: microsToUsd(100_000 + 200_000) })).toBe('{"v":0.3}');
    expect(JSON.stringify({ v: microsToUsd(123_456_789) })).toBe('{"v":123.456789}');
    expect(Object.is(microsToUsd(0), 0)).toBe(true);
  });

  it('sums 0.1 + 0.2 dollars exactly as micro-dollars, and refuses the float sum itself', () => {
    expect(microsToUsd(usdToMicros(0.1) + usdToMicros(0.2))).toBe(0.3);
    expect(hasAtMostSixDecimals(0.1 + 0.2)).toBe(false);
    expect(() => usdToMicros(0.1 + 0.2)).toThrow(RangeError);
  });

  it.each([
    ['7 decimals', 0.0000001],
    ['7 decimals in exponent form', 1.5e-7],
    ['7 decimals', 1.0000001],
    ['a negative amount', -1],
    ['a negative micro-dollar', -0.000001],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['an amount past the safe integer range', 1e10],
    ['a huge amount', 1e21],
  ])('usdToMicros refuses %s (%d)', (_name, value) => {
    expect(() => usdToMicros(value)).toThrow(RangeError);
  });

  it('accepts -0 as 0', () => {
    expect(usdToMicros(-0)).toBe(0);
  });

  it('microsToUsd refuses non-integers', () => {
    expect(() => microsToUsd(0.5)).toThrow(RangeError);
    expect(() => microsToUsd(Number.NaN)).toThrow(RangeError);
    expect(() => microsToUsd(2 ** 53)).toThrow(RangeError);
  });

  it.each([
    [0, true],
    [0.72, true],
    [123.456789, true],
    [1e-6, true],
    [1e21, true],
    [-2.5, true],
    [0.0000001, false],
    [1.5e-7, false],
    [0.1 + 0.2, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
  ])('hasAtMostSixDecimals(%d) is %s', (value, expected) => {
    expect(hasAtMostSixDecimals(value)).toBe(expected);
  });

  it('round-trips random micro-dollar amounts up to 1e15 (property-style, seeded)', () => {
    // mulberry32: a small seeded PRNG so a failure reproduces
    let seed = 0x5eed_cafe;
    const next32 = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (t ^ (t >>> 14)) >>> 0;
    };
    const random01 = (): number => (next32() * 2 ** 21 + (next32() >>> 11)) / 2 ** 53;

    const samples = [0, 1, 9, 10, 999_999, 1_000_000, 1_000_001, 10 ** 15 - 1, 10 ** 15];
    for (let i = 0; i < 20_000; i += 1) {
      const digits = 1 + Math.floor(random01() * 15); // every magnitude, not just 15-digit values
      samples.push(Math.floor(random01() * 10 ** digits));
    }
    for (const value of samples) {
      const usd = microsToUsd(value); // ≤ $1e9: always a plain number
      if (typeof usd !== 'number') throw new Error(`not a number: ${value}`);
      const text = String(usd);
      const expected = `${Math.floor(value / M)}${value % M ? `.${String(value % M).padStart(6, '0').replace(/0+$/, '')}` : ''}`;
      if (text !== expected || usdToMicros(usd) !== value || !hasAtMostSixDecimals(usd)) {
        expect({ value, text, back: usdToMicros(usd) }).toEqual({ value, text: expected, back: value });
      }
    }
    expect(samples.length).toBe(20_009);
  });
});

describe('long context (Anthropic Sonnet 4 and 4.5 past 200K input tokens)', () => {
  const long = { provider: 'anthropic', model: 'claude-sonnet-4-5-20250929', inputTokens: 250_000, cachedInputTokens: 40_000, cacheWriteInputTokens: 10_000, cacheWrite1hInputTokens: 0, outputTokens: 2_000 };
  it('a call past 200K input tokens is priced at the long-context rates: input, cache and output alike', () => {
    // 200,000 × $6 + 40,000 × $0.60 + 10,000 × $7.50 + 2,000 × $22.50, per 1M tokens
    expect(costMicros(long)).toEqual({ costMicros: 1_200_000 + 24_000 + 75_000 + 45_000, priced: true });
  });
  it('at 200K input tokens, or on a model without long-context rates, the standard rates apply', () => {
    expect(costMicros({ ...long, inputTokens: 200_000, cachedInputTokens: 0, cacheWriteInputTokens: 0 }).costMicros).toBe(600_000 + 30_000);
    expect(costMicros({ ...long, model: 'claude-opus-4-5' }).costMicros).toBe(1_000_000 + 20_000 + 62_500 + 50_000);
  });
  it('usage the provider reports as long-context (aggregated rows) says so; batch halves the long-context rates', () => {
    const row = { ...long, inputTokens: 150_000, cachedInputTokens: 0, cacheWriteInputTokens: 0 };
    expect(costMicros({ ...row, longContext: false }).costMicros).toBe(450_000 + 30_000);
    expect(costMicros({ ...row, longContext: true }).costMicros).toBe(900_000 + 45_000);
    expect(costMicros({ ...row, longContext: true, tier: 'batch' }).costMicros).toBe(450_000 + 22_500);
  });
});
