/** Closed months' pure parts: how far a connection settled a month, what holds a month open, where a change is booked. */
import { describe, expect, it } from 'vitest';
import { heldBack, monthDays, monthsBetween, settlementOf } from '#shared/months/service.ts';
import { bookedDay, emptyAggregates, pastMonthsOf, addContribution, zeroSums, kdmId } from '#shared/usage/aggregates.ts';
import { openMonthGuards } from '#shared/db/usage-writes.ts';

const conn = (over: Record<string, unknown> = {}) =>
  ({ id: 'con_1', provider: 'openai' as const, cursor: null, backfillTo: null, lastSuccessAt: '2026-11-28T12:00:00.000Z', importedFrom: '2026-10-01', unsettledDays: [], untrackedKeys: 0, requestsHeldFrom: null, requestsHeldTo: null, ...over }) as Parameters<typeof settlementOf>[0];

describe('months', () => {
  it('monthsBetween and monthDays', () => {
    expect(monthsBetween('2025-11', '2026-02')).toEqual(['2025-11', '2025-12', '2026-01', '2026-02']);
    expect(monthsBetween('2026-03', '2026-03')).toEqual(['2026-03']);
    expect(monthsBetween('2026-04', '2026-03')).toEqual([]);
    const three = monthsBetween('2023-12', '2026-11');
    expect([three.length, three[0], three.at(-1)]).toEqual([36, '2023-12', '2026-11']);
    expect(monthDays('2024-02')).toEqual({ first: '2024-02-01', last: '2024-02-29' });
  });

  it('settled through the last day without a gap; a month with an unsettled day is not whole', () => {
    expect(settlementOf(conn(), '2026-10', '2026-11-28')).toEqual({ connectionId: 'con_1', provider: 'openai', date: '2026-10-31', complete: true });
    expect(settlementOf(conn({ unsettledDays: ['2026-10-15', '2026-10-20'] }), '2026-10', '2026-11-28')).toMatchObject({ date: '2026-10-14', complete: false });
    // The current month is never whole (today never settles).
    expect(settlementOf(conn(), '2026-11', '2026-11-28')).toMatchObject({ date: '2026-11-27', complete: false });
    // Days before what the connection could import: nothing to settle (history_unavailable), the month is whole.
    expect(settlementOf(conn({ importedFrom: '2026-10-29' }), '2026-10', '2026-11-28')).toMatchObject({ date: '2026-10-31', complete: true });
    expect(settlementOf(conn({ importedFrom: '2026-11-02' }), '2026-10', '2026-11-28')).toMatchObject({ date: null, complete: true });
    // A first sync not done yet: nothing settled.
    expect(settlementOf(conn({ lastSuccessAt: null }), '2026-10', '2026-11-28')).toMatchObject({ date: null, complete: false });
  });

  it('usage a plan limit holds back keeps a month open', () => {
    expect(heldBack(conn(), '2026-10', '2026-11-28')).toBe(false);
    expect(heldBack(conn({ untrackedKeys: 2 }), '2026-10', '2026-11-28')).toBe(true);
    expect(heldBack(conn({ cursor: '2026-10-12' }), '2026-10', '2026-11-28')).toBe(true);
    expect(heldBack(conn({ cursor: '2026-11-12' }), '2026-10', '2026-11-28')).toBe(false);
    expect(heldBack(conn({ requestsHeldFrom: '2026-10-30', requestsHeldTo: '2026-11-02' }), '2026-10', '2026-11-28')).toBe(true);
    expect(heldBack(conn({ requestsHeldFrom: '2026-11-03' }), '2026-10', '2026-11-28')).toBe(false);
    expect(settlementOf(conn({ untrackedKeys: 1 }), '2026-10', '2026-11-28')).toMatchObject({ date: '2026-10-31', complete: false });
  });

  it('a change of a closed month’s day is booked today as a correction row of its own; past open months are guarded', () => {
    const ctx = { knownKeys: new Set(['k']), today: '2026-11-28', month: '2026-11', closedMonths: new Set(['2026-09']) };
    expect(bookedDay('2026-09-30', ctx)).toEqual({ date: '2026-11-28', correctionOf: '2026-09-30' });
    expect(bookedDay('2026-10-30', ctx)).toEqual({ date: '2026-10-30' });
    const a = emptyAggregates();
    const c = { keyHash: 'k', provider: 'openai', model: 'gpt-4o', sums: { ...zeroSums(), costMicros: -5n } };
    addContribution(a, { ...c, ...bookedDay('2026-09-30', ctx) }, ctx);
    addContribution(a, { ...c, date: '2026-11-28' }, ctx);
    addContribution(a, { ...c, date: '2026-10-30' }, ctx);
    expect([...a.keyDayModels.keys()].sort()).toEqual([kdmId({ ...c, date: '2026-10-30' }), kdmId({ ...c, date: '2026-11-28' }), kdmId({ ...c, date: '2026-11-28', correctionOf: '2026-09-30' })].sort());
    expect(a.keys.get('k')!.today.costMicros).toBe(-10n);
    expect(pastMonthsOf(a, ctx)).toEqual(['2026-10']);
    expect(openMonthGuards('br_1', ['2026-10'])).toMatchObject({ actions: [{ ConditionCheck: { Key: { pk: 'ACCOUNT#br_1', sk: 'MONTH#2026-10' }, ConditionExpression: 'attribute_not_exists(pk)' } }], meaning: [{ cell: 'month:2026-10' }] });
  });
});
