/**
 * The shapes of enforcement, as the data layer stores them (shared/db/enforcement.ts reads and writes them; the
 * enforcement domain, shared/enforcement/, builds them), and the pure helpers over them. Levers are owned per TARGET, not per budget: one state item per provider target (a key's
 * switch, a project's cap, a key the reporter refuses) holds the set of holders that want it stopped now (budgets,
 * anomaly rules) and the target's own state before the first hold. A lever is pulled when the first holder arrives
 * and put back — to exactly that prior state — when the last one leaves; a cap is the lowest of the holders' amounts
 * and the customer's own. Acts on one target are serialised by the item's conditional write (its version `v`).
 */

/**
 * One thing Burnrate can act on:
 * - `key`: a connection key's switch (Anthropic `inactive`, OpenRouter `disabled`; `keyId` the provider's id);
 * - `project`: a project's hard spend limit (OpenAI), enforced by the provider itself;
 * - `reporter`: a key that sends events, refused by the reporter (`GET /ingest/blocks`).
 */
export interface Target {
  /** `key:<hash>`, `project:<con_id>:<projectId>`, `reporter:<hash>`: the state item's sort-key tail. */
  id: string;
  kind: 'key' | 'project' | 'reporter' | 'key_limit' | 'workspace_cap';
  provider: string;
  connectionId: string | null;
  keyHash: string | null;
  keyId: string | null;
  projectId: string | null;
  /** How people know it (the key's label or name, the project's name). */
  name: string;
}

/** Targets whose lever is an amount (a cap), not a switch. */
export const isCap = (t: Pick<Target, 'kind'>): boolean => t.kind === 'project' || t.kind === 'key_limit' || t.kind === 'workspace_cap';

export type HolderKind = 'budget' | 'anomaly';
export interface Holder {
  kind: HolderKind;
  id: string;
}
export const holderKey = (h: Holder): string => `${h.kind}:${h.id}`;

/** One holder's hold on a target. */
export interface Hold extends Holder {
  /** The budget's or rule's name when the hold was taken or last changed (`stoppedBy` reads it without a join). */
  name: string | null;
  /** When this holder took the target. */
  since: string;
  /** Caps: the amount this holder asks for (whole cents). */
  limitCents?: number;
  /** Caps: the holder's spend is at or past its limit (the cap stops spend now). Switches: always true. */
  reached: boolean;
}

/** The target's own state before the first hold: what a release puts back. */
export interface Prior {
  /** Switches: the key was on (a key a person had turned off stays off). */
  active?: boolean;
  /** Caps: the customer's own limit (cents), null for none. */
  limitCents?: number | null;
  /** Caps with a reset (OpenRouter keys): the customer's own reset (`daily`, `weekly`, `monthly`, null). */
  limitReset?: string | null;
}

export type StateStatus = 'stopped' | 'armed' | 'released' | 'failed' | 'acting';
export type ActReason = 'limit_reached' | 'period_start' | 'released' | 'budget_changed' | 'budget_deleted' | 'connection_changed' | 'anomaly';

/** One provider target's enforcement (ACCOUNT#<a> / ENFORCE#T#<targetId>). */
export interface LeverState {
  target: Target;
  /** Who holds it now (sorted by holder key); empty: nobody, the lever is (being put) back. */
  holds: Hold[];
  /** Before the first hold (set by the act that took it; kept while any holder holds). */
  prior?: Prior;
  /**
   * `stopped`: a switch held (the key off, the reporter refusing); `armed`: a cap in force; `released`: nobody holds it
   * and it is back as it was; `failed`: the last act was refused (`want` says which way; retried next pass); `acting`:
   * an act is under way (claimed by one worker).
   */
  status: StateStatus;
  /** What the last act aimed for: the lever on (held), or off (back as before). */
  want: 'on' | 'off';
  /** Caps: the lowest of the holders' amounts last asked for (cents). */
  askedCents?: number | null;
  /** Caps: the limit in force at the provider as Burnrate left it (cents; null: none). */
  limitCents?: number | null;
  /** Caps the provider names by an id of its own (Anthropic `spl_…`): what a release deletes. */
  capId?: string;
  /** Caps the provider would not set for this organization (Anthropic's early access): why, as it said. */
  unavailable?: string;
  /** Caps: the provider says it is refusing spend (OpenAI `enforcement.status: "enforcing"`). */
  enforcing?: boolean;
  /** Holders that let go while an act failed: recorded and announced when the retry succeeds. */
  letGo?: Array<{ hold: Hold; reason: ActReason }>;
  /** The UTC month (YYYY-MM) of the last write. */
  period: string;
  since: string;
  detail: string;
  /** Items of the earlier layout carried over into this state (shared/db/enforcement-legacy.ts): never taken in twice. */
  migratedFrom?: string[];
  /** Version: every write is conditioned on the one read. */
  v: number;
}

/** A person released a holder for the rest of `period` (ACCOUNT#<a> / ENFORCE#R#<holderKey>). */
export interface Release {
  holder: Holder;
  period: string;
  by: string;
  at: string;
}

/** A holder that wants `target` held now (the decision's input). */
export interface Claim {
  target: Target;
  hold: Hold;
  /** Why it wants it: its limit reached (or, for a cap, `budget_changed` while only armed), an anomaly. */
  reason: ActReason;
}

export type ActOp = 'stop' | 'start' | 'set_limit' | 'remove_limit' | 'read_limit' | 'hold' | 'forget';

export interface Act {
  target: Target;
  op: ActOp;
  /** The reason of the provider act (the first arriving holder's, or the last leaving one's). */
  reason: ActReason;
  /** The holds after the act. */
  holds: Hold[];
  added: Array<{ hold: Hold; reason: ActReason }>;
  removed: Array<{ hold: Hold; reason: ActReason }>;
  /** Holds whose amount or reached flag changed (caps). */
  changed: Array<{ hold: Hold; reason: ActReason }>;
  /** Caps: the lowest of the holders' amounts (the pull lowers it further to the customer's own). */
  askedCents?: number;
  /** The state read (undefined: none yet): the act is conditioned on its version. */
  state: LeverState | undefined;
}

export type ActionKind =
  | 'key_deactivated'
  | 'key_reactivated'
  | 'key_disabled'
  | 'key_enabled'
  | 'project_limit_set'
  | 'project_limit_removed'
  | 'reporter_blocked'
  | 'reporter_unblocked'
  | 'key_limit_set'
  | 'key_limit_removed'
  | 'workspace_limit_set'
  | 'workspace_limit_removed';

/** One recorded act (ACTIONS#<a> / ACT#<act_id>), one per holder it concerns. */
export interface EnforcementAction {
  id: string;
  /** The holder's budget (null for an anomaly rule's act). */
  budgetId: string | null;
  holder: Holder;
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
  /** The holder's name when the act was taken (a budget's, an anomaly rule's): the record reads without a join, and names a deleted budget. */
  holderName?: string | null;
  /** The target's name when the act was taken: the key's label or name, the project's or workspace's name. */
  targetName?: string | null;
}

/** What taking one act did (recorded in the actions log, announced by alerts). */
export interface Outcome {
  act: Act;
  result: 'ok' | 'failed';
  detail: string;
  /** The state written after the act. */
  state?: LeverState;
  /** A cap the provider would not set for this organization (its keys still stop). */
  unavailable?: boolean;
  /** A cap the provider newly enforces (read back): its holders' budgets stopped spend. */
  nowEnforcing?: boolean;
}

/** The state after an act's step: `from` with `fields`, the act's target, and the next version. */
export const nextState = (act: Pick<Act, 'target'>, from: LeverState, fields: Partial<LeverState>): LeverState => ({
  ...from,
  target: act.target,
  ...fields,
  v: from.v + 1,
});

/** A state before any act on `target`. */
export const emptyState = (target: Target, month: string, at: string): LeverState => ({ target, holds: [], status: 'released', want: 'off', period: month, since: at, detail: '', v: 0 });
