import { afterEach, describe, expect, it } from 'vitest';
import type { $ZodType } from 'zod/v4/core';
import { budgetView, nextUpdatedAt, type Budget, type Rule } from '#shared/alerting/model.ts';
import { CreateBudgetBody, hasAtMostTwoDecimals, mergeBudgetPatch, PatchBudgetBody } from '#shared/budgets/schemas.ts';
import { resetConfig } from '#shared/config.ts';
import { ValidationError, type FieldError } from '#shared/http/errors.ts';
import { validate } from '#shared/http/validate.ts';
import { CreateRuleBody, mergeRulePatch, PatchRuleBody, webhookUrlProblem } from '#shared/rules/schemas.ts';

const HASH = 'a'.repeat(64);
const HOOK = 'https://hooks.example.com/burnrate';

/** The field errors of a 400, or [] when the value is valid. */
function errorsOf(run: () => unknown): FieldError[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.errors ?? [];
    throw error;
  }
  return [];
}
const pathsOf = (schema: $ZodType, value: unknown) => errorsOf(() => validate(schema, value, 'body')).map((e) => e.path);
const parse = <T>(schema: $ZodType<T>, value: unknown): T => validate(schema, value, 'body');

// ---------------------------------------------------------------------------------------------------------------
describe('CreateBudgetBody', () => {
  const valid = { monthlyLimit: 100, alertThreshold: 80, scope: 'ACCOUNT' };

  it('takes the contract example; name is optional', () => {
    expect(parse(CreateBudgetBody, valid)).toEqual(valid);
    expect(parse(CreateBudgetBody, { ...valid, name: '  Team  ' }).name).toBe('Team');
    expect(parse(CreateBudgetBody, { ...valid, name: null }).name).toBeNull();
  });

  it.each([
    ['0 (must be > 0)', 0],
    ['negative', -1],
    ['more than 1,000,000,000', 1_000_000_000.000001],
    ['7 decimals', 0.0000001],
    ['0.1 + 0.2 (17 significant digits)', 0.1 + 0.2],
    ['a string', '100'],
    ['null', null],
  ])('refuses monthlyLimit %s', (_name, monthlyLimit) => {
    expect(pathsOf(CreateBudgetBody, { ...valid, monthlyLimit })).toEqual(['monthlyLimit']);
  });

  it.each([0.000001, 12.345678, 1_000_000_000])('accepts monthlyLimit %s', (monthlyLimit) => {
    expect(pathsOf(CreateBudgetBody, { ...valid, monthlyLimit })).toEqual([]);
  });

  it.each([
    ['0', 0],
    ['negative', -5],
    ['past 100', 100.01],
    ['3 decimals', 33.333],
    ['a string', '80'],
  ])('refuses alertThreshold %s', (_name, alertThreshold) => {
    expect(pathsOf(CreateBudgetBody, { ...valid, alertThreshold })).toEqual(['alertThreshold']);
  });

  it.each([0.01, 33.33, 0.29, 100])('accepts alertThreshold %s', (alertThreshold) => {
    expect(pathsOf(CreateBudgetBody, { ...valid, alertThreshold })).toEqual([]);
  });

  it('requires monthlyLimit, alertThreshold and scope', () => {
    expect(pathsOf(CreateBudgetBody, {}).sort()).toEqual(['alertThreshold', 'monthlyLimit', 'scope']);
  });

  it('refuses an unknown scope', () => {
    expect(pathsOf(CreateBudgetBody, { ...valid, scope: 'TEAM' })).toEqual(['scope']);
  });

  it('KEY needs a keyHash; ACCOUNT refuses one (path keyHash)', () => {
    expect(pathsOf(CreateBudgetBody, { ...valid, scope: 'KEY' })).toEqual(['keyHash']);
    expect(pathsOf(CreateBudgetBody, { ...valid, scope: 'KEY', keyHash: null })).toEqual(['keyHash']);
    expect(pathsOf(CreateBudgetBody, { ...valid, scope: 'KEY', keyHash: HASH })).toEqual([]);
    expect(pathsOf(CreateBudgetBody, { ...valid, scope: 'ACCOUNT', keyHash: HASH })).toEqual(['keyHash']);
    expect(pathsOf(CreateBudgetBody, { ...valid, scope: 'ACCOUNT', keyHash: null })).toEqual([]);
  });

  it.each([
    ['upper-case', 'A'.repeat(64)],
    ['63 characters', 'a'.repeat(63)],
    ['not hex', 'g'.repeat(64)],
  ])('refuses a keyHash that is %s', (_name, keyHash) => {
    expect(pathsOf(CreateBudgetBody, { ...valid, scope: 'KEY', keyHash })).toEqual(['keyHash']);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['101 characters', 'x'.repeat(101)],
    ['a number', 5],
  ])('refuses a name that is %s', (_name, name) => {
    expect(pathsOf(CreateBudgetBody, { ...valid, name })).toEqual(['name']);
  });

  it('refuses unknown fields (no mass assignment)', () => {
    expect(pathsOf(CreateBudgetBody, { ...valid, accountId: 'br_X', spend: { monthToDate: 0 } }).sort()).toEqual(['accountId', 'spend']);
  });

  it('names every problem at once', () => {
    expect(pathsOf(CreateBudgetBody, { monthlyLimit: -1, alertThreshold: 101, scope: 'ACCOUNT' }).sort()).toEqual([
      'alertThreshold',
      'monthlyLimit',
    ]);
  });
});

describe('hasAtMostTwoDecimals', () => {
  it.each([
    [0.29, true],
    [33.33, true],
    [1.1, true],
    [100, true],
    [33.333, false],
    [0.001, false],
    [Number.NaN, false],
  ])('%s → %s', (value, expected) => {
    expect(hasAtMostTwoDecimals(value)).toBe(expected);
  });
});

describe('PATCH /budgets/{id} body and merge', () => {
  const existing: Budget = {
    id: 'bud_01KAAAAAAAAAAAAAAAAAAAAAAA',
    name: 'Team',
    monthlyLimitMicros: 12_345_678,
    alertThreshold: 80,
    scope: 'KEY',
    keyHash: HASH,
    alertOnForecast: true,
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-01T00:00:00.000Z',
  };

  it('needs at least one field and refuses unknown ones', () => {
    expect(errorsOf(() => parse(PatchBudgetBody, {}))).toEqual([{ path: '', message: 'Send at least one field to update.' }]);
    expect(pathsOf(PatchBudgetBody, { id: 'bud_x' })).toEqual(['id']);
    expect(pathsOf(PatchBudgetBody, { monthlyLimit: 0 })).toEqual(['monthlyLimit']);
    expect(pathsOf(PatchBudgetBody, { alertThreshold: 12.345 })).toEqual(['alertThreshold']);
  });

  it('keeps what the patch does not name (the limit exactly)', () => {
    const merged = mergeBudgetPatch(existing, parse(PatchBudgetBody, { alertThreshold: 50 }));
    expect(merged).toEqual({ name: 'Team', monthlyLimit: 12.345678, alertThreshold: 50, scope: 'KEY', keyHash: HASH, connectionId: null, projectId: null, tag: null, action: 'notify', alertOnForecast: true });
  });

  it('name: null clears the name', () => {
    expect(mergeBudgetPatch(existing, parse(PatchBudgetBody, { name: null })).name).toBeNull();
  });

  it('scope ACCOUNT drops the old keyHash; ACCOUNT with a keyHash is refused', () => {
    expect(mergeBudgetPatch(existing, parse(PatchBudgetBody, { scope: 'ACCOUNT' })).keyHash).toBeNull();
    expect(errorsOf(() => mergeBudgetPatch(existing, parse(PatchBudgetBody, { scope: 'ACCOUNT', keyHash: HASH }))).map((e) => e.path)).toEqual([
      'keyHash',
    ]);
    const account: Budget = { ...existing, scope: 'ACCOUNT', keyHash: null };
    expect(errorsOf(() => mergeBudgetPatch(account, parse(PatchBudgetBody, { keyHash: HASH }))).map((e) => e.path)).toEqual(['keyHash']);
  });

  it('scope KEY on an ACCOUNT budget needs a keyHash', () => {
    const account: Budget = { ...existing, scope: 'ACCOUNT', keyHash: null };
    expect(errorsOf(() => mergeBudgetPatch(account, parse(PatchBudgetBody, { scope: 'KEY' }))).map((e) => e.path)).toEqual(['keyHash']);
    expect(mergeBudgetPatch(account, parse(PatchBudgetBody, { scope: 'KEY', keyHash: HASH }))).toMatchObject({ scope: 'KEY', keyHash: HASH });
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe('budgetView', () => {
  const budget = (limitUsd: number, alertThreshold = 80): Budget => ({
    id: 'bud_01KAAAAAAAAAAAAAAAAAAAAAAA',
    name: null,
    monthlyLimitMicros: limitUsd * 1_000_000,
    alertThreshold,
    scope: 'ACCOUNT',
    keyHash: null,
    alertOnForecast: false,
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-02T00:00:00.000Z',
  });

  it('has exactly the API fields, money in dollars', () => {
    expect(budgetView(budget(10), 1_234_567, 15_000_001)).toEqual({
      id: 'bud_01KAAAAAAAAAAAAAAAAAAAAAAA',
      name: null,
      monthlyLimit: 10,
      alertThreshold: 80,
      scope: 'ACCOUNT',
      keyHash: null,
      action: 'notify',
      spend: { monthToDate: 1.234567 },
      percentUsed: 12.35,
      status: 'ok',
      alertOnForecast: false,
      forecast: { monthEnd: 15.000001, percentOfLimit: 150 },
      createdAt: '2026-11-01T00:00:00.000Z',
      updatedAt: '2026-11-02T00:00:00.000Z',
    });
  });

  it('11 of 10 is percentUsed 110 exactly, exceeded', () => {
    const view = budgetView(budget(10), 11_000_000);
    expect(view.percentUsed).toBe(110);
    expect(view.status).toBe('exceeded');
  });

  it('rounds to 2 decimals: 1/3 → 33.33, 2/3 → 66.67, nothing → 0', () => {
    expect(budgetView(budget(3), 1_000_000).percentUsed).toBe(33.33);
    expect(budgetView(budget(3), 2_000_000).percentUsed).toBe(66.67);
    expect(budgetView(budget(3), 0).percentUsed).toBe(0);
  });

  it('warning at the threshold exactly, ok one micro-dollar below', () => {
    expect(budgetView(budget(10, 80), 8_000_000).status).toBe('warning');
    expect(budgetView(budget(10, 80), 7_999_999).status).toBe('ok');
    expect(budgetView(budget(3, 33.33), 999_900).status).toBe('warning');
    expect(budgetView(budget(3, 33.33), 999_899).status).toBe('ok');
  });

  it('exceeded at the limit exactly, warning one micro-dollar below', () => {
    expect(budgetView(budget(10), 10_000_000).status).toBe('exceeded');
    expect(budgetView(budget(10), 10_000_000).percentUsed).toBe(100);
    expect(budgetView(budget(10), 9_999_999).status).toBe('warning');
  });

  it('a threshold of 100 warns only when exceeded', () => {
    expect(budgetView(budget(10, 100), 9_999_999).status).toBe('ok');
    expect(budgetView(budget(10, 100), 10_000_000).status).toBe('exceeded');
  });
});

describe('nextUpdatedAt', () => {
  it('is now, or 1 ms after the previous version when now is not later', () => {
    expect(nextUpdatedAt(new Date('2026-11-21T10:00:00.000Z'), '2026-11-21T09:00:00.000Z')).toBe('2026-11-21T10:00:00.000Z');
    expect(nextUpdatedAt(new Date('2026-11-21T10:00:00.000Z'), '2026-11-21T10:00:00.000Z')).toBe('2026-11-21T10:00:00.001Z');
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe('CreateRuleBody', () => {
  const costRule = { type: 'cost_threshold', name: 'Daily cap', config: { threshold: 50, period: 'daily' }, channels: ['email'], isActive: true };

  it('takes the contract example', () => {
    expect(parse(CreateRuleBody, costRule)).toEqual(costRule);
  });

  it('takes each type with its own config', () => {
    expect(parse(CreateRuleBody, { ...costRule, config: { threshold: 0.000001, period: 'weekly', keyHash: HASH } }).config).toEqual({
      threshold: 0.000001,
      period: 'weekly',
      keyHash: HASH,
    });
    expect(parse(CreateRuleBody, { type: 'new_key', name: 'New key', config: {}, channels: ['email'] })).toEqual({
      type: 'new_key',
      name: 'New key',
      config: {},
      channels: ['email'],
    });
    expect(parse(CreateRuleBody, { type: 'new_key', name: 'New key', channels: ['email'] }).config).toEqual({});
    expect(parse(CreateRuleBody, { type: 'spend_spike', name: 'Spike', config: { multiplier: 1.5, minSpend: 0 }, channels: ['email'] }).config).toEqual({
      multiplier: 1.5,
      minSpend: 0,
    });
  });

  it('refuses an unknown or missing type at path type', () => {
    expect(pathsOf(CreateRuleBody, { ...costRule, type: 'budget' })).toEqual(['type']);
    expect(pathsOf(CreateRuleBody, { name: 'x', config: {}, channels: ['email'] })).toEqual(['type']);
  });

  it('requires a name (1–100, trimmed)', () => {
    const { name: _name, ...nameless } = costRule;
    expect(pathsOf(CreateRuleBody, nameless)).toEqual(['name']);
    expect(pathsOf(CreateRuleBody, { ...costRule, name: '  ' })).toEqual(['name']);
    expect(pathsOf(CreateRuleBody, { ...costRule, name: 'x'.repeat(101) })).toEqual(['name']);
    expect(parse(CreateRuleBody, { ...costRule, name: '  Cap  ' }).name).toBe('Cap');
  });

  it.each([
    ['threshold 0', { threshold: 0, period: 'daily' }, ['config.threshold']],
    ['threshold negative', { threshold: -1, period: 'daily' }, ['config.threshold']],
    ['threshold with 7 decimals', { threshold: 1.0000001, period: 'daily' }, ['config.threshold']],
    ['threshold past 1,000,000,000', { threshold: 1_000_000_001, period: 'daily' }, ['config.threshold']],
    ['no threshold', { period: 'daily' }, ['config.threshold']],
    ['an unknown period', { threshold: 5, period: 'hourly' }, ['config.period']],
    ['no period', { threshold: 5 }, ['config.period']],
    ['a bad keyHash', { threshold: 5, period: 'daily', keyHash: 'abc' }, ['config.keyHash']],
    ['a spend_spike field', { threshold: 5, period: 'daily', multiplier: 2 }, ['config.multiplier']],
  ])('cost_threshold refuses a config with %s', (_name, config, paths) => {
    expect(pathsOf(CreateRuleBody, { ...costRule, config })).toEqual(paths);
  });

  it.each([
    ['multiplier below 1.5', { multiplier: 1.49, minSpend: 0 }, ['config.multiplier']],
    ['multiplier past 1000', { multiplier: 1000.5, minSpend: 0 }, ['config.multiplier']],
    ['negative minSpend', { multiplier: 2, minSpend: -0.01 }, ['config.minSpend']],
    ['minSpend with 7 decimals', { multiplier: 2, minSpend: 0.0000001 }, ['config.minSpend']],
    ['no minSpend', { multiplier: 2 }, ['config.minSpend']],
    ['a cost_threshold field', { multiplier: 2, minSpend: 1, period: 'daily' }, ['config.period']],
  ])('spend_spike refuses a config with %s', (_name, config, paths) => {
    expect(pathsOf(CreateRuleBody, { type: 'spend_spike', name: 'Spike', config, channels: ['email'] })).toEqual(paths);
  });

  it('spend_spike takes multiplier 1000 and a minSpend of 1,000,000,000', () => {
    expect(pathsOf(CreateRuleBody, { type: 'spend_spike', name: 'S', config: { multiplier: 1000, minSpend: 1_000_000_000 }, channels: ['email'] })).toEqual([]);
  });

  it('new_key takes no config fields but webhookUrl', () => {
    expect(pathsOf(CreateRuleBody, { type: 'new_key', name: 'N', config: { threshold: 5 }, channels: ['email'] })).toEqual(['config.threshold']);
    expect(pathsOf(CreateRuleBody, { type: 'new_key', name: 'N', config: [], channels: ['email'] })).toEqual(['config']);
  });

  it.each([
    ['empty', [], ['channels']],
    ['a repeat', ['email', 'email'], ['channels']],
    ['an unknown channel', ['email', 'sms'], ['channels.1']],
    ['not an array', 'email', ['channels']],
  ])('refuses channels that are %s', (_name, channels, paths) => {
    expect(pathsOf(CreateRuleBody, { ...costRule, channels })).toEqual(paths);
  });

  it('isActive is optional and boolean', () => {
    const { isActive: _a, ...rest } = costRule;
    expect(parse(CreateRuleBody, rest).isActive).toBeUndefined();
    expect(pathsOf(CreateRuleBody, { ...costRule, isActive: 'yes' })).toEqual(['isActive']);
  });

  it('config.webhookUrl is required iff channels includes webhook', () => {
    const webhook = { ...costRule, channels: ['email', 'webhook'] };
    expect(pathsOf(CreateRuleBody, webhook)).toEqual(['config.webhookUrl']);
    expect(pathsOf(CreateRuleBody, { ...webhook, config: { ...costRule.config, webhookUrl: HOOK } })).toEqual([]);
    expect(pathsOf(CreateRuleBody, { ...costRule, config: { ...costRule.config, webhookUrl: HOOK } })).toEqual(['config.webhookUrl']);
    expect(pathsOf(CreateRuleBody, { type: 'new_key', name: 'N', channels: ['webhook'] })).toEqual(['config.webhookUrl']);
    expect(pathsOf(CreateRuleBody, { type: 'new_key', name: 'N', config: { webhookUrl: HOOK }, channels: ['webhook'] })).toEqual([]);
  });

  it('refuses unknown top-level fields', () => {
    expect(pathsOf(CreateRuleBody, { ...costRule, lastTriggeredAt: null })).toEqual(['lastTriggeredAt']);
  });
});

describe('webhook URLs', () => {
  afterEach(() => {
    delete process.env.ALLOW_INSECURE_WEBHOOKS;
    resetConfig();
  });

  it.each([
    HOOK,
    'https://hooks.example.com:8443/a?b=c',
    'https://8.8.8.8/hook',
    'https://172.32.0.1/',
    'https://[2606:4700:4700::1111]/',
    'https://localhost.example.com/',
  ])('accepts %s', (url) => {
    expect(webhookUrlProblem(url, false)).toBeUndefined();
  });

  it.each([
    ['not a URL', 'hooks.example.com/burnrate', 'absolute URL'],
    ['http', 'http://hooks.example.com/', 'https'],
    ['another scheme', 'ftp://hooks.example.com/', 'https'],
    ['credentials', 'https://user:secret@hooks.example.com/', 'credentials'],
    ['a user name', 'https://user@hooks.example.com/', 'credentials'],
    ['localhost', 'https://localhost/', 'public host'],
    ['LOCALHOST.', 'https://LOCALHOST./', 'public host'],
    ['a .localhost name', 'https://api.localhost/', 'public host'],
    ['a single-label name', 'https://intranet/', 'public host'],
    ['127.0.0.1', 'https://127.0.0.1/', 'public host'],
    ['127.1.2.3', 'https://127.1.2.3:8443/', 'public host'],
    ['127.0.0.1 in hex', 'https://0x7f.1/', 'public host'],
    ['127.0.0.1 as a number', 'https://2130706433/', 'public host'],
    ['0.0.0.0', 'https://0.0.0.0/', 'public host'],
    ['10/8', 'https://10.1.2.3/', 'public host'],
    ['172.16/12 (low end)', 'https://172.16.0.1/', 'public host'],
    ['172.16/12 (high end)', 'https://172.31.255.255/', 'public host'],
    ['192.168/16', 'https://192.168.1.1/', 'public host'],
    ['169.254/16 (metadata)', 'https://169.254.169.254/latest/meta-data', 'public host'],
    ['::1', 'https://[::1]/', 'public host'],
    ['::', 'https://[::]/', 'public host'],
    ['fc00::/7', 'https://[fd00:ec2::254]/', 'public host'],
    ['fe80::/10', 'https://[fe80::1]/', 'public host'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/', 'public host'],
    ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/', 'public host'],
    ['IPv6 documentation', 'https://[2001:db8::1]/', 'public host'],
  ])('refuses %s', (_name, url, message) => {
    expect(webhookUrlProblem(url, false)).toContain(message);
  });

  it('insecure mode (local stack) accepts loopback receivers over http, never credentials or other schemes', () => {
    expect(webhookUrlProblem('http://127.0.0.1:9999/hook', true)).toBeUndefined();
    expect(webhookUrlProblem('https://localhost/', true)).toBeUndefined();
    expect(webhookUrlProblem('http://10.0.0.1/', true)).toContain('https');
    expect(webhookUrlProblem('http://user:pw@127.0.0.1/', true)).toContain('credentials');
    expect(webhookUrlProblem('ftp://127.0.0.1/', true)).toContain('https');
  });

  it('the schema refuses more than 2048 characters and reads config() at parse time', () => {
    const rule = (webhookUrl: string) => ({ type: 'new_key', name: 'N', config: { webhookUrl }, channels: ['webhook'] });
    expect(pathsOf(CreateRuleBody, rule(`https://hooks.example.com/${'a'.repeat(2030)}`))).toEqual(['config.webhookUrl']);
    expect(pathsOf(CreateRuleBody, rule('http://127.0.0.1:9999/hook'))).toEqual(['config.webhookUrl']);
    process.env.ALLOW_INSECURE_WEBHOOKS = 'true';
    resetConfig();
    expect(pathsOf(CreateRuleBody, rule('http://127.0.0.1:9999/hook'))).toEqual([]);
  });
});

describe('PATCH /alert-rules/{id} body and merge', () => {
  const existing: Rule = {
    id: 'rul_01KAAAAAAAAAAAAAAAAAAAAAAA',
    type: 'cost_threshold',
    name: 'Daily cap',
    config: { threshold: 50, period: 'daily' },
    channels: ['email'],
    isActive: true,
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-01T00:00:00.000Z',
    lastTriggeredAt: null,
  };
  const merge = (patch: unknown) => mergeRulePatch(existing, parse(PatchRuleBody, patch));
  const mergeErrors = (patch: unknown) => errorsOf(() => merge(patch)).map((e) => e.path);

  it('needs at least one field and refuses unknown ones', () => {
    expect(errorsOf(() => parse(PatchRuleBody, {}))).toEqual([{ path: '', message: 'Send at least one field to update.' }]);
    expect(pathsOf(PatchRuleBody, { lastTriggeredAt: null })).toEqual(['lastTriggeredAt']);
    expect(pathsOf(PatchRuleBody, { type: 'other' })).toEqual(['type']);
    expect(pathsOf(PatchRuleBody, { config: 'x' })).toEqual(['config']);
  });

  it('keeps what the patch does not name', () => {
    expect(merge({ isActive: false })).toEqual({
      type: 'cost_threshold',
      name: 'Daily cap',
      config: { threshold: 50, period: 'daily' },
      channels: ['email'],
      isActive: false,
    });
  });

  it('replaces config wholesale and checks it against the type', () => {
    expect(merge({ config: { threshold: 10, period: 'monthly' } }).config).toEqual({ threshold: 10, period: 'monthly' });
    expect(mergeErrors({ config: { threshold: 10 } })).toEqual(['config.period']);
    expect(mergeErrors({ config: { threshold: 0, period: 'daily' } })).toEqual(['config.threshold']);
  });

  it('the type cannot be changed: 400 saying so; the same type is fine', () => {
    for (const patch of [{ type: 'spend_spike' }, { type: 'spend_spike', config: { multiplier: 3, minSpend: 1 } }, { type: 'new_key', config: {} }]) {
      const errors = errorsOf(() => merge(patch));
      expect(errors).toEqual([{ path: 'type', message: expect.stringContaining('type cannot be changed (this rule is cost_threshold)') }]);
    }
    expect(merge({ type: 'cost_threshold', isActive: false })).toMatchObject({ type: 'cost_threshold', isActive: false });
  });

  it('adding the webhook channel needs config.webhookUrl; dropping it needs the URL gone', () => {
    expect(mergeErrors({ channels: ['email', 'webhook'] })).toEqual(['config.webhookUrl']);
    const withHook = merge({ channels: ['webhook'], config: { threshold: 50, period: 'daily', webhookUrl: HOOK } });
    expect(withHook.config).toEqual({ threshold: 50, period: 'daily', webhookUrl: HOOK });
    const hooked: Rule = { ...existing, channels: ['webhook'], config: withHook.config };
    expect(errorsOf(() => mergeRulePatch(hooked, parse(PatchRuleBody, { channels: ['email'] }))).map((e) => e.path)).toEqual(['config.webhookUrl']);
  });
});
