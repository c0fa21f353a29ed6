import { describe, expect, it } from 'vitest';
import { keyReadPlan } from '#shared/spend/service.ts';

describe('keyReadPlan (groupBy=key: whole months from month × key items, edges from day × key items)', () => {
  it('a range of whole months is one run of months, no days', () => {
    expect(keyReadPlan('2026-01-01', '2026-03-31', '2026-11-23')).toEqual({ months: ['2026-01', '2026-03'], dayRanges: [] });
  });
  it('the current month to today is whole (nothing is dated after the latest day)', () => {
    expect(keyReadPlan('2026-11-01', '2026-11-23', '2026-11-23')).toEqual({ months: ['2026-11', '2026-11'], dayRanges: [] });
  });
  it('…but not in the last 5 minutes of a day, when events may be dated tomorrow', () => {
    expect(keyReadPlan('2026-11-01', '2026-11-23', '2026-11-24')).toEqual({ months: null, dayRanges: [['2026-11-01', '2026-11-23']] });
  });
  it('partial head and tail months are read by day', () => {
    expect(keyReadPlan('2026-01-15', '2026-04-10', '2026-11-23')).toEqual({
      months: ['2026-02', '2026-03'],
      dayRanges: [
        ['2026-01-15', '2026-01-31'],
        ['2026-04-01', '2026-04-10'],
      ],
    });
  });
  it('a range inside one month is one day range; leap February is whole to the 29th', () => {
    expect(keyReadPlan('2026-05-03', '2026-05-09', '2026-11-23')).toEqual({ months: null, dayRanges: [['2026-05-03', '2026-05-09']] });
    expect(keyReadPlan('2028-02-01', '2028-02-29', '2028-11-23')).toEqual({ months: ['2028-02', '2028-02'], dayRanges: [] });
    expect(keyReadPlan('2028-02-01', '2028-02-28', '2028-11-23')).toEqual({ months: null, dayRanges: [['2028-02-01', '2028-02-28']] });
  });
  it('366 days from mid-month: 11 whole months and two edges', () => {
    const plan = keyReadPlan('2025-11-23', '2026-11-23', '2026-11-23');
    expect(plan).toEqual({ months: ['2025-12', '2026-11'], dayRanges: [['2025-11-23', '2025-11-30']] });
  });
});
