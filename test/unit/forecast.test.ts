import { describe, expect, it } from 'vitest';
import { daysInMonth, daysLeftAfter, forecastMonthEnd } from '#shared/usage/forecast.ts';

const flat = (micros: bigint) => () => micros;
const byDay = (days: Record<string, bigint>) => (date: string) => days[date] ?? 0n;

describe('days of a month', () => {
  it('knows month lengths and leap years', () => {
    expect(daysInMonth('2026-01-15')).toBe(31);
    expect(daysInMonth('2026-04-01')).toBe(30);
    expect(daysInMonth('2026-02-10')).toBe(28);
    expect(daysInMonth('2028-02-10')).toBe(29); // leap
    expect(daysInMonth('2100-02-10')).toBe(28); // divisible by 100: not leap
    expect(daysInMonth('2000-02-10')).toBe(29); // divisible by 400: leap
  });
  it('counts the days after today', () => {
    expect(daysLeftAfter('2026-11-23')).toBe(7);
    expect(daysLeftAfter('2026-11-30')).toBe(0);
    expect(daysLeftAfter('2026-12-01')).toBe(30);
    expect(daysLeftAfter('2028-02-28')).toBe(1);
    expect(daysLeftAfter('2026-02-28')).toBe(0);
  });
});

describe('forecastMonthEnd', () => {
  it('adds the 7-day average times the days left', () => {
    // $10/day for 7 days, 7 days left after the 23rd of November: +$70
    expect(forecastMonthEnd({ today: '2026-11-23', monthToDate: 150_000_000n, daySpend: flat(10_000_000n) })).toBe(220_000_000n);
  });
  it('uses exactly the 7 complete days before today, not today and not the 8th', () => {
    const days = { '2026-11-23': 999_000_000n, '2026-11-15': 999_000_000n, '2026-11-16': 7_000_000n, '2026-11-22': 7_000_000n };
    // (7 + 7) / 7 = $2/day × 7 days left
    expect(forecastMonthEnd({ today: '2026-11-23', monthToDate: 0n, daySpend: byDay(days) })).toBe(14_000_000n);
  });
  it('on the last day of a month is the month-to-date', () => {
    expect(forecastMonthEnd({ today: '2026-11-30', monthToDate: 5n, daySpend: flat(10_000_000n) })).toBe(5n);
    expect(forecastMonthEnd({ today: '2026-02-28', monthToDate: 5n, daySpend: flat(1n) })).toBe(5n);
  });
  it('on Feb 28 of a leap year still has a day to go', () => {
    expect(forecastMonthEnd({ today: '2028-02-28', monthToDate: 0n, daySpend: flat(3_000_000n) })).toBe(3_000_000n);
  });
  it('on the 1st averages the previous month’s last 7 days over the whole month left', () => {
    const days = { '2026-02-28': 7_000_000n, '2026-02-22': 7_000_000n, '2026-02-21': 1_000_000_000n };
    // 14 / 7 = $2/day × 30 days after March 1st
    expect(forecastMonthEnd({ today: '2026-03-01', monthToDate: 1_000_000n, daySpend: byDay(days) })).toBe(61_000_000n);
  });
  it('rounds half-up once, exactly in micro-dollars', () => {
    // 1 µ$ over 7 days, 7 days left: exactly 1; 1 µ$ over 7 days, 3 days left: 3/7 → 0; 4 µ$: 12/7 = 1.71 → 2
    expect(forecastMonthEnd({ today: '2026-11-23', monthToDate: 0n, daySpend: byDay({ '2026-11-20': 1n }) })).toBe(1n);
    expect(forecastMonthEnd({ today: '2026-11-27', monthToDate: 0n, daySpend: byDay({ '2026-11-20': 1n }) })).toBe(0n);
    expect(forecastMonthEnd({ today: '2026-11-27', monthToDate: 0n, daySpend: byDay({ '2026-11-20': 4n }) })).toBe(2n);
  });
  it('stays exact near the money ceiling', () => {
    const big = 9_000_000_000_000_000n;
    expect(forecastMonthEnd({ today: '2026-12-01', monthToDate: big, daySpend: flat(big) })).toBe(big + big * 30n);
  });
  describe('a new account', () => {
    it('created today: the forecast is the month-to-date', () => {
      expect(forecastMonthEnd({ today: '2026-11-23', monthToDate: 4_000_000n, daySpend: flat(0n), since: '2026-11-23' })).toBe(4_000_000n);
    });
    it('2 days old: averages its 2 complete days, not 7', () => {
      const days = { '2026-11-21': 3_000_000n, '2026-11-22': 5_000_000n };
      // (3 + 5) / 2 = $4/day × 7 days left
      expect(forecastMonthEnd({ today: '2026-11-23', monthToDate: 8_000_000n, daySpend: byDay(days), since: '2026-11-21' })).toBe(36_000_000n);
    });
    it('counts an earlier day that has spend (events dated before the key was first seen)', () => {
      const days = { '2026-11-18': 7_000_000n, '2026-11-22': 7_000_000n };
      // since the 22nd, but the 18th has spend: days 18…22 count → 14 / 5 × 7
      expect(forecastMonthEnd({ today: '2026-11-23', monthToDate: 0n, daySpend: byDay(days), since: '2026-11-22' })).toBe(19_600_000n);
    });
  });
  it('refuses a malformed today', () => {
    expect(() => forecastMonthEnd({ today: '2026-13-01', monthToDate: 0n, daySpend: flat(0n) })).toThrow(RangeError);
  });
});
