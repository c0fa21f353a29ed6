/** The shapes of enforcement: what a stop budget acts on (targets), what it did (states), its acts and their record. */

/**
 * One thing a budget can act on:
 * - `key`: a connection key with a key switch (Anthropic, `keyId` the provider's id);
 * - `project`: a project's hard spend limit (OpenAI), kept at `limitCents`;
 * - `reporter`: a key that sends events, refused by the reporter (`GET /ingest/blocks`).
 */
export interface Target {
  /** `key:<hash>`, `project:<con_id>:<projectId>`, `reporter:<hash>`: the state item's sort-key tail. */
  id: string;
  kind: 'key' | 'project' | 'reporter';
  provider: string;
  connectionId: string | null;
  keyHash: string | null;
  keyId: string | null;
  projectId: string | null;
  /** How people know it (the key's label or name, the project's name). */
  name: string;
  /** `project`: the limit to keep set, in whole cents (the budget's monthly limit, rounded down). */
  limitCents?: number;
  /** `project` of an ACCOUNT budget past its limit: the limit is what the project spent (it stops the project). */
  atLimit?: boolean;
}

export type StateStatus = 'stopped' | 'armed' | 'released' | 'failed' | 'acting';

/**
 * What a budget (or a spend-anomaly rule) did to one target (ACCOUNT#<a> / ENFORCE#<budgetId or ruleId>#<targetId>).
 * A rule's state (`holder: "anomaly"`, `budgetId` its rule's id, `period` a UTC day) is taken and released by
 * shared/anomaly/ only: the budgets' decision never acts on it, and neither undoes the other's hold of a key.
 */
export interface EnforcementState {
  budgetId: string;
  /** A spend-anomaly rule's hold (absent: a budget's). */
  holder?: 'anomaly';
  target: Target;
  /**
   * `stopped`: the key is off / the reporter refuses it; `armed`: the project's limit is set (OpenAI enforces it);
   * `released`: the lever is off again; `failed`: the last act was refused (retried next sync); `acting`: an act
   * is under way (claimed by one worker).
   */
  status: StateStatus;
  /** What the last act aimed for (for `failed` and `acting`): the lever on, or off. */
  want: 'on' | 'off';
  /** Released by a person for the rest of `period`: the lever stays off until the next period. */
  hold: boolean;
  /** The UTC month (YYYY-MM) the status belongs to. */
  period: string;
  since: string;
  detail: string;
  /** `project`: the limit Burnrate set (cents), what the provider last said, and the customer's own limit before. */
  limitCents?: number | null;
  enforcing?: boolean;
  /** The project's limit before Burnrate set one (null: none; undefined: not known yet). */
  priorLimitCents?: number | null;
  /** The user who released it (a `hold`). */
  releasedBy?: string;
  /** Version: every write is conditioned on the one read. */
  v: number;
}

export type ActOp = 'stop' | 'start' | 'set_limit' | 'remove_limit' | 'read_limit' | 'forget';
export type ActReason = 'limit_reached' | 'period_start' | 'released' | 'budget_changed' | 'budget_deleted' | 'anomaly';

export interface Act {
  budgetId: string;
  target: Target;
  op: ActOp;
  reason: ActReason;
  /** The state read (undefined: none yet): the act is conditioned on its version. */
  state: EnforcementState | undefined;
}

export type ActionKind =
  | 'key_deactivated'
  | 'key_reactivated'
  | 'key_disabled'
  | 'key_enabled'
  | 'project_limit_set'
  | 'project_limit_removed'
  | 'reporter_blocked'
  | 'reporter_unblocked';

/** One recorded act (ACTIONS#<a> / ACT#<act_id>). */
export interface EnforcementAction {
  id: string;
  /** The budget that acted; null for a spend-anomaly rule's act (`ruleId`). */
  budgetId: string | null;
  ruleId?: string | null;
  kind: ActionKind;
  provider: string;
  keyHash: string | null;
  projectId: string | null;
  reason: ActReason;
  /** `burnrate`, or the user who released. */
  actor: string;
  result: 'ok' | 'failed';
  detail: string;
  at: string;
}

/** What taking one act did (recorded in the actions log, announced by alerts). */
export interface Outcome {
  act: Act;
  result: 'ok' | 'failed';
  detail: string;
  /** A project whose limit the provider newly enforces (read back). */
  nowEnforcing?: boolean;
}

/** The state after an act's step: `from` with `fields`, the act's target, and the next version (writes are conditioned on it). */
export const nextState = (act: Pick<Act, 'target'>, from: EnforcementState, fields: Partial<EnforcementState>): EnforcementState => ({
  ...from,
  target: act.target,
  ...fields,
  v: from.v + 1,
});
