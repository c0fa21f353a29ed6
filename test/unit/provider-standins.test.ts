/**
 * The pure parts of the providers' admin API stand-ins (local/provider-org.ts and the two providers' files): array
 * parameters in three spellings, page tokens bound to their query, usage spread over a day so buckets of every
 * width add up, cents as exact decimal strings.
 */
import { describe, expect, it } from 'vitest';
import {
  arrayParam,
  canonicalQuery,
  DAY_S,
  firstOfPreviousMonth,
  indexAdditions,
  makeOrg,
  PageTokens,
  type Series,
  seriesWindow,
  StandInError,
} from '#local/provider-org.ts';
import { anthropicCostItems, nanosToCentsString } from '#local/anthropic-admin.ts';
import { openAiLineItems, seedOpenAiOrg } from '#local/openai-admin.ts';
import { readConfig } from '#shared/config.ts';

const q = (text: string) => new URLSearchParams(text);

describe('array parameters', () => {
  it('reads repeated, bracketed and comma-joined spellings, mixed too, as one list without duplicates', () => {
    const expected = ['api_key_id', 'model'];
    expect(arrayParam(q('group_by=api_key_id&group_by=model'), 'group_by')).toEqual(expected);
    expect(arrayParam(q('group_by[]=api_key_id&group_by[]=model'), 'group_by')).toEqual(expected);
    expect(arrayParam(q('group_by=api_key_id,model'), 'group_by')).toEqual(expected);
    expect(arrayParam(q('group_by%5B%5D=api_key_id&group_by=model,api_key_id'), 'group_by')).toEqual(expected);
    expect(arrayParam(q('limit=3'), 'group_by')).toEqual([]);
  });

  it('gives the three spellings one canonical query (so they share page tokens), and page is not part of it', () => {
    const names = ['group_by'];
    const a = canonicalQuery(q('start_time=1&group_by=model&group_by=api_key_id&page=x'), names);
    expect(canonicalQuery(q('group_by[]=api_key_id&group_by[]=model&start_time=1'), names)).toBe(a);
    expect(canonicalQuery(q('start_time=1&group_by=api_key_id,model'), names)).toBe(a);
    expect(canonicalQuery(q('start_time=1&group_by=model'), names)).not.toBe(a);
  });
});

describe('page tokens', () => {
  it('stand for a position of the query that minted them and refuse any other query or a forged value', () => {
    const tokens = new PageTokens();
    const token = tokens.mint('start_time=1&group_by=model', 1_764_000_000);
    expect(token).toMatch(/^page_[A-Za-z0-9+/]{26}[A-Za-z0-9+/=]{2}$/);
    expect(tokens.read('start_time=1&group_by=model', token)).toBe(1_764_000_000);
    expect(() => tokens.read('start_time=1&group_by=api_key_id', token)).toThrow(StandInError);
    expect(() => tokens.read('start_time=1&group_by=model', 'page_AAAAAGdGxdEiJdKOAAAAAGcqsYA=')).toThrow(StandInError);
    expect(() => new PageTokens().read('start_time=1&group_by=model', token)).toThrow(StandInError);
  });
});

describe('usage spread over the day', () => {
  const day = Date.UTC(2026, 10, 20) / 1000;
  const org = seedOpenAiOrg(day + 10 * DAY_S, 'sk-admin-test');
  const series = org.series[0]!;
  const index = indexAdditions(org);
  const window = (a: number, b: number, now = Infinity) => seriesWindow(org, series, a, b, now, index);
  const sum = (width: number, now = Infinity) => {
    const out: Record<string, number> = {};
    for (let t = day; t < day + DAY_S; t += width) for (const [k, v] of Object.entries(window(t, t + width, now))) out[k] = (out[k] ?? 0) + v;
    return out;
  };

  it('adds up exactly: 1,440 minute buckets and 24 hour buckets equal the day', () => {
    const daily = window(day, day + DAY_S);
    expect(daily.output).toBeGreaterThan(0);
    expect(sum(60)).toEqual(daily);
    expect(sum(3600)).toEqual(daily);
  });

  it('shows only what happened before "now" (the current bucket is partial and grows)', () => {
    const morning = window(day, day + DAY_S, day + 6 * 3600);
    const evening = window(day, day + DAY_S, day + 18 * 3600);
    expect(morning.output).toBeLessThan(evening.output!);
    expect(evening.output).toBeLessThan(window(day, day + DAY_S).output!);
    expect(sum(3600, day + 6 * 3600)).toEqual(morning);
  });

  it('counts an addition in the bucket of its instant, and a revision as the new total of its day', () => {
    const added = makeOrg({ ...org, additions: [{ seriesId: series.id, at: day + 3600 + 5, metrics: { output: 7 } }] });
    const addIndex = indexAdditions(added);
    const hour = (o: typeof org, i: typeof index, h: number) => seriesWindow(o, series, day + h * 3600, day + (h + 1) * 3600, Infinity, i).output;
    expect(hour(added, addIndex, 1)).toBe(hour(org, index, 1)! + 7);
    expect(hour(added, addIndex, 2)).toBe(hour(org, index, 2));
    const revised = makeOrg({ ...org, revisions: { [`${series.id}#${day}`]: { uncached: 0, cached: 0, cacheWrite: 0, output: 86_400, requests: 24 } } });
    expect(seriesWindow(revised, series, day, day + DAY_S, Infinity, indexAdditions(revised))).toEqual({ uncached: 0, cached: 0, cacheWrite: 0, output: 86_400, requests: 24 });
    expect(seriesWindow(revised, series, day, day + 3600, Infinity, indexAdditions(revised)).output).toBe(3600);
  });

  it('stops at the end of a key\'s life', () => {
    const ended: Series = { ...series, until: day + 12 * 3600 };
    const half = seriesWindow(org, ended, day, day + DAY_S, Infinity, index);
    expect(half).toEqual(seriesWindow(org, series, day, day + 12 * 3600, Infinity, index));
    expect(seriesWindow(org, ended, day + 13 * 3600, day + DAY_S, Infinity, index).output).toBe(0);
  });

  it('lets a share of a day arrive late: after the day closed, growing over the next hours, in its last bucket', () => {
    const lateOrg = makeOrg({ ...org, late: { share: 0.1, hours: 6 } });
    const lateIndex = indexAdditions(lateOrg);
    const dayAt = (now: number) => seriesWindow(lateOrg, series, day, day + DAY_S, now, lateIndex);
    const closed = dayAt(day + DAY_S);
    const halfway = dayAt(day + DAY_S + 3 * 3600);
    const settled = dayAt(day + DAY_S + 6 * 3600);
    expect(halfway.output).toBeGreaterThan(closed.output!);
    expect(settled.output).toBeGreaterThan(halfway.output!);
    expect(dayAt(day + 9 * DAY_S)).toEqual(settled);
    expect(settled.output! - closed.output!).toBe(Math.floor(window(day, day + DAY_S).output! * 0.1));
    // Only the day's last bucket grows; the minute buckets still add up to the day.
    const lastMinute = (now: number) => seriesWindow(lateOrg, series, day + DAY_S - 60, day + DAY_S, now, lateIndex).output!;
    expect(lastMinute(day + DAY_S + 6 * 3600) - lastMinute(day + DAY_S)).toBe(settled.output! - closed.output!);
    let minutes = 0;
    for (let t = day; t < day + DAY_S; t += 60) minutes += seriesWindow(lateOrg, series, t, t + 60, day + DAY_S + 3 * 3600, lateIndex).output!;
    expect(minutes).toBe(halfway.output);
  });

  it('starts the seeded organizations on the first day of the previous UTC month', () => {
    expect(firstOfPreviousMonth(Date.UTC(2026, 10, 24, 5) / 1000)).toBe(Date.UTC(2026, 9, 1) / 1000);
    expect(firstOfPreviousMonth(Date.UTC(2027, 0, 1) / 1000)).toBe(Date.UTC(2026, 11, 1) / 1000);
  });
});

describe('money', () => {
  it('writes cents as exact decimal strings (Anthropic)', () => {
    expect(nanosToCentsString(3_000_000_000)).toBe('300');
    expect(nanosToCentsString(7_500_000)).toBe('0.75');
    expect(nanosToCentsString(1)).toBe('0.0000001');
    expect(nanosToCentsString(0)).toBe('0');
    expect(nanosToCentsString(12_378_912_000)).toBe('1237.8912');
  });

  it('bills batch at half price and Priority Tier not at all (Anthropic), batch at half price (OpenAI)', () => {
    const s = { kind: 'messages', model: 'claude-sonnet-4-5-20250929', tier: 'standard' } as Series;
    const m = { uncached: 1_000_000, output: 0, cacheRead: 0, cache5m: 0, cache1h: 0, webSearch: 0 };
    expect(anthropicCostItems(s, m).map((i) => i.nanos)).toEqual([3_000_000_000]);
    expect(anthropicCostItems({ ...s, tier: 'batch' }, m).map((i) => i.nanos)).toEqual([1_500_000_000]);
    expect(anthropicCostItems({ ...s, tier: 'priority' }, m)).toEqual([]);
    // Past 200K input tokens (the 1M window) Sonnet 4.5 bills $6 / $22.50 per 1M, on rows of their own.
    const long = anthropicCostItems({ ...s, contextWindow: '200k-1M' }, { ...m, output: 1_000_000 });
    expect(long.map((i) => [i.description, i.nanos])).toEqual([
      ['Claude Sonnet 4.5 Usage - Input Tokens, Long Context', 6_000_000_000],
      ['Claude Sonnet 4.5 Usage - Output Tokens, Long Context', 22_500_000_000],
    ]);
    expect(anthropicCostItems({ ...s, contextWindow: '200k-1M', tier: 'batch' }, m).map((i) => i.nanos)).toEqual([3_000_000_000]);
    const o = { kind: 'completions', model: 'gpt-4.1-2025-04-14', tier: 'default' } as Series;
    const om = { uncached: 1_000_000, cached: 0, cacheWrite: 0, output: 0, requests: 1 };
    expect(openAiLineItems(o, om)).toEqual([{ lineItem: 'gpt-4.1-2025-04-14, input', nanos: 2_000_000_000, quantity: 1_000_000 }]);
    expect(openAiLineItems({ ...o, tier: 'batch' }, om)[0]!.nanos).toBe(1_000_000_000);
  });
});

describe('where connections call', () => {
  it('the providers\' own hosts; OPENAI_ADMIN_URL / ANTHROPIC_ADMIN_URL / OPENROUTER_URL only on a local stack (DYNAMODB_ENDPOINT set)', () => {
    const real = { openai: 'https://api.openai.com', anthropic: 'https://api.anthropic.com', openrouter: 'https://openrouter.ai' };
    const overrides = { OPENAI_ADMIN_URL: 'http://127.0.0.1:4100/', ANTHROPIC_ADMIN_URL: 'http://127.0.0.1:4200', OPENROUTER_URL: 'http://127.0.0.1:4300/api/v1/' };
    expect(readConfig({}).providerUrls).toEqual(real);
    // AWS (no local endpoint): the overrides are ignored, whoever set them.
    expect(readConfig(overrides).providerUrls).toEqual(real);
    expect(readConfig({ ...overrides, DYNAMODB_ENDPOINT: '' }).providerUrls).toEqual(real);
    // The local stack: base URLs, no trailing slash.
    expect(readConfig({ ...overrides, DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' }).providerUrls).toEqual({
      openai: 'http://127.0.0.1:4100',
      anthropic: 'http://127.0.0.1:4200',
      // With or without /api/v1: the base without it.
      openrouter: 'http://127.0.0.1:4300',
    });
  });
});
