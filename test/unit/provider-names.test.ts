/** One canonical provider name (shared/providers/canonical.ts): every spelling of a known provider is that provider. */
import { describe, expect, it } from 'vitest';
import { canonicalForm, providerId } from '#shared/providers/canonical.ts';
import { IngestEvent } from '#shared/ingest/schemas.ts';
import { PriceParams } from '#shared/prices/schemas.ts';

describe('provider names', () => {
  it('folds width, case, punctuation and a trailing .com: a known provider whatever its spelling', () => {
    for (const name of ['openai', 'OpenAI', 'openai.', 'openai-', 'open-ai', 'open_ai', 'Open AI', 'openai.com', 'OPENAI.COM', 'ｏｐｅｎａｉ', 'open\u00adai']) {
      expect(providerId(name), name).toBe('openai');
    }
    expect(providerId('Anthropic.com')).toBe('anthropic');
    expect(providerId('open-router')).toBe('openrouter');
    expect(providerId('x.ai')).toBe('xai');
    // A trailing .ai, .co, .io or .dev is dropped too (OpenRouter's own domain is openrouter.ai).
    for (const [name, id] of [['openrouter.ai', 'openrouter'], ['OpenRouter.AI', 'openrouter'], ['anthropic.ai', 'anthropic'], ['mistral.ai', 'mistral'], ['openai.co', 'openai'], ['groq.io', 'groq'], ['deepseek.dev', 'deepseek'], ['cohere.ai.', 'cohere']] as const) {
      expect(providerId(name), name).toBe(id);
    }
    // The Kelvin sign (U+212A) is a K under NFKC.
    expect(canonicalForm('\u212Aelvin')).toBe('kelvin');
  });

  it('keeps other providers as sent, trimmed and lower-cased: look-alikes stay apart', () => {
    expect(providerId(' Azure-OpenAI ')).toBe('azure-openai');
    expect(providerId('openai-compatible')).toBe('openai-compatible');
    expect(providerId('openai2')).toBe('openai2');
    // Only those endings, and only at the end: other domains and look-alikes stay apart.
    expect(providerId('openrouter.net')).toBe('openrouter.net');
    expect(providerId('openai.app')).toBe('openai.app');
    expect(providerId('ai.openai.ai')).toBe('ai.openai.ai');
    // A Cyrillic "а" is a letter of its own, not the Latin a.
    expect(providerId('open\u0430i')).toBe('open\u0430i');
  });

  it('ingestion and prices take the canonical id', () => {
    const event = { requestId: 'r', keyHash: 'a'.repeat(64), model: 'gpt-4o', inputTokens: 1, outputTokens: 1 };
    expect(IngestEvent.parse({ ...event, provider: 'open-ai' }).provider).toBe('openai');
    expect(IngestEvent.parse({ ...event, provider: 'ＯｐｅｎＡＩ' }).provider).toBe('openai');
    expect(IngestEvent.safeParse({ ...event, provider: 'open\u0430i' }).success).toBe(false);
    expect(PriceParams.parse({ provider: 'openai.', model: 'gpt-4o' }).provider).toBe('openai');
    expect(PriceParams.parse({ provider: 'Azure-OpenAI', model: 'gpt-4o' }).provider).toBe('azure-openai');
  });
});
