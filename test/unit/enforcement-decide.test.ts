/** The enforcement decision (shared/enforcement/decide.ts): pure, every rule of when a lever goes on and off. */
import { describe, expect, it } from 'vitest';
import type { Budget } from '#shared/alerting/model.ts';
import { decide, type DecisionInput } from '#shared/enforcement/decide.ts';
import type { EnforcementState, Target } from '#shared/enforcement/model.ts';

const key: Target = { id: 'key:h1', kind: 'key', provider: 'anthropic', connectionId: 'con_1', keyHash: 'h1', keyId: 'apikey_1', projectId: null, name: 'prod' };
const project: Target = { id: 'project:con_1:proj_1', kind: 'project', provider: 'openai', connectionId: 'con_1', keyHash: null, keyId: null, projectId: 'proj_1', name: 'P', limitCents: 1000 };
const reporter: Target = { id: 'reporter:h2', kind: 'reporter', provider: 'openai', connectionId: null, keyHash: 'h2', keyId: null, projectId: null, name: 'app' };
const budget = (over: Partial<Budget> = {}): Budget => ({
  id: 'bud_1',
  name: 'b',
  monthlyLimitMicros: 10_000_000,
  alertThreshold: 80,
  scope: 'KEY',
  keyHash: 'h1',
  action: 'stop',
  alertOnForecast: false,
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
  ...over,
});
const state = (target: Target, over: Partial<EnforcementState> = {}): EnforcementState => ({
  budgetId: 'bud_1',
  target,
  status: 'stopped',
  want: 'on',
  hold: false,
  period: '2026-11',
  since: '2026-11-20T00:00:00.000Z',
  detail: '',
  v: 1,
  ...over,
});
const input = (over: Partial<DecisionInput>): DecisionInput => ({
  budgets: [],
  states: [],
  month: '2026-11',
  connectionsOn: new Set(['con_1']),
  staleBefore: '2026-11-26T00:00:00.000Z',
  ...over,
});
const ops = (i: DecisionInput) => decide(i).map((a) => [a.target.id, a.op, a.reason]);

describe('switch targets (a key, a reporter block)', () => {
  it('stop at or past the limit, not below; nothing when already stopped', () => {
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 10_000_000, targets: [key, reporter] }] }))).toEqual([
      ['key:h1', 'stop', 'limit_reached'],
      ['reporter:h2', 'stop', 'limit_reached'],
    ]);
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 9_999_999, targets: [key] }] }))).toEqual([]);
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [key] }], states: [state(key)] }))).toEqual([]);
  });

  it('start again: next period, a raise, notify, deleted, no longer covered, released (held for the month)', () => {
    const stopped = [state(key)];
    expect(ops(input({ month: '2026-12', budgets: [{ budget: budget(), spendMicros: 0, targets: [key] }], states: stopped }))).toEqual([['key:h1', 'start', 'period_start']]);
    expect(ops(input({ budgets: [{ budget: budget({ monthlyLimitMicros: 50_000_000 }), spendMicros: 20_000_000, targets: [key] }], states: stopped }))).toEqual([['key:h1', 'start', 'budget_changed']]);
    expect(ops(input({ budgets: [{ budget: budget({ action: 'notify' }), spendMicros: 20_000_000, targets: [key] }], states: stopped }))).toEqual([['key:h1', 'start', 'budget_changed']]);
    expect(ops(input({ budgets: [], states: stopped }))).toEqual([['key:h1', 'start', 'budget_deleted']]);
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [] }], states: stopped }))).toEqual([['key:h1', 'start', 'budget_changed']]);
    const held = [state(key, { hold: true })];
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [key] }], states: held }))).toEqual([['key:h1', 'start', 'released']]);
    // Released and held: over the limit, yet left alone for the month; acted on again the next month.
    const released = [state(key, { status: 'released', want: 'off', hold: true })];
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [key] }], states: released }))).toEqual([]);
    expect(ops(input({ month: '2026-12', budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [key] }], states: released }))).toEqual([['key:h1', 'stop', 'limit_reached']]);
  });

  it('a connection with enforcement off is never acted on; a failed stop is retried; a fresh act under way is left to its worker', () => {
    expect(ops(input({ connectionsOn: new Set(), budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [key, reporter] }] }))).toEqual([['reporter:h2', 'stop', 'limit_reached']]);
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [key] }], states: [state(key, { status: 'failed', want: 'on' })] }))).toEqual([['key:h1', 'stop', 'limit_reached']]);
    const acting = (since: string) => [state(key, { status: 'acting', want: 'on', since })];
    expect(ops(input({ budgets: [{ budget: budget(), spendMicros: 20_000_000, targets: [key] }], states: acting('2026-11-26T00:01:00.000Z') }))).toEqual([]);
    // A stale act (its worker died): the lever may be on; released when no longer wanted.
    expect(ops(input({ budgets: [{ budget: budget({ action: 'notify' }), spendMicros: 0, targets: [key] }], states: acting('2026-11-25T00:00:00.000Z') }))).toEqual([['key:h1', 'start', 'budget_changed']]);
  });
});

describe('a project’s hard limit', () => {
  const projectBudget = budget({ scope: 'PROJECT', keyHash: null, connectionId: 'con_1', projectId: 'proj_1' });
  it('is set while the budget stops spend (whatever the spend), followed when the limit changes, read back otherwise, removed when not', () => {
    expect(ops(input({ budgets: [{ budget: projectBudget, spendMicros: 0, targets: [project] }] }))).toEqual([['project:con_1:proj_1', 'set_limit', 'budget_changed']]);
    const armed = [state(project, { status: 'armed', limitCents: 1000 })];
    expect(ops(input({ budgets: [{ budget: projectBudget, spendMicros: 0, targets: [project] }], states: armed }))).toEqual([['project:con_1:proj_1', 'read_limit', 'limit_reached']]);
    expect(ops(input({ budgets: [{ budget: projectBudget, spendMicros: 0, targets: [{ ...project, limitCents: 2000 }] }], states: armed }))).toEqual([['project:con_1:proj_1', 'set_limit', 'budget_changed']]);
    expect(ops(input({ budgets: [{ budget: { ...projectBudget, action: 'notify' }, spendMicros: 0, targets: [project] }], states: armed }))).toEqual([['project:con_1:proj_1', 'remove_limit', 'budget_changed']]);
    expect(ops(input({ budgets: [], states: armed }))).toEqual([['project:con_1:proj_1', 'remove_limit', 'budget_deleted']]);
    expect(ops(input({ budgets: [{ budget: projectBudget, spendMicros: 0, targets: [project] }], states: [state(project, { status: 'armed', limitCents: 1000, hold: true })] }))).toEqual([
      ['project:con_1:proj_1', 'remove_limit', 'released'],
    ]);
  });
});
