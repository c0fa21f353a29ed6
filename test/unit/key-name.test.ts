/**
 * Alert texts name a key by its label, else its hint, else the first 12 characters of its hash
 * (docs/features/budgets-and-alerts.md, "Spend insight"): the one rule (shared/usage/key-name.ts) and every text built with
 * it — the alert's title and message, the e-mail (Subject and body), Slack.
 */
import { describe, expect, it } from 'vitest';
import { planAlerts, type Discovered } from '#shared/alerting/evaluate.ts';
import { alertKeyName, type Budget, type Rule } from '#shared/alerting/model.ts';
import type { SpendSnapshot } from '#shared/alerting/spend.ts';
import { keyDisplayName } from '#shared/usage/key-name.ts';
import { renderBody } from '#shared/notify/email.ts';
import { alertSubject } from '#shared/notify/subject.ts';
import { slackMessage } from '#shared/notify/slack.ts';

const ACCOUNT = 'br_01JD0000000000000000000000';
const now = new Date('2026-11-21T22:34:25.000Z');
const LABELLED = 'a1'.repeat(32);
const HINTED = 'b2'.repeat(32);
const BARE = 'c3'.repeat(32);

describe('keyDisplayName', () => {
  it('label, else hint, else the first 12 characters of the hash', () => {
    expect(keyDisplayName({ hash: LABELLED, label: 'Prod bot', hint: 'sk-…beef' })).toBe('Prod bot');
    expect(keyDisplayName({ hash: HINTED, label: null, hint: 'sk-…beef' })).toBe('sk-…beef');
    expect(keyDisplayName({ hash: BARE })).toBe('c3c3c3c3c3c3');
    expect(keyDisplayName({ hash: BARE, label: null, hint: null })).toHaveLength(12);
  });

  it('an empty or blank label or hint counts as none', () => {
    expect(keyDisplayName({ hash: HINTED, label: '', hint: 'sk-…beef' })).toBe('sk-…beef');
    expect(keyDisplayName({ hash: BARE, label: '  ', hint: ' ' })).toBe('c3c3c3c3c3c3');
  });
});

/** The figures evaluation compares against, with key items read: one labelled, one with a hint, one with neither. */
const items: Record<string, { label?: string; hint?: string }> = { [LABELLED]: { label: 'Prod bot', hint: 'sk-…aaaa' }, [HINTED]: { hint: 'sk-…beef' }, [BARE]: {} };
const spend: SpendSnapshot = {
  today: '2026-11-21',
  month: '2026-11',
  week: '2026-11-16',
  tagMonth: () => 0,
  accountDay: () => 0,
  accountMonth: () => 0,
  accountWeek: () => 0,
  keyToday: () => 3_000_000,
  keyMonth: () => 3_000_000,
  keyWeek: () => 3_000_000,
  hasKey: () => true,
  accountForecast: () => 0,
  keyForecast: () => 0,
  keyName: (h) => keyDisplayName({ hash: h, ...items[h] }),
};
const budget = (keyHash: string, name: string | null = null): Budget => ({
  id: `bud_${keyHash.slice(0, 4)}`,
  name,
  monthlyLimitMicros: 2_000_000,
  alertThreshold: 50,
  scope: 'KEY',
  keyHash,
  alertOnForecast: false,
  createdAt: '',
  updatedAt: '',
});
const rule = (keyHash: string, period: 'daily' | 'weekly' | 'monthly'): Rule => ({
  id: `rul_${keyHash.slice(0, 4)}_${period}`,
  type: 'cost_threshold',
  name: 'Watch',
  config: { threshold: 1, period, keyHash },
  channels: ['email'],
  isActive: true,
  createdAt: '',
  updatedAt: '',
  lastTriggeredAt: null,
});

describe('alert texts name the key', () => {
  it('budgets and cost rules: by label, else hint, else hash prefix — never the full hash', () => {
    for (const [hash, name] of [
      [LABELLED, 'Prod bot'],
      [HINTED, 'sk-…beef'],
      [BARE, 'c3c3c3c3c3c3'],
    ] as const) {
      const candidates = planAlerts(
        ACCOUNT,
        { budgets: [budget(hash)], rules: [rule(hash, 'daily'), rule(hash, 'weekly'), rule(hash, 'monthly')] },
        spend,
        [],
        now,
      );
      expect(candidates.map((c) => c.alert.type).sort()).toEqual(['budget_exceeded', 'budget_threshold', 'cost_threshold', 'cost_threshold', 'cost_threshold']);
      for (const { alert } of candidates) {
        expect(alert.keyName).toBe(name);
        expect(alert.message).toContain(`key "${name}"`);
        expect(alert.title).toContain(name);
        expect(`${alert.title} ${alert.message}`).not.toContain(hash); // the full hash is not a name
        if (name !== 'c3c3c3c3c3c3') expect(`${alert.title} ${alert.message}`).not.toContain(hash.slice(0, 8));
      }
    }
  });

  it('a named budget keeps its own name in the title and names the key in the message', () => {
    const [c] = planAlerts(ACCOUNT, { budgets: [budget(LABELLED, 'Team A')], rules: [] }, spend, [], now);
    expect(c!.alert.title).toBe('Budget "Team A" reached 50% of $2.00');
    expect(c!.alert.message).toContain('Month-to-date spend of key "Prod bot" is $3.00');
  });

  it('new_key: a new key has no label yet, so its hint, else its hash prefix', () => {
    const newKey: Rule = { ...rule(BARE, 'daily'), id: 'rul_new', type: 'new_key', name: 'New', config: {} };
    const withHint: Discovered = { keyHash: HINTED, provider: 'openai', hint: 'sk-…beef' };
    const bare: Discovered = { keyHash: BARE, provider: 'anthropic' };
    const [one] = planAlerts(ACCOUNT, { budgets: [], rules: [newKey] }, spend, [withHint], now);
    expect(one!.alert.title).toBe('New: new openai key "sk-…beef"');
    expect(one!.alert.keyName).toBe('sk-…beef');
    const [two] = planAlerts(ACCOUNT, { budgets: [], rules: [newKey] }, spend, [withHint, bare], now);
    expect(two!.alert.message).toContain('openai key "sk-…beef", anthropic key "c3c3c3c3c3c3"');
    expect(two!.alert.keyName).toBeUndefined(); // several keys: the message names them all
    expect(alertKeyName(two!.alert)).toBeUndefined();
  });
});

describe('what the channels show', () => {
  const [labelled] = planAlerts(ACCOUNT, { budgets: [], rules: [rule(LABELLED, 'daily')] }, spend, [], now).map((c) => c.alert);

  it('the e-mail: Subject starts with ours, the body names the key by label, each amount once in dollars', () => {
    expect(alertSubject(labelled!)).toBe('[Burnrate] Cost threshold: Watch: daily spend of key "Prod bot" reached $1.00');
    const body = renderBody(labelled!, 'https://app.example').join('\n');
    expect(body).toMatch(/^Key: +Prod bot$/m);
    expect(body).not.toContain(LABELLED);
    expect(body.replaceAll('\n', ' ')).toContain('Spend of key "Prod bot" on Nov 21, 2026 (UTC) is $3.00, at or above the rule "Watch" threshold of $1.00.');
    expect(body).toMatch(/^Threshold: +\$1\.00$/m);
    expect(body).toMatch(/^Observed spend: +\$3\.00$/m);
    expect(body).not.toMatch(/\$[\d,.]+ \(/); // never "$3.00 (3)"
    expect(body).toContain('https://app.example/alerts/');
  });

  it('an alert stored before keyName is named by its hash prefix', () => {
    const { keyName: _dropped, ...legacy } = labelled!;
    expect(alertKeyName(legacy)).toBe(LABELLED.slice(0, 12));
    expect(renderBody(legacy).join('\n')).toMatch(new RegExp(`^Key: +${LABELLED.slice(0, 12)}$`, 'm'));
  });

  it('Slack: the key by label in the text, message and Key field', () => {
    const m = slackMessage(labelled!, 'https://app.example');
    expect(m.text).toContain('key "Prod bot"');
    const json = JSON.stringify(m.blocks);
    expect(json).toContain('*Key*\\nProd bot');
    expect(json).toContain('*Amount*\\n$3.00 against $1.00');
    expect(json).not.toContain(LABELLED);
  });
});
