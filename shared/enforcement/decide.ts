/**
 * The decision (pure): budgets × their spend × the targets they cover × what is already done → the acts to take.
 *
 * A switch target (`key`, `reporter`) is stopped while its budget is a `stop` budget at or past its limit, and
 * started again at the next period, when the limit is raised above the spend or the action becomes `notify`, when the
 * budget is deleted or stops covering it, or when a person releases it (then it stays off for the rest of the period).
 * A `project` target's limit is set as long as its budget is a `stop` budget (kept equal to the budget's limit) and
 * removed otherwise; each pass reads its enforcement back. A target whose connection has enforcement off is left
 * alone.
 */
import type { Budget } from '#shared/alerting/model.ts';
import type { Act, EnforcementState, Target } from '#shared/enforcement/model.ts';

export interface BudgetCoverage {
  budget: Budget;
  spendMicros: number;
  targets: Target[];
}

export interface DecisionInput {
  /** Every budget of the account (stop or not) with what it covers now. */
  budgets: BudgetCoverage[];
  /** Every enforcement state of the account. */
  states: EnforcementState[];
  /** The current UTC month. */
  month: string;
  /** Connections Burnrate may act on (enforcement `on`). */
  connectionsOn: ReadonlySet<string>;
  /** Only acts for which this returns true (a sync acts on its connection's targets; ingest on reporter targets). */
  scope?: (target: Target) => boolean;
  /** An `acting` state older than this (ISO) is taken as failed (its worker died mid-act). */
  staleBefore: string;
}

/** Whether the lever is (or may be) on at the provider. */
function leverOn(s: EnforcementState | undefined, staleBefore: string): boolean {
  if (!s) return false;
  if (s.status === 'stopped' || s.status === 'armed') return true;
  if (s.status === 'failed') return s.want === 'off';
  if (s.status === 'acting') return s.since < staleBefore; // a stale act: unknown, so undo/redo it
  return false;
}

export function decide(input: DecisionInput): Act[] {
  const acts: Act[] = [];
  const stateOf = new Map(input.states.map((s) => [`${s.budgetId}|${s.target.id}`, s]));
  const seen = new Set<string>();
  const actOn = (target: Target) =>
    (target.kind === 'reporter' || (target.connectionId !== null && input.connectionsOn.has(target.connectionId))) && (input.scope?.(target) ?? true);

  /** Another holder (a spend-anomaly rule, another budget) has this key switched off: a release leaves the key off. */
  const heldByOther = (budgetId: string, target: Target) =>
    target.kind === 'key' && input.states.some((s) => s.target.id === target.id && s.budgetId !== budgetId && s.status !== 'released' && leverOn(s, input.staleBefore));

  const plan = (budgetId: string, budget: Budget | undefined, target: Target, spendMicros: number, covered: boolean) => {
    const state = stateOf.get(`${budgetId}|${target.id}`);
    if (!actOn(target)) return;
    if (state?.status === 'acting' && state.since >= input.staleBefore) return; // another worker is at it
    const on = leverOn(state, input.staleBefore);
    const isStop = budget !== undefined && budget.action === 'stop' && covered;
    const held = state?.hold === true && state.period === input.month;
    const offReason = () =>
      budget === undefined ? 'budget_deleted' : held ? 'released' : state && state.period < input.month && covered && isStop ? 'period_start' : 'budget_changed';

    if (target.kind === 'project') {
      const want = isStop && !held;
      if (want) {
        if (!on || state?.limitCents !== target.limitCents || state?.status === 'failed') {
          acts.push({ budgetId, target, op: 'set_limit', reason: state?.hold && state.period < input.month ? 'period_start' : target.atLimit && state?.target.atLimit !== true ? 'limit_reached' : 'budget_changed', state });
        } else acts.push({ budgetId, target, op: 'read_limit', reason: 'limit_reached', state });
      } else if (on) acts.push({ budgetId, target, op: 'remove_limit', reason: offReason(), state });
      else if (state?.status === 'failed') acts.push({ budgetId, target, op: 'forget', reason: offReason(), state });
      return;
    }
    const want = isStop && !held && spendMicros >= budget!.monthlyLimitMicros;
    if (want && !on) acts.push({ budgetId, target, op: 'stop', reason: 'limit_reached', state });
    else if (!want && on) acts.push({ budgetId, target, op: heldByOther(budgetId, target) ? 'forget' : 'start', reason: offReason(), state });
    else if (!want && state?.status === 'failed') acts.push({ budgetId, target, op: 'forget', reason: offReason(), state });
  };

  for (const { budget, spendMicros, targets } of input.budgets) {
    for (const target of targets) {
      seen.add(`${budget.id}|${target.id}`);
      plan(budget.id, budget, target, spendMicros, true);
    }
  }
  // States of targets a budget no longer covers, and of budgets deleted.
  const budgets = new Map(input.budgets.map((b) => [b.budget.id, b]));
  for (const state of input.states) {
    // A spend-anomaly rule's hold is released by a person (shared/anomaly/), never by a budget's decision.
    if (state.holder === 'anomaly') continue;
    if (seen.has(`${state.budgetId}|${state.target.id}`)) continue;
    const b = budgets.get(state.budgetId);
    plan(state.budgetId, b?.budget, state.target, b?.spendMicros ?? 0, false);
  }
  return acts;
}
