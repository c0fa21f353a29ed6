/** The dashboard's one money and date format (issue 18: `$0.785181` next to `$1.06`, "11-01" next to "Nov 24, 2026"). */
import { describe, expect, it } from 'vitest';
import { axisDay, change, exactMoney, money, period, providerWords, utcDay, when } from '../../web/src/ui/format.ts';

describe('money', () => {
  it('writes every amount a person reads with 2 decimals', () => {
    expect(money(0.785181)).toBe('$0.79');
    expect(money(1.06)).toBe('$1.06');
    expect(money(131.14183)).toBe('$131.14');
    expect(money(14165.2)).toBe('$14,165.20');
    expect(money(0)).toBe('$0.00');
    expect(money(0.005)).toBe('$0.01');
  });
  it('goes to 2 significant digits only where 2 decimals would read $0.00', () => {
    expect(money(0.000123)).toBe('$0.00012');
    expect(money(0.0049)).toBe('$0.0049');
    expect(money(-0.001)).toBe('-$0.001');
  });
  it('keeps the exact value for titles and accessible descriptions', () => {
    expect(exactMoney(0.785181)).toBe('$0.785181');
    expect(exactMoney(2)).toBe('$2.00');
  });
});

describe('dates', () => {
  it('one format for days, moments, months and chart axes, without repeating UTC', () => {
    expect(utcDay('2026-11-24')).toBe('Nov 24, 2026');
    expect(when('2026-11-24T15:04:05Z')).toBe('Nov 24, 2026, 3:04 PM');
    expect(axisDay('2026-11-01')).toBe('Nov 1');
    expect(period('2026-11')).toBe('November 2026');
    expect(period('2026-11-03')).toBe('Nov 3, 2026');
  });
});

describe('change', () => {
  it('says the change against the previous period in whole percent', () => {
    expect(change(112, 100)).toBe('+12%');
    expect(change(97, 100)).toBe('−3%');
    expect(change(5, 0)).toBeNull();
  });
});

describe('providers', () => {
  it('writes the providers Burnrate knows as they write themselves, any other id as sent', () => {
    expect(['openai', 'anthropic', 'google', 'mistral', 'xai', 'deepseek'].map(providerWords)).toEqual(['OpenAI', 'Anthropic', 'Google', 'Mistral', 'xAI', 'DeepSeek']);
    expect(providerWords('acme-llm')).toBe('acme-llm');
  });
});
