/** The spend-anomaly rule's figures (shared/anomaly/rate.ts) and the hour counters they read (shared/db/rolling.ts). */
import { describe, expect, it } from 'vitest';
import { baselineMicrosPerHour, baselineOf, isAnomalous, lastDayByHour, rateMicros } from '#shared/anomaly/rate.ts';
import { hourCostName, keptHours, ratedAfterIngest, spreadOverHours, staleHourNames, syncRead } from '#shared/db/rolling.ts';

const at = (iso: string) => new Date(iso);

describe('hour counters', () => {
  it('keeps the current hour and the 24 before it; removes the 24 before those', () => {
    const now = at('2026-11-21T14:30:00Z');
    const kept = keptHours(now);
    expect(kept).toHaveLength(25);
    expect(kept[0]).toBe('2026-11-21T14');
    expect(kept[24]).toBe('2026-11-20T14');
    const stale = staleHourNames(now);
    expect(stale[0]).toBe(hourCostName('2026-11-20T13'));
    expect(stale.some((n) => kept.map(hourCostName).includes(n))).toBe(false);
  });

  it('spreads a sync’s growth evenly over the time since its last read, exactly, dropping hours no longer kept', () => {
    const now = at('2026-11-21T14:30:00Z');
    const spread = spreadOverHours(3_000_000n, Date.parse('2026-11-21T12:30:00Z'), now.getTime(), now);
    expect(Object.fromEntries(spread)).toEqual({ '2026-11-21T12': 750_000n, '2026-11-21T13': 1_500_000n, '2026-11-21T14': 750_000n });
    const odd = spreadOverHours(10n, Date.parse('2026-11-21T12:10:00Z'), now.getTime(), now);
    expect([...odd.values()].reduce((a, b) => a + b, 0n)).toBe(10n);
    const long = spreadOverHours(48_000_000n, now.getTime() - 48 * 3_600_000, now.getTime(), now);
    expect([...long.values()].reduce((a, b) => a + b, 0n)).toBe(25_000_000n - 500_000n); // 24.5 kept hours of 48
  });
});

describe('rate of the last hour', () => {
  it('the current hour plus the share of the previous one still inside the last 60 minutes', () => {
    const item = { [hourCostName('2026-11-21T13')]: 6_000_000, [hourCostName('2026-11-21T14')]: 1_000_000 };
    expect(rateMicros(item, at('2026-11-21T14:00:00Z'))).toBe(7_000_000n);
    expect(rateMicros(item, at('2026-11-21T14:45:00Z'))).toBe(1_000_000n + 1_500_000n);
    expect(rateMicros({}, at('2026-11-21T14:45:00Z'))).toBe(0n);
    const day = lastDayByHour(item, at('2026-11-21T14:45:00Z'));
    expect(day).toHaveLength(25);
    expect(day.at(-1)).toEqual({ hour: '2026-11-21T14', micros: 1_000_000n });
  });
});

describe('baseline and the rule’s test', () => {
  const today = '2026-11-21';
  const steady = new Map(Array.from({ length: 14 }, (_, i) => [`2026-11-${String(7 + i).padStart(2, '0')}`, 2_400_000n]));

  it('14 complete days averaged by the hour; days before the key existed do not count; a new key has none', () => {
    const b = baselineOf(steady, today, '2026-10-01');
    expect(b).toEqual({ totalMicros: 33_600_000n, days: 14 });
    expect(baselineMicrosPerHour(b)).toBe(100_000n);
    expect(baselineOf(new Map([['2026-11-19', 4_800_000n]]), today, '2026-11-19')).toEqual({ totalMicros: 4_800_000n, days: 2 });
    // A connection imports history from before it found the key: the first day with spend counts.
    expect(baselineOf(steady, today, '2026-11-21').days).toBe(14);
    expect(baselineOf(new Map(), today, '2026-11-21')).toEqual({ totalMicros: 0n, days: 0 });
  });

  it('rate at or past minUsdPerHour and multiplier × baseline', () => {
    const b = baselineOf(steady, today, '2026-10-01'); // $0.10 an hour
    const rule = { minUsdPerHour: 1, multiplier: 10 };
    expect(isAnomalous(1_000_000n, b, rule)).toBe(true); // $1 = 10 × $0.10
    expect(isAnomalous(999_999n, b, rule)).toBe(false);
    expect(isAnomalous(5_000_000n, b, { minUsdPerHour: 20, multiplier: 10 })).toBe(false); // under the minimum
    expect(isAnomalous(5_000_000n, baselineOf(new Map(), today, today), { minUsdPerHour: 5, multiplier: 10 })).toBe(true); // new key
    expect(isAnomalous(1_500_000n, b, { minUsdPerHour: 1, multiplier: 15.5 })).toBe(false);
    expect(isAnomalous(1_550_000n, b, { minUsdPerHour: 1, multiplier: 15.5 })).toBe(true);
  });
});

describe('when a key’s rate exists: from the second ingest or sync that sees it on the day', () => {
  const now = at('2026-11-21T14:30:00Z');
  const midnight = Date.parse('2026-11-21T00:00:00Z');
  const ms = (iso: string) => Date.parse(iso);

  it('an ingest: only when an earlier ingest saw the key today (its item as read before this one)', () => {
    expect(ratedAfterIngest(undefined, now)).toBe(false); // this ingest creates it
    expect(ratedAfterIngest({ lastSeenAt: '2026-11-20T23:59:00.000Z' }, now)).toBe(false); // seen yesterday: this is the first today
    expect(ratedAfterIngest({}, now)).toBe(false);
    expect(ratedAfterIngest({ lastSeenAt: '2026-11-21T00:00:01.000Z' }, now)).toBe(true);
  });

  it('a sync: only when an earlier sync today read the key’s today figure; the growth is spread from the last read', () => {
    // The connection's first sync: it starts the count.
    expect(syncRead({ now, previousSyncAt: undefined, keyFirstSeenAt: undefined, rateAt: undefined })).toEqual({ from: midnight, rated: false });
    // The first sync of the day (the last one was yesterday): spread from midnight, no rate yet.
    expect(syncRead({ now, previousSyncAt: ms('2026-11-20T23:55:00Z'), keyFirstSeenAt: ms('2026-10-01T00:00:00Z'), rateAt: '2026-11-20T23:55:00.000Z' })).toEqual({ from: midnight, rated: false });
    // A key idle today until now: an earlier sync today ran but did not see it. Spread from that sync; this sync is
    // the first that sees it on the day, so no rate yet.
    expect(syncRead({ now, previousSyncAt: ms('2026-11-21T14:15:00Z'), keyFirstSeenAt: ms('2026-10-01T00:00:00Z'), rateAt: '2026-11-20T18:00:00.000Z' })).toEqual({ from: ms('2026-11-21T14:15:00Z'), rated: false });
    // The second sync that sees it today: rated, spread from the sync that last wrote its today figure.
    expect(syncRead({ now, previousSyncAt: ms('2026-11-21T14:15:00Z'), keyFirstSeenAt: ms('2026-10-01T00:00:00Z'), rateAt: '2026-11-21T14:15:00.000Z' })).toEqual({ from: ms('2026-11-21T14:15:00Z'), rated: true });
    expect(syncRead({ now, previousSyncAt: ms('2026-11-21T14:15:00Z'), keyFirstSeenAt: ms('2026-10-01T00:00:00Z'), rateAt: '2026-11-21T09:00:00.000Z' })).toEqual({ from: ms('2026-11-21T14:15:00Z'), rated: true });
    // A key found by the previous sync's own run after it read (firstSeen later): from its today figure's read.
    expect(syncRead({ now, previousSyncAt: ms('2026-11-21T14:15:00Z'), keyFirstSeenAt: ms('2026-11-21T14:16:00Z'), rateAt: '2026-11-21T14:16:00.000Z' })).toEqual({ from: ms('2026-11-21T14:16:00Z'), rated: true });
    // A read from the future (a sync at an earlier clock) is ignored.
    expect(syncRead({ now, previousSyncAt: ms('2026-11-21T15:00:00Z'), keyFirstSeenAt: ms('2026-10-01T00:00:00Z'), rateAt: '2026-11-21T15:00:00.000Z' })).toEqual({ from: midnight, rated: false });
  });
});
