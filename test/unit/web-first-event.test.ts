/** Get started's "an event arrived" (web/src/screens/get-started/first-event.ts): new events only, amounts exact. */
import { describe, expect, it } from 'vitest';
import { arrivalOf, baselineOf } from '../../web/src/screens/get-started/first-event.ts';

const T0 = '2026-11-24T06:00:00.000Z';
const T1 = '2026-11-24T06:00:05.123Z';
const T2 = '2026-11-24T06:00:07.456Z';

function key(hash: string, o: { first?: string; last: string; total: number; requests: number; hint?: string; label?: string }) {
  return {
    hash,
    label: o.label ?? null,
    name: null,
    hint: o.hint ?? null,
    firstSeenAt: o.first ?? o.last,
    lastSeenAt: o.last,
    spend: { today: o.total, monthToDate: o.total, total: o.total, forecastMonthEnd: o.total },
    requests: { today: o.requests, monthToDate: o.requests, total: o.requests },
  };
}

describe('first event', () => {
  it('an account without keys: nothing until a key appears, then all of its spend, as the very first event', () => {
    const baseline = baselineOf([]);
    expect(baseline.latest).toBeNull();
    expect(arrivalOf(baseline, undefined)).toBeUndefined();
    const arrival = arrivalOf(baseline, key('a'.repeat(64), { last: T1, total: 0.000151, requests: 1, hint: 'x7Qa' }));
    expect(arrival).toMatchObject({ costUsd: 0.000151, requests: 1, first: true, key: { hint: 'x7Qa' } });
  });

  it('an account with keys: their old spend is no event; a new event of the latest key counts its growth, exactly', () => {
    const old = key('b'.repeat(64), { first: '2026-11-01T00:00:00.000Z', last: T0, total: 12.345527, requests: 40 });
    const baseline = baselineOf([old, key('c'.repeat(64), { last: '2026-11-20T00:00:00.000Z', total: 3, requests: 2 })]);
    expect(arrivalOf(baseline, old)).toBeUndefined();
    const grown = key(old.hash, { first: old.firstSeenAt, last: T1, total: 12.345678, requests: 41 });
    // 12.345678 − 12.345527 in binary floating point is 0.000150999999998902: the micro-dollars are exact.
    expect(arrivalOf(baseline, grown)).toMatchObject({ costUsd: 0.000151, requests: 1, first: false });
  });

  it('a key of the baseline that was not the latest: its growth since the baseline', () => {
    const other = key('c'.repeat(64), { last: '2026-11-20T00:00:00.000Z', total: 3, requests: 2 });
    const baseline = baselineOf([key('b'.repeat(64), { last: T0, total: 1, requests: 1 }), other]);
    expect(arrivalOf(baseline, key(other.hash, { first: other.firstSeenAt, last: T2, total: 3.5, requests: 4 }))).toMatchObject({ costUsd: 0.5, requests: 2 });
  });

  it('a key first seen after the baseline: all of its spend; an old key outside the baseline: named, amount unknown', () => {
    const baseline = baselineOf([key('b'.repeat(64), { last: T0, total: 1, requests: 1 })]);
    expect(arrivalOf(baseline, key('d'.repeat(64), { first: T1, last: T2, total: 0.25, requests: 2 }))).toMatchObject({ costUsd: 0.25, requests: 2, first: false });
    expect(arrivalOf(baseline, key('e'.repeat(64), { first: '2026-10-01T00:00:00.000Z', last: T2, total: 9, requests: 9 }))).toMatchObject({ costUsd: null, requests: null });
  });
});
