/**
 * Pure parts of unpriced models and usage beyond tokens: which models the alert names and what it says; unit rows
 * of the key breakdown (unit and quantity, never merged with tokens); a contribution of units on its key × day × model.
 */
import { describe, expect, it } from 'vitest';
import { unpricedModels, unpricedModelText, unpricedUnits } from '#shared/alerting/unpriced-model.ts';
import { breakdown } from '#shared/keys/service.ts';
import { addContribution, emptyAggregates, zeroSums } from '#shared/ingest/chunks.ts';
import { unitCost, unitPriceFor } from '#shared/pricing/pricing.ts';

describe('unpriced models', () => {
  it('names each model neither the own prices nor the table price, once, lower-cased', () => {
    const own = new Map([['openai/my-finetune', { input: 1, cachedInput: 1, output: 1 }]]);
    const found = unpricedModels(
      [
        { provider: 'openai', model: 'gpt-7-preview' },
        { provider: 'OpenAI', model: 'GPT-7-Preview' },
        { provider: 'openai', model: 'gpt-4o-2024-08-06' }, // its family is priced
        { provider: 'openai', model: 'my-finetune' }, // an own price
        { provider: 'anthropic', model: 'claude-fable-5-2' }, // in the table now
      ],
      own,
    );
    expect(found).toEqual([{ provider: 'openai', model: 'gpt-7-preview' }]);
  });

  it('says how to price it (the family for a dated name)', () => {
    expect(unpricedModelText({ provider: 'anthropic', model: 'claude-nova-1-20270101' })).toEqual({
      title: 'No price for Anthropic model claude-nova-1-20270101',
      message: expect.stringContaining('PUT /prices/anthropic/claude-nova-1'),
    });
  });
});

describe('unpriced usage beyond tokens', () => {
  it('names each unit row (endpoint and model) the table cannot price, once, and only where units were used', () => {
    const cell = (tier: string, model: string, quantity = 1) => ({ tier, model, quantity });
    const found = unpricedUnits('openai', [
      cell('images', 'images:gpt-image-9', 4),
      cell('images', 'images:GPT-Image-9', 2),
      cell('images', 'images:dall-e-3', 3), // priced
      cell('audio_speeches', 'audio_speeches:tts-9', 100),
      cell('audio_speeches', 'audio_speeches:tts-8', 0), // nothing used: nothing to price
      cell('vector_stores', 'vector_stores', 1_000), // priced for every model
      cell('completions', 'gpt-7-preview', 1), // tokens: unpricedModels' part
    ]);
    expect(found).toEqual([
      { provider: 'openai', model: 'images:gpt-image-9' },
      { provider: 'openai', model: 'audio_speeches:tts-9' },
    ]);
  });

  it('says what the unit row is and that its usage counts $0 until the bill settles the day', () => {
    const text = unpricedModelText({ provider: 'openai', model: 'images:gpt-image-9' });
    expect(text.title).toBe('No price for OpenAI images of model gpt-image-9');
    expect(text.message).toContain('counts at $0');
    expect(text.message).not.toContain('per million tokens');
  });
});

describe('usage beyond tokens', () => {
  it('prices units per the table row of the model, else of the endpoint', () => {
    expect(unitCost(3, unitPriceFor('openai', 'images', 'dall-e-3'))).toEqual({ costMicros: 120_000, priced: true });
    expect(unitCost(1_073_741_824, unitPriceFor('openai', 'vector_stores'))).toEqual({ costMicros: 100_000, priced: true });
    expect(unitCost(90, unitPriceFor('openai', 'audio_transcriptions', 'whisper-1'))).toEqual({ costMicros: 9_000, priced: true });
    expect(unitCost(5, unitPriceFor('openai', 'images', 'gpt-image-9'))).toEqual({ costMicros: 0, priced: false });
  });

  it('keeps a unit row apart in the breakdown, with its unit and quantity', () => {
    const item = (model: string, extra: object = {}) => ({ date: '2026-11-20', provider: 'openai', model, costMicros: 40_000, requests: 1, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, ...extra });
    const b = breakdown([item('gpt-5.1', { inputTokens: 100 }), item('images:dall-e-3', { unit: 'image', quantity: 1 }), item('images:dall-e-3', { date: '2026-11-21', unit: 'image', quantity: 2 })], '2026-11-20', '2026-11-21');
    expect(b.byModel).toEqual([
      { provider: 'openai', model: 'images:dall-e-3', costUsd: 0.08, requests: 2, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, unit: 'image', quantity: 3 },
      { provider: 'openai', model: 'gpt-5.1', costUsd: 0.04, requests: 1, inputTokens: 100, cachedInputTokens: 0, outputTokens: 0 },
    ]);
  });

  it('adds a contribution of units to its key × day × model only (the sums as any other)', () => {
    const a = emptyAggregates();
    const ctx = { knownKeys: new Set<string>(), today: '2026-11-20', month: '2026-11' };
    const c = { keyHash: 'k', date: '2026-11-20', provider: 'openai', model: 'images:dall-e-3', sums: { ...zeroSums(), costMicros: 40_000n, requests: 1n }, unit: 'image', quantity: 1n };
    addContribution(a, c, ctx);
    addContribution(a, { ...c, quantity: 2n }, ctx);
    expect([...a.keyDayModels.values()][0]).toMatchObject({ unit: 'image', quantity: 3n, sums: { costMicros: 80_000n, requests: 2n } });
    expect(a.days.get('2026-11-20')).toMatchObject({ costMicros: 80_000n, requests: 2n });
  });
});
