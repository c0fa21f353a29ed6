/**
 * Notifications that can't be turned into spam (docs/security.md): the Subject
 * builder, the hourly cap's window and decisions, who may get alert e-mail, the paused notice, and one `new_key`
 * alert per rule per ingest.
 */
import { describe, expect, it } from 'vitest';
import { planAlerts, type Discovered } from '#shared/alerting/evaluate.ts';
import type { Rule } from '#shared/alerting/model.ts';
import type { SpendSnapshot } from '#shared/alerting/spend.ts';
import { keyDisplayName } from '#shared/usage/key-name.ts';
import { CAPS, EMAIL_CAP_PER_HOUR, hourWindow, receiverOf, slotDecision, targetHash, URL_CAP_PER_HOUR } from '#shared/notify/caps.ts';
import { alertRecipients, renderAlertEmail, renderPlainEmail } from '#shared/notify/email.ts';
import { pausedNoticeEmail } from '#shared/notify/paused.ts';
import { alertSubject, plainLine, SUBJECT_MAX, subjectLine } from '#shared/notify/subject.ts';

const ACCOUNT = 'br_01JD0000000000000000000000';
const PHISHING = 'URGENT: Your account is suspended - verify your password at https://evil.example/login';
const now = new Date('2026-11-21T22:34:25.000Z');

/** RFC 2047: encoded-words decoded; the white space between two of them dropped. */
const decodeHeader = (value: string) =>
  value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));

describe('alert Subjects', () => {
  it('start with [Burnrate] and the kind of alert; the user text comes after it', () => {
    expect(alertSubject({ type: 'new_key', title: 'Prod keys: new openai key sk-…beef (0123abcd…)' })).toBe(
      '[Burnrate] New key: Prod keys: new openai key sk-…beef (0123abcd…)',
    );
    expect(alertSubject({ type: 'budget_exceeded', title: 'Budget "Team" exceeded: $12.00 of $10.00' })).toBe(
      '[Burnrate] Budget exceeded: Budget "Team" exceeded: $12.00 of $10.00',
    );
    expect(alertSubject({ type: 'budget_threshold', title: 'x' })).toMatch(/^\[Burnrate\] Budget threshold: /);
    expect(alertSubject({ type: 'cost_threshold', title: 'x' })).toMatch(/^\[Burnrate\] Cost threshold: /);
    expect(alertSubject({ type: 'spend_spike', title: 'x' })).toMatch(/^\[Burnrate\] Spend spike: /);
    expect(alertSubject({ type: 'plan_limit', title: 'Plan limit reached on FREE' })).toBe('[Burnrate] Plan limit: Plan limit reached on FREE');
  });

  it('are cut to the maximum, on one line, whatever the user wrote', () => {
    const subject = alertSubject({ type: 'new_key', title: `${PHISHING} ${'a'.repeat(500)}\r\nBcc: victim@example.com` });
    expect(subject.startsWith('[Burnrate] New key: URGENT')).toBe(true);
    expect([...subject]).toHaveLength(SUBJECT_MAX);
    expect(subject.endsWith('…')).toBe(true);
    expect(subject).not.toMatch(/[\r\n]/);
    // Cut by code points: an emoji at the cut is never split into half a surrogate pair.
    const emoji = alertSubject({ type: 'new_key', title: '😀'.repeat(200) });
    expect([...emoji]).toHaveLength(SUBJECT_MAX);
    expect(emoji).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('drop line breaks, controls and the characters that could render the user text first', () => {
    // U+202E (right-to-left override) would display "…]etarnruB[" reversed; U+2028 is a line separator.
    expect(plainLine('a\r\nb\u2028c\u0085d\te\u0000f')).toBe('a b c d e f');
    expect(plainLine('\u202Eevil\u202C \u2066x\u2069 zero\u200Bwidth')).toBe('evil x zerowidth');
    expect(subjectLine('[Burnrate] New key', '\u202E\r\n  ')).toBe('[Burnrate] New key');
    expect(subjectLine('[Burnrate] Alert e-mail paused until 23:00 UTC')).toBe('[Burnrate] Alert e-mail paused until 23:00 UTC');
  });

  it('are what the alert e-mail carries', () => {
    const raw = renderAlertEmail({
      alert: {
        id: 'alt_01JD0000000000000000000001',
        accountId: ACCOUNT,
        type: 'new_key',
        status: 'triggered',
        ruleId: 'rul_01JD0000000000000000000002',
        budgetId: null,
        keyHash: 'a'.repeat(64),
        keyHashes: ['a'.repeat(64), 'b'.repeat(64)],
        title: `${PHISHING}: 2 new keys discovered`,
        message: 'm',
        period: '2026-11-21',
        thresholdMicros: null,
        observedMicros: null,
        deliveries: [],
        triggeredAt: now.toISOString(),
        acknowledgedAt: null,
        acknowledgedBy: null,
      },
      to: 'ada@example.com',
      settings: { from: 'alerts@example.com' },
      date: now,
    });
    const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n(?=[ \t])/g, '');
    const subject = decodeHeader(/^Subject: (.*)$/m.exec(head)![1]!);
    expect(subject.startsWith('[Burnrate] New key: URGENT: Your account is suspended')).toBe(true);
    expect([...subject].length).toBeLessThanOrEqual(SUBJECT_MAX);
    expect(subject.endsWith('…')).toBe(true);
  });
});

describe('hourly notification caps', () => {
  it('are 30 alert e-mails per recipient and 60 deliveries per URL an hour', () => {
    expect(EMAIL_CAP_PER_HOUR).toBe(30);
    expect(URL_CAP_PER_HOUR).toBe(60);
    expect(CAPS).toEqual({ email: 30, url: 60 });
  });

  it('count in UTC clock hours; the counter lives an hour past its window', () => {
    const w = hourWindow(now);
    expect(w.hour).toBe('2026-11-21T22');
    expect(w.endsAt.toISOString()).toBe('2026-11-21T23:00:00.000Z');
    expect(w.expiresAt).toBe(Date.parse('2026-11-22T00:00:00.000Z') / 1000);
    expect(hourWindow(new Date('2026-11-21T22:00:00.000Z')).hour).toBe('2026-11-21T22');
    expect(hourWindow(new Date('2026-11-21T22:59:59.999Z')).hour).toBe('2026-11-21T22');
    expect(hourWindow(new Date('2026-11-21T23:00:00.000Z')).hour).toBe('2026-11-21T23');
    expect(hourWindow(new Date('2026-12-31T23:30:00.000Z')).endsAt.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('allow up to the cap, tell the first refusal of the hour apart, refuse the rest', () => {
    const cap = 30;
    const decisions = Array.from({ length: cap + 1 }, (_, i) => slotDecision(i + 1, cap));
    expect(decisions.filter((d) => d === 'allowed')).toHaveLength(cap);
    expect(decisions[cap]).toBe('first-suppressed');
    // The conditional counter stops at cap + 1: later counts are refused without a value.
    expect(slotDecision(undefined, cap)).toBe('suppressed');
    expect(slotDecision(cap + 2, cap)).toBe('suppressed');
  });

  it('count an address case-insensitively and a URL per receiver, hashed', () => {
    expect(targetHash('email', 'Ada@Example.com ')).toBe(targetHash('email', 'ada@example.com'));
    expect(targetHash('email', 'ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
    // The receiver: scheme and host lower-cased, default port dropped, path normalised, query and fragment removed.
    const receiver = targetHash('url', 'https://hooks.example.com/T0/B1/x~y');
    for (const variant of [
      'https://hooks.example.com/T0/B1/x~y?1',
      'https://hooks.example.com/T0/B1/x~y#2',
      'https://hooks.example.com/T0/B1/x~y?a=1#b',
      'https://hooks.example.com//T0///B1/x~y',
      'HTTPS://HOOKS.Example.COM/T0/B1/x~y',
      'https://hooks.example.com:443/T0/B1/x~y',
      'https://hooks.example.com./T0/B1/x~y',
      'https://hooks.example.com/T0/./B1/z/../x~y',
      'https://hooks.example.com/T0/%2e/B1/x~y',
      'https://hooks.example.com/T0/B1/x%7Ey',
      'https://hooks.example.com/T0/B1/x~y/',
      ' https://hooks.example.com/T0/B1/x~y ',
    ]) {
      expect(receiverOf(variant), variant).toBe('https://hooks.example.com/T0/B1/x~y');
      expect(targetHash('url', variant), variant).toBe(receiver);
    }
    // Another receiver stays another: path case, another port, another scheme, another host.
    for (const other of ['https://hooks.example.com/t0/B1/x~y', 'https://hooks.example.com:8443/T0/B1/x~y', 'http://hooks.example.com/T0/B1/x~y', 'https://example.com/T0/B1/x~y']) {
      expect(targetHash('url', other), other).not.toBe(receiver);
    }
    expect(receiverOf('http://127.0.0.1:80/hook')).toBe('http://127.0.0.1/hook');
  });
});

describe('who gets alert e-mail', () => {
  it('only users whose address is verified and who want alert e-mail', () => {
    expect(
      alertRecipients([
        { email: 'unverified@example.com' },
        { email: 'unverified2@example.com', emailVerified: false, alertEmails: true },
        { email: 'verified@example.com', emailVerified: true },
        { email: 'opted-in@example.com', emailVerified: true, alertEmails: true },
        { email: 'opted-out@example.com', emailVerified: true, alertEmails: false },
        { email: 'truthy@example.com', emailVerified: 'true' },
        { emailVerified: true },
        { email: 'verified@example.com', emailVerified: true },
      ]),
    ).toEqual(['verified@example.com', 'opted-in@example.com']);
    expect(alertRecipients([])).toEqual([]);
  });
});

describe('the paused notice', () => {
  const notice = pausedNoticeEmail({ to: 'ada@example.com', window: hourWindow(now), appUrl: 'https://app.example.com/', tag: 'paused-x' });

  it('has a fixed Subject with our name and when the pause ends, and no user text', () => {
    expect(notice.subject).toBe('[Burnrate] Alert e-mail paused until 23:00 UTC');
    const raw = renderPlainEmail(notice, { from: 'alerts@example.com' }, now);
    expect(raw).toMatch(/^Subject: \[Burnrate\] Alert e-mail paused until 23:00 UTC\r$/m);
    expect(raw).toMatch(/^Content-Type: text\/plain; charset=UTF-8\r$/m);
  });

  it('says the cap, until when, that alerts stay listed, and links the dashboard on its own line', () => {
    const text = notice.lines.join('\n');
    expect(text).toContain('Burnrate has sent 30 alert e-mails');
    expect(text).toContain('2026-11-21T23:00:00.000Z');
    expect(text).toContain('suppressed');
    expect(notice.lines).toContain('https://app.example.com/alerts');
    expect(pausedNoticeEmail({ to: 'a@example.com', window: hourWindow(now), tag: 't' }).lines.join('\n')).not.toContain('http');
  });
});

describe('new_key alerts', () => {
  const spend: SpendSnapshot = {
    today: '2026-11-21',
    month: '2026-11',
    week: '2026-11-16',
    tagMonth: () => 0,
    accountDay: () => 0,
    accountMonth: () => 0,
    accountWeek: () => 0,
    keyToday: () => 0,
    keyMonth: () => 0,
    keyWeek: () => 0,
    hasKey: () => true,
    accountForecast: () => 0,
    keyForecast: () => 0,
    keyName: (h) => keyDisplayName({ hash: h }),
  };
  const rule = (i: number): Rule => ({
    id: `rul_01JD00000000000000000000${String(i).padStart(2, '0')}`,
    type: 'new_key',
    name: `${PHISHING} #${i}`,
    config: {},
    channels: ['email'],
    isActive: true,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    lastTriggeredAt: null,
  });
  const discovered: Discovered[] = Array.from({ length: 5 }, (_, i) => ({ keyHash: String(i).repeat(64), provider: 'openai', hint: `sk-…${i}` }));

  it('20 rules and one ingest of 5 new keys: 20 alerts (one per rule) listing the 5 keys, not 100', () => {
    const rules = Array.from({ length: 20 }, (_, i) => rule(i));
    const candidates = planAlerts(ACCOUNT, { budgets: [], rules }, spend, discovered, now);
    expect(candidates).toHaveLength(20);
    expect(new Set(candidates.map((c) => c.alert.ruleId)).size).toBe(20);
    for (const c of candidates) {
      expect(c.alert.keyHashes).toEqual(discovered.map((k) => k.keyHash));
      expect(c.alert.keyHash).toBe(discovered[0]!.keyHash);
      // Fired once per rule and first key: each key is discovered by one ingest only.
      expect(c.fired).toEqual({ source: c.alert.ruleId, level: 'new_key', period: discovered[0]!.keyHash });
      expect(c.alert.title).toBe(`${PHISHING} #${rules.findIndex((r) => r.id === c.alert.ruleId)}: 5 new keys discovered`);
      for (const k of discovered) expect(c.alert.message).toContain(k.hint);
    }
  });

  it('one key: the alert names it; no key discovered: no alert', () => {
    const [one] = planAlerts(ACCOUNT, { budgets: [], rules: [rule(1)] }, spend, discovered.slice(0, 1), now);
    expect(one!.alert).toMatchObject({ type: 'new_key', keyHash: '0'.repeat(64), keyHashes: ['0'.repeat(64)] });
    expect(one!.alert.title).toContain('new openai key "sk-…0"');
    expect(planAlerts(ACCOUNT, { budgets: [], rules: [rule(1)] }, spend, [], now)).toEqual([]);
  });

  it('other alert types carry the key they name, or none', () => {
    const [budget] = planAlerts(
      ACCOUNT,
      {
        budgets: [
          { id: 'bud_01JD0000000000000000000001', name: 'K', monthlyLimitMicros: 1, alertThreshold: 100, scope: 'KEY', keyHash: 'c'.repeat(64), alertOnForecast: false, createdAt: '', updatedAt: '' },
        ],
        rules: [],
      },
      { ...spend, keyMonth: () => 5 },
      [],
      now,
    );
    expect(budget!.alert).toMatchObject({ keyHash: 'c'.repeat(64), keyHashes: ['c'.repeat(64)] });
    const [daily] = planAlerts(
      ACCOUNT,
      { budgets: [], rules: [{ ...rule(2), type: 'cost_threshold', config: { threshold: 1, period: 'daily' } }] },
      { ...spend, accountDay: () => 2_000_000 },
      [],
      now,
    );
    expect(daily!.alert).toMatchObject({ type: 'cost_threshold', keyHash: null, keyHashes: [] });
  });

  it('alert texts give each amount once, in dollars as the dashboard writes them (no "$128.09 (128.09053)"); the exact amount is the alert\'s field', () => {
    const budget = { id: 'bud_01JD0000000000000000000002', name: 'Eval', monthlyLimitMicros: 40_000_000, alertThreshold: 90, scope: 'ACCOUNT' as const, keyHash: null, alertOnForecast: false, createdAt: '', updatedAt: '' };
    const candidates = planAlerts(ACCOUNT, { budgets: [budget], rules: [] }, { ...spend, accountMonth: () => 128_090_530 }, [], now);
    const exceeded = candidates.find((c) => c.alert.type === 'budget_exceeded')!.alert;
    expect(exceeded.title).toBe('Budget "Eval" exceeded: $128.09 of $40.00');
    expect(exceeded.observedMicros).toBe(128_090_530);
    for (const c of candidates) expect(`${c.alert.title} ${c.alert.message}`).not.toMatch(/\$[\d,.]+ \(/);
  });

  it('name at most 20 keys in the message and list every key in keyHashes', () => {
    const many: Discovered[] = Array.from({ length: 25 }, (_, i) => ({ keyHash: i.toString(16).padStart(64, 'f'), provider: 'anthropic' }));
    const [c] = planAlerts(ACCOUNT, { budgets: [], rules: [rule(3)] }, spend, many, now);
    expect(c!.alert.keyHashes).toHaveLength(25);
    expect(c!.alert.message).toContain('and 5 more');
  });
});
