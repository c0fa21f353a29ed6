import { describe, expect, it } from 'vitest';
import { isRejection, priceEvent, type PricedEvent } from '#shared/ingest/events.ts';
import { actionCount, MAX_ACTIONS, planChunks } from '#shared/ingest/chunks.ts';
import { fitToLimits } from '#shared/ingest/limits.ts';
import { breakdown, breakdownRange } from '#shared/keys/service.ts';
import { rollingNames, staleRollingNames } from '#shared/db/rolling.ts';
import type { HttpError } from '#shared/http/errors.ts';

const NOW = new Date('2026-11-21T12:00:00.000Z');
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const base = { requestId: 'r1', keyHash: HASH_A, provider: 'openai', model: 'gpt-4o-mini', inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 1_000_000 };

const priced = (raw: unknown, index = 0) => {
  const result = priceEvent(raw, index, NOW);
  if (isRejection(result)) throw new Error(result.message);
  return result;
};
const codeOf = (raw: unknown) => {
  const result = priceEvent(raw, 3, NOW);
  return isRejection(result) ? result.code : 'ok';
};

describe('priceEvent', () => {
  it('prices the contract example exactly: $0.72', () => {
    expect(priced(base).costMicros).toBe(720_000);
  });
  it('takes costUsd as given, exactly', () => {
    expect(priced({ ...base, costUsd: 0.000001 }).costMicros).toBe(1);
    expect(priced({ ...base, costUsd: 0.01 }).costMicros).toBe(10_000);
  });
  it('tracks an unknown model at 0 as unpriced, and prices a dated model by its family', () => {
    expect(priced({ ...base, model: 'mystery-1' })).toMatchObject({ costMicros: 0, priced: false });
    expect(priced({ ...base, model: 'gpt-4o-mini-2024-07-18' })).toMatchObject({ costMicros: 720_000, priced: true });
  });
  it('defaults the timestamp to now and keeps the UTC day', () => {
    expect(priced(base)).toMatchObject({ timestamp: NOW.toISOString(), date: '2026-11-21' });
    expect(priced({ ...base, timestamp: '2026-11-21T01:30:00+02:00' }).date).toBe('2026-11-20');
  });
  it('normalises provider and model case', () => {
    expect(priced({ ...base, provider: 'OpenAI', model: 'GPT-4o-Mini' })).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', costMicros: 720_000 });
  });
  it.each([
    ['cached more than input', { ...base, cachedInputTokens: 1_000_001 }, 'invalid_event'],
    ['a negative token count', { ...base, outputTokens: -1 }, 'invalid_event'],
    ['a fractional token count', { ...base, inputTokens: 1.5 }, 'invalid_event'],
    ['a bad hash', { ...base, keyHash: 'ABC' }, 'invalid_event'],
    ['an upper-case hash', { ...base, keyHash: 'A'.repeat(64) }, 'invalid_event'],
    ['an unknown field', { ...base, raw: 'sk-...' }, 'invalid_event'],
    ['a cost with 7 decimals', { ...base, costUsd: 0.0000001 }, 'invalid_event'],
    ['a negative cost', { ...base, costUsd: -1 }, 'invalid_event'],
    ['an empty requestId', { ...base, requestId: '' }, 'invalid_event'],
    ['a 129-character requestId', { ...base, requestId: 'x'.repeat(129) }, 'invalid_event'],
    ['not an object', 'event', 'invalid_event'],
    ['a bad timestamp', { ...base, timestamp: 'yesterday' }, 'invalid_event'],
    ['6 minutes ahead', { ...base, timestamp: new Date(NOW.getTime() + 6 * 60_000).toISOString() }, 'timestamp_in_future'],
    ['36 days old', { ...base, timestamp: new Date(NOW.getTime() - 36 * 86_400_000).toISOString() }, 'timestamp_too_old'],
  ])('rejects %s', (_name, raw, code) => {
    expect(codeOf(raw)).toBe(code);
  });
  it('accepts the edges: 4 minutes ahead, 34 days old, zero tokens', () => {
    expect(codeOf({ ...base, timestamp: new Date(NOW.getTime() + 4 * 60_000).toISOString() })).toBe('ok');
    expect(codeOf({ ...base, timestamp: new Date(NOW.getTime() - 34 * 86_400_000).toISOString() })).toBe('ok');
    expect(codeOf({ ...base, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 })).toBe('ok');
  });
  it('names the field in the message', () => {
    const result = priceEvent({ ...base, keyHash: 'x' }, 7, NOW);
    expect(result).toMatchObject({ index: 7, code: 'invalid_event', message: expect.stringContaining('keyHash') });
  });
});

describe('planChunks', () => {
  const event = (i: number, keyHash = HASH_A, extra: Partial<PricedEvent> = {}): PricedEvent => ({
    ...priced({ ...base, requestId: `r${i}`, keyHash }, i),
    ...extra,
  });
  const ctx = { knownKeys: new Set([HASH_A]), today: '2026-11-21', month: '2026-11' };

  it('pre-sums per key, day and model, and never exceeds 100 actions per transaction', () => {
    const events = Array.from({ length: 1000 }, (_, i) => event(i, i % 2 ? HASH_A : HASH_B));
    const chunks = planChunks(events, ctx);
    expect(chunks.every((c) => actionCount(c) <= MAX_ACTIONS)).toBe(true);
    expect(chunks.reduce((n, c) => n + c.events.length, 0)).toBe(1000);
    const cost = chunks.flatMap((c) => [...c.keys.values()]).reduce((n, k) => n + k.total.costMicros, 0n);
    expect(cost).toBe(1000n * 720_000n);
    // Sorted by key first: most chunks touch one key, so nearly all actions are events.
    expect(chunks.length).toBeLessThanOrEqual(12);
  });
  it('marks an unknown key new exactly once and counts it for the account', () => {
    const chunks = planChunks([event(1, HASH_B), event(2, HASH_B), event(3)], ctx);
    const keysTouched = chunks.flatMap((c) => [...c.keys.values()]);
    expect(keysTouched.filter((k) => k.isNew).map((k) => k.keyHash)).toEqual([HASH_B]);
    expect(chunks.reduce((n, c) => n + c.newKeys, 0)).toBe(1);
  });
  it("adds to today's and this month's counters only for events of today and this month", () => {
    const [chunk] = planChunks([event(1), event(2, HASH_A, { date: '2026-11-02' }), event(3, HASH_A, { date: '2026-10-30' })], ctx);
    const key = chunk!.keys.get(HASH_A)!;
    expect([key.total.requests, key.month.requests, key.today.requests]).toEqual([3n, 2n, 1n]);
    expect([...chunk!.days.keys()].sort()).toEqual(['2026-10-30', '2026-11-02', '2026-11-21']);
    expect([...chunk!.months.keys()].sort()).toEqual(['2026-10', '2026-11']);
  });
  it('counts unpriced requests', () => {
    const [chunk] = planChunks([event(1, HASH_A, { priced: false, costMicros: 0 }), event(2)], ctx);
    expect(chunk!.keys.get(HASH_A)!.total.unpricedRequests).toBe(1n);
  });
});

describe('rolling counters', () => {
  it('name the period, and the stale names never include the current ones', () => {
    const names = rollingNames('2026-12-01', '2026-12');
    expect(names.dayCost).toBe('d:2026-12-01:cost');
    const stale = staleRollingNames('2026-12-01', '2026-12');
    // The 7 days before today stay (the key's forecast); the 7 before those go.
    expect(stale).not.toContain('d:2026-11-30:cost');
    expect(stale).not.toContain('d:2026-11-24:cost');
    expect(stale).toContain('d:2026-11-23:cost');
    expect(stale).toContain('m:2026-11:requests');
    expect(stale).toContain('m:2026-10:cost');
    expect(stale).not.toContain(names.dayCost);
    expect(stale).not.toContain(names.monthCost);
  });
});

describe('key breakdown', () => {
  const statusOf = (fn: () => unknown) => {
    try {
      fn();
      return 0;
    } catch (error) {
      return (error as HttpError).status;
    }
  };
  it('defaults to the current month up to today', () => {
    expect(breakdownRange({}, NOW)).toEqual({ from: '2026-11-01', to: '2026-11-21' });
  });
  it('allows 366 days and refuses 367, a reversed range and impossible dates', () => {
    expect(breakdownRange({ from: '2025-11-21', to: '2026-11-21' }, NOW)).toEqual({ from: '2025-11-21', to: '2026-11-21' });
    expect(statusOf(() => breakdownRange({ from: '2025-11-20', to: '2026-11-21' }, NOW))).toBe(400);
    expect(statusOf(() => breakdownRange({ from: '2026-11-10', to: '2026-11-01' }, NOW))).toBe(400);
    expect(statusOf(() => breakdownRange({ from: '2026-02-30' }, NOW))).toBe(400);
  });
  it('zero-fills every day and splits by model, in dollars', () => {
    const items = [
      { date: '2026-11-02', provider: 'openai', model: 'gpt-4o', costMicros: 1_500_000, requests: 3, inputTokens: 10, cachedInputTokens: 0, outputTokens: 5 },
      { date: '2026-11-02', provider: 'openai', model: 'gpt-4o-mini', costMicros: 1, requests: 1, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 },
      { date: '2026-11-03', provider: 'openai', model: 'gpt-4o', costMicros: 500_000, requests: 1, inputTokens: 2, cachedInputTokens: 1, outputTokens: 2 },
    ];
    const b = breakdown(items, '2026-11-01', '2026-11-04');
    expect(b.daily.map((d) => [d.date, d.costUsd, d.requests])).toEqual([
      ['2026-11-01', 0, 0],
      ['2026-11-02', 1.500001, 4],
      ['2026-11-03', 0.5, 1],
      ['2026-11-04', 0, 0],
    ]);
    expect(b.byModel).toEqual([
      { provider: 'openai', model: 'gpt-4o', costUsd: 2, requests: 4, inputTokens: 12, cachedInputTokens: 1, outputTokens: 7 },
      { provider: 'openai', model: 'gpt-4o-mini', costUsd: 0.000001, requests: 1, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 },
    ]);
  });
});

describe('fitToLimits', () => {
  const e = (index: number, keyHash = HASH_A) => ({ ...priced({ ...base, requestId: `f${index}`, keyHash }, index) });
  it('gives the room to the earliest events and refuses the rest', () => {
    const { allowed, refused } = fitToLimits([e(2), e(0), e(1)], { requests: 2, newKeys: 0, known: new Set([HASH_A]) });
    expect(allowed.map((x) => x.index)).toEqual([0, 1]);
    expect(refused).toEqual([{ index: 2, code: 'plan_limit_reached', message: expect.any(String) }]);
  });
  it('admits new keys up to the limit and refuses every event of a key past it', () => {
    const HASH_C = 'c'.repeat(64);
    const { allowed, refused } = fitToLimits([e(0, HASH_B), e(1, HASH_C), e(2, HASH_B), e(3, HASH_C), e(4)], {
      requests: 100,
      newKeys: 1,
      known: new Set([HASH_A]),
    });
    expect(allowed.map((x) => x.index)).toEqual([0, 2, 4]);
    expect(refused.map((r) => [r.index, r.code])).toEqual([
      [1, 'key_limit_reached'],
      [3, 'key_limit_reached'],
    ]);
  });
  it('refuses everything when nothing is left', () => {
    expect(fitToLimits([e(0)], { requests: 0, newKeys: 5, known: new Set() }).allowed).toEqual([]);
  });
});
