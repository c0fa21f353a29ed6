import { describe, expect, it } from 'vitest';
import rates from '#shared/pricing/prices.json' with { type: 'json' };
import { loadPriceSources, modelSource, modelSourceKey, priceSources, unitSourceKey } from '#shared/pricing/sources.ts';

/** The built-in table is two files: the rates (prices.json) and where each row comes from (price-sources.json). */
describe('price table provenance', () => {
  const sources = priceSources();
  const today = new Date().toISOString().slice(0, 10);

  it('has one provenance entry for every rate row and a rate row for every entry (models and units)', () => {
    const modelKeys = rates.models.map((r) => modelSourceKey(r.provider, r.model));
    const unitKeys = rates.units.map((r) => unitSourceKey(r.provider, r.item, r.model));
    expect(modelKeys.length).toBeGreaterThan(50);
    expect(unitKeys.length).toBeGreaterThan(5);
    expect(new Set(modelKeys).size).toBe(modelKeys.length);
    expect(new Set(unitKeys).size).toBe(unitKeys.length);
    expect([...sources.models.keys()].sort()).toEqual([...modelKeys].sort());
    expect([...sources.units.keys()].sort()).toEqual([...unitKeys].sort());
  });

  it('keeps the rates free of provenance text (only the prices API reads it)', () => {
    expect(Object.keys(rates).sort()).toEqual(['asOf', 'models', 'unit', 'units']);
    for (const row of [...rates.models, ...rates.units]) {
      expect(Object.keys(row).filter((k) => ['source', 'checkedAt', 'note'].includes(k)), JSON.stringify(row)).toEqual([]);
    }
  });

  it('names the page of every row and a day it was checked, not in the future', () => {
    for (const [key, s] of [...sources.models, ...sources.units]) {
      expect(s.source, key).toMatch(/^https:\/\/\S+$/);
      expect(s.checkedAt, key).toMatch(/^20\d\d-\d\d-\d\d$/);
      expect(s.checkedAt <= today, key).toBe(true);
    }
    expect(modelSource('anthropic', 'claude-sonnet-4-5')).toMatchObject({ source: 'https://platform.claude.com/docs/en/about-claude/pricing' });
    expect(() => modelSource('openai', 'no-such-model')).toThrow(/no entry/);
  });

  it('says how the table was transcribed', () => {
    expect(sources.about).toMatch(/OpenAI .*Anthropic .*Google, Mistral, DeepSeek/);
  });

  it('refuses an entry without an https page or a YYYY-MM-DD day, or with a field it does not know', () => {
    const doc = (entry: object) => ({ about: 'a', models: { 'x/y': { source: 'https://example.com/p', checkedAt: '2025-01-01', ...entry } } });
    expect(loadPriceSources(doc({ note: 'read from a mirror' })).models.get('x/y')).toEqual({ source: 'https://example.com/p', checkedAt: '2025-01-01', note: 'read from a mirror' });
    expect(() => loadPriceSources(doc({ source: undefined }))).toThrow(/source/);
    expect(() => loadPriceSources(doc({ source: 'the pricing page' }))).toThrow(/https URL/);
    expect(() => loadPriceSources(doc({ checkedAt: undefined }))).toThrow(/checkedAt/);
    expect(() => loadPriceSources(doc({ checkedAt: '24.11.2026' }))).toThrow(/YYYY-MM-DD/);
    expect(() => loadPriceSources(doc({ input: '3.00' }))).toThrow(/unknown field input/);
    expect(() => loadPriceSources({ models: {} })).toThrow(/about/);
  });
});
