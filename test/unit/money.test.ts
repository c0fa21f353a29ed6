/** Exact money: the ceiling (per event, at and one micro-dollar past it), BigInt pre-sums, lossless reads. */
import { describe, expect, it } from 'vitest';
import { isRejection, priceEvent, type PricedEvent } from '#shared/ingest/events.ts';
import { fitToCeiling, MONEY_CEILING_MICROS } from '#shared/ingest/ceiling.ts';
import { planChunks } from '#shared/ingest/chunks.ts';
import { buildChunkActions } from '#shared/db/usage-writes.ts';
import { parseStoredNumber, readInt, readNumber, storedInt } from '#shared/db/numbers.ts';
import { microsToUsd } from '#shared/pricing/pricing.ts';
import { breakdown, toKeyView } from '#shared/keys/service.ts';
import { rollingNames } from '#shared/db/rolling.ts';

const NOW = new Date('2026-11-21T12:00:00.000Z');
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = MONEY_CEILING_MICROS;

const event = (index: number, costUsd: number, keyHash = A, timestamp = NOW.toISOString()): PricedEvent => {
  const raw = { requestId: `r${index}`, keyHash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd, timestamp };
  const result = priceEvent(raw, index, NOW);
  if (isRejection(result)) throw new Error(result.message);
  return result;
};
const room = (keyTotals: [string, bigint][] = [], monthCosts: [string, bigint][] = []) => ({ keyTotals: new Map(keyTotals), monthCosts: new Map(monthCosts) });

describe('the money ceiling', () => {
  it('is $9,000,000,000 in micro-dollars, below 2^53 so every aggregate is a safe integer', () => {
    expect(C).toBe(9_000_000_000_000_000n);
    expect(C < BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(microsToUsd(C)).toBe(9_000_000_000);
  });

  it("accepts an event that takes a key's total exactly to the ceiling, and rejects one a micro-dollar past it", () => {
    const at = fitToCeiling([event(0, 1)], room([[A, C - 1_000_000n]]));
    expect(at.allowed.map((e) => e.index)).toEqual([0]);
    expect(at.refused).toEqual([]);
    const past = fitToCeiling([event(0, 1.000001)], room([[A, C - 1_000_000n]]));
    expect(past.allowed).toEqual([]);
    expect(past.refused).toEqual([{ index: 0, code: 'amount_out_of_range', message: expect.stringContaining('$9,000,000,000') }]);
  });

  it("holds the account's month to the ceiling too (a fresh key in a full month is refused)", () => {
    expect(fitToCeiling([event(0, 0.000001, B)], room([], [['2026-11', C]])).refused).toHaveLength(1);
    expect(fitToCeiling([event(0, 0.000001, B)], room([], [['2026-11', C - 1n]])).allowed).toHaveLength(1);
    // another month has its own room
    const october = event(0, 0.000001, B, '2026-10-30T00:00:00.000Z');
    expect(fitToCeiling([october], room([], [['2026-11', C]])).allowed).toHaveLength(1);
  });

  it('ten events of $1,000,000,000 in one batch: the first nine fit, the tenth is refused; a later free one still fits', () => {
    const events = Array.from({ length: 10 }, (_, i) => event(i, 1_000_000_000));
    const fit = fitToCeiling([...events, event(10, 0)], room());
    expect(fit.allowed.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 10]);
    expect(fit.refused.map((r) => [r.index, r.code])).toEqual([[9, 'amount_out_of_range']]);
  });

  it('pre-sums in BigInt: the micro-dollars of a chunk past 2^53 are exact', () => {
    const events = [...Array.from({ length: 9 }, (_, i) => event(i, 1_000_000_000)), event(9, 0.000001), event(10, 0.000002)];
    const [chunk] = planChunks(events, { knownKeys: new Set([A]), today: '2026-11-21', month: '2026-11' });
    expect(chunk!.keys.get(A)!.total.costMicros).toBe(9_000_000_000_000_003n);
    expect(chunk!.months.get('2026-11')!.costMicros).toBe(9_000_000_000_000_003n);
    const big = Array.from({ length: 10 }, (_, i) => event(i, 999_999_999.999999));
    expect(planChunks(big, { knownKeys: new Set([A]), today: '2026-11-21', month: '2026-11' })[0]!.keys.get(A)!.total.costMicros).toBe(9_999_999_999_999_990n);
  });

  it("conditions the key's total and the account's month on the room left, in the same transaction", () => {
    const events = [event(0, 2), event(1, 3)];
    const [chunk] = planChunks(events, { knownKeys: new Set([A]), today: '2026-11-21', month: '2026-11' });
    const { actions } = buildChunkActions({
      accountId: 'br_X',
      chunk: chunk!,
      now: NOW,
      today: '2026-11-21',
      month: '2026-11',
      periodStart: '2026-11-01',
      limits: { trackedRequests: 1000, keys: 5 },
    });
    const key = actions.find((a) => a.Update?.Key?.sk === 'KEY')!.Update!;
    expect(key.ConditionExpression).toBe('attribute_not_exists(totalCostMicros) OR totalCostMicros <= :maxTotal');
    expect(key.ExpressionAttributeValues![':maxTotal']).toBe(C - 5_000_000n);
    expect(key.ExpressionAttributeValues![':cost']).toBe(5_000_000n);
    const month = actions.find((a) => a.Update?.Key?.sk === 'MONTH#2026-11')!.Update!;
    expect(month.ConditionExpression).toBe('attribute_not_exists(costMicros) OR costMicros <= :maxCost');
    expect(month.ExpressionAttributeValues![':maxCost']).toBe(C - 5_000_000n);
  });
});

describe('stored numbers', () => {
  it('reads integers past 2^53 exactly as bigint, safe ones as number', () => {
    expect(parseStoredNumber('9000000000000000')).toBe(9_000_000_000_000_000);
    expect(parseStoredNumber('10000000000000001')).toBe(10_000_000_000_000_001n);
    expect(parseStoredNumber('12.5')).toBe(12.5);
  });

  it('never reads an unexpected value as 0', () => {
    expect(readInt(undefined)).toBe(0n);
    expect(readInt(10_000_000_000_000_001n)).toBe(10_000_000_000_000_001n);
    expect(readInt(42)).toBe(42n);
    expect(() => readInt('42')).toThrow(TypeError);
    expect(() => readInt(1.5)).toThrow(TypeError);
    expect(() => readNumber({})).toThrow(TypeError);
    expect(readNumber(10_000_000_000_000_000n)).toBe(1e16);
    expect(storedInt(5n)).toBe(5);
    expect(storedInt(2n ** 60n)).toBe(2n ** 60n);
  });

  it('a key whose stored spend is a bigint shows that spend, not 0', () => {
    const r = rollingNames('2026-11-21', '2026-11');
    const view = toKeyView(
      { keyHash: A, provider: 'openai', firstSeenAt: 'x', lastSeenAt: 'x', totalCostMicros: 10_000_000_000_000_000n, [r.monthCost]: 9_000_000_000_000_000, [r.dayCost]: 1n, totalRequests: 10 },
      NOW,
      [],
    );
    expect(view.spend).toEqual({ today: 0.000001, monthToDate: 9_000_000_000, total: 10_000_000_000, forecastMonthEnd: 9_000_000_000 });
    const days = breakdown(
      [
        { date: '2026-11-21', provider: 'openai', model: 'gpt-4o', costMicros: 4_500_000_000_000_000n, requests: 5, inputTokens: 2n ** 53n, cachedInputTokens: 0, outputTokens: 1 },
        { date: '2026-11-21', provider: 'openai', model: 'gpt-4o-mini', costMicros: 4_500_000_000_000_000, requests: 4, inputTokens: 0, cachedInputTokens: 0, outputTokens: 1 },
      ],
      '2026-11-21',
      '2026-11-21',
    );
    expect(days.daily[0]).toMatchObject({ costUsd: 9_000_000_000, requests: 9 });
  });

  it('dollars print exactly up to 2^33 dollars; micro-dollar integers up to the ceiling are exact as bigint', () => {
    expect(microsToUsd(8_589_934_591_999_999n)).toBe(8589934591.999999);
    expect(String(microsToUsd(8_589_934_591_999_999n))).toBe('8589934591.999999');
    expect(microsToUsd(9_000_000_000_000_000n)).toBe(9e9);
  });
});

describe('money exact on the wire (docs/security.md)', () => {
  it('an amount a double cannot carry is written digit for digit; the rest stay plain numbers', async () => {
    const { JsonDecimal, toJson } = await import('#shared/http/json.ts');
    const { formatUsd } = await import('#shared/pricing/pricing.ts');
    const top = microsToUsd(8_999_999_999_999_999n);
    expect(top).toBeInstanceOf(JsonDecimal);
    expect(toJson({ total: top })).toBe('{"total":8999999999.999999}');
    expect(toJson({ total: microsToUsd(8_999_999_999_999_998n) })).toBe('{"total":8999999999.999998}');
    // Sums over ranges go past the ceiling: still exact.
    expect(toJson([microsToUsd(123_456_789_012_345_678n)])).toBe('[123456789012.345678]');
    expect(formatUsd(8_999_999_999_999_999n)).toBe('$8,999,999,999.999999');
    // Up to 2^33 dollars a double prints exactly: a plain number, as before.
    expect(microsToUsd(8_589_934_592_000_000n)).toBe(8_589_934_592);
    expect(microsToUsd(1_234_567)).toBe(1.234567);
    // A log line (plain JSON.stringify) gets the nearest double, never an object.
    expect(JSON.stringify({ v: top })).toBe('{"v":8999999999.999998}');
  });

  it('toJson writes what JSON.stringify writes for everything else', async () => {
    const { toJson } = await import('#shared/http/json.ts');
    const samples: unknown[] = [
      { a: 1, b: 'x"\u0000\u2028', c: null, d: undefined, e: [1, undefined, () => 1, { f: true }], g: new Date(0), h: { toJSON: () => 'j' } },
      [],
      {},
      'text',
      0.1,
      -0,
      Number.NaN,
      null,
      [[[]]],
    ];
    for (const value of samples) expect(toJson(value)).toBe(JSON.stringify(value));
  });

  it('only our own decimals are written bare: text that looks like one stays a string', async () => {
    const { JsonDecimal, toJson } = await import('#shared/http/json.ts');
    const lookalike = '\u0000json-decimal-00000000-0000-4000-8000-000000000000:1';
    const d = new JsonDecimal('12345678901.000001');
    const written = toJson({ label: lookalike, a: d, list: [d, { b: d }], [lookalike]: 1 });
    expect(written).toBe(`{"label":${JSON.stringify(lookalike)},"a":12345678901.000001,"list":[12345678901.000001,{"b":12345678901.000001}],${JSON.stringify(lookalike)}:1}`);
    expect(JSON.parse(written).label).toBe(lookalike);
    expect(() => new JsonDecimal('1e5')).toThrow(RangeError);
    expect(() => new JsonDecimal('1,5')).toThrow(RangeError);
  });
});
