/** Alert texts write amounts and dates as the dashboard does (shared/alerting/words.ts against web/src/ui/format.ts). */
import { describe, expect, it } from 'vitest';
import { dayWords, momentWords, moneyWords, monthWords } from '#shared/alerting/words.ts';
import { planAlerts } from '#shared/alerting/evaluate.ts';
import { money, period, when } from '../../web/src/ui/format.ts';

describe('alert words', () => {
  it('writes every amount as the dashboard does', () => {
    for (const micros of [0, 1, 1_200, 4_999, 5_000, 15_000, 999_999, 1_000_000, 50_000_000, 602_597_586, 1_234_567_891, 9_000_000_000_000_000]) {
      expect(moneyWords(micros)).toBe(money(micros / 1_000_000));
    }
    expect(moneyWords(602_597_586)).toBe('$602.60');
  });

  it('writes days, months and moments as the dashboard does', () => {
    expect(dayWords('2026-12-03')).toBe(period('2026-12-03'));
    expect(monthWords('2026-11')).toBe(period('2026-11'));
    expect(momentWords(new Date('2026-12-03T17:18:42Z'))).toBe(when('2026-12-03T17:18:42Z'));
  });

  it('a rule\'s title rounds the amount and keeps the rule\'s name as typed', () => {
    const now = new Date('2026-11-24T12:00:00Z');
    const rule = {
      id: 'rul_01JD0000000000000000000001',
      type: 'cost_threshold' as const,
      name: 'Daily over $50',
      config: { threshold: 50, period: 'daily' },
      channels: ['email' as const],
      isActive: true,
      createdAt: '',
      updatedAt: '',
      lastTriggeredAt: null,
    };
    const spend = {
      today: '2026-11-24',
      week: '2026-11-23',
      month: '2026-11',
      accountDay: () => 602_597_586,
      accountWeek: () => 602_597_586,
      accountMonth: () => 602_597_586,
      accountForecast: () => 602_597_586,
      keyToday: () => 0,
      keyWeek: () => 0,
      keyMonth: () => 0,
      keyForecast: () => 0,
      keyName: () => undefined,
    };
    const [c] = planAlerts('acc_1', { budgets: [], rules: [rule as never] }, spend as never, [], now);
    expect(c!.alert.title).toBe('Daily over $50: daily spend reached $50.00');
    expect(c!.alert.message).toBe('Spend of the account on Nov 24, 2026 (UTC) is $602.60, at or above the rule "Daily over $50" threshold of $50.00.');
  });
});
