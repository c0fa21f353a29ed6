/**
 * The decision (pure): the holders' claims × the targets' states → the acts to take, one per target at most.
 *
 * A target's desired holders are the claims on it now. A switch (`key`, `reporter`) is pulled when the first holder
 * arrives and put back when the last leaves; in between, holders come and go in the state only (`hold`). A cap
 * (`project`) is in force while anyone holds it, at the lowest of the holders' amounts (the act lowers it further to
 * the customer's own limit: never raised); it follows when that lowest amount moves and is put back when the last
 * holder leaves. A holder that stops claiming let go for a reason: its budget deleted, released by a person this
 * period, a new period, the connection's enforcement turned off, paused or deleted, else a change of the budget.
 * A target whose connection has enforcement off is left alone (unless the connection is being released).
 */
import { holderKey, isCap, type Act, type ActReason, type Claim, type Hold, type LeverState, type Target } from '#shared/db/enforcement-model.ts';

export interface DecisionInput {
  claims: Claim[];
  /** Every lever state of the account. */
  states: LeverState[];
  /** The current UTC month. */
  month: string;
  /** Connections Burnrate may act on (enforcement `on`, not paused). */
  connectionsOn: ReadonlySet<string>;
  /** Connections whose every hold goes now (`connection_changed`): enforcement turned off, paused, being deleted. */
  connectionsReleasing?: ReadonlySet<string>;
  /** Holders that exist: `released` when a person released them for this period; absent: deleted. */
  holders: ReadonlyMap<string, 'exists' | 'released'>;
  /** Only acts for which this returns true (a sync acts on its connection's targets; ingest on reporter targets). */
  scope?: (target: Target) => boolean;
  /** An `acting` state older than this (ISO) is taken as lost (its worker died mid-act). */
  staleBefore: string;
}

/** Whether the lever is (or may be) pulled at the provider: a switch off, a cap in force. */
export function applied(s: LeverState | undefined, staleBefore: string): boolean {
  if (!s) return false;
  if (s.status === 'stopped' || s.status === 'armed') return true;
  if (s.status === 'failed') return s.want === 'off'; // a failed put-back: still pulled
  if (s.status === 'acting') return s.since < staleBefore; // a lost act: unknown, so redo it
  return false;
}

const sameHold = (a: Hold, b: Hold) => a.limitCents === b.limitCents && a.reached === b.reached && a.name === b.name;

export function decide(input: DecisionInput): Act[] {
  const claims = new Map<string, { target: Target; list: Claim[] }>();
  for (const c of input.claims) {
    const entry = claims.get(c.target.id) ?? { target: c.target, list: [] };
    if (!entry.list.some((x) => holderKey(x.hold) === holderKey(c.hold))) entry.list.push(c);
    claims.set(c.target.id, entry);
  }
  const states = new Map(input.states.map((s) => [s.target.id, s]));
  const ids = [...new Set([...claims.keys(), ...states.keys()])].sort();
  const acts: Act[] = [];
  for (const id of ids) {
    const state = states.get(id);
    const claimed = claims.get(id);
    const target = claimed?.target ?? state!.target;
    if (input.scope && !input.scope(target)) continue;
    const releasing = target.connectionId !== null && input.connectionsReleasing?.has(target.connectionId) === true;
    const on = target.kind === 'reporter' || (target.connectionId !== null && input.connectionsOn.has(target.connectionId));
    if (!on && !releasing) continue;
    if (state?.status === 'acting' && state.since >= input.staleBefore) continue; // another worker is at it
    const act = plan(input, target, state, releasing ? [] : (claimed?.list ?? []), releasing);
    if (act) acts.push(act);
  }
  return acts;
}

function goneReason(input: DecisionInput, hold: Hold, state: LeverState, releasing: boolean): ActReason {
  if (releasing) return 'connection_changed';
  const known = input.holders.get(holderKey(hold));
  if (known === undefined) return 'budget_deleted';
  if (known === 'released') return 'released';
  return state.period < input.month ? 'period_start' : 'budget_changed';
}

function plan(input: DecisionInput, target: Target, state: LeverState | undefined, wanted: Claim[], releasing: boolean): Act | undefined {
  const current = new Map((state?.holds ?? []).map((h) => [holderKey(h), h]));
  const desired = wanted.map((c) => {
    const had = current.get(holderKey(c.hold));
    return { claim: c, hold: { ...c.hold, since: had?.since ?? c.hold.since } };
  });
  const holds = desired.map((d) => d.hold).sort((a, b) => holderKey(a).localeCompare(holderKey(b)));
  const desiredKeys = new Set(holds.map(holderKey));
  const added = desired.filter((d) => !current.has(holderKey(d.hold))).map((d) => ({ hold: d.hold, reason: d.claim.reason }));
  const changed = desired.filter((d) => current.has(holderKey(d.hold)) && !sameHold(current.get(holderKey(d.hold))!, d.hold)).map((d) => ({ hold: d.hold, reason: d.claim.reason }));
  const removed = [...current.values()].filter((h) => !desiredKeys.has(holderKey(h))).map((hold) => ({ hold, reason: goneReason(input, hold, state!, releasing) }));
  const isApplied = applied(state, input.staleBefore);
  const failed = state?.status === 'failed';
  const base = { target, holds, added, removed, changed, state };
  const firstReason = (list: Array<{ reason: ActReason }>, fallback: ActReason) => list[0]?.reason ?? fallback;

  if (!isCap(target)) {
    if (holds.length > 0 && !isApplied) return { ...base, op: 'stop', reason: firstReason(added, firstReason(desired.map((d) => d.claim), 'limit_reached')) };
    if (holds.length === 0 && isApplied) return { ...base, op: 'start', reason: firstReason(removed, firstReason(state?.letGo ?? [], 'budget_changed')) };
    if (holds.length === 0 && failed) return { ...base, op: 'forget', reason: firstReason(removed, 'budget_changed') };
    if (added.length + removed.length + changed.length > 0 && state) return { ...base, op: 'hold', reason: firstReason(added, firstReason(removed, 'budget_changed')) };
    return undefined;
  }
  if (holds.length > 0) {
    const askedCents = Math.min(...holds.map((h) => h.limitCents ?? Number.MAX_SAFE_INTEGER));
    // A cap the provider would not set for this organization: asked again only when the amount changes.
    if (state?.unavailable && state.askedCents === askedCents) return undefined;
    const newlyReached = [...added, ...changed].filter((c) => c.hold.reached && !current.get(holderKey(c.hold))?.reached);
    const reason: ActReason = newlyReached.length > 0 ? 'limit_reached' : state && state.period < input.month && !isApplied ? 'period_start' : 'budget_changed';
    if (!isApplied || failed || state?.askedCents !== askedCents) return { ...base, op: 'set_limit', reason, askedCents };
    if (added.length + removed.length + changed.length > 0) return { ...base, op: 'hold', reason, askedCents };
    return { ...base, op: 'read_limit', reason: 'limit_reached', askedCents };
  }
  if (isApplied) return { ...base, op: 'remove_limit', reason: firstReason(removed, firstReason(state?.letGo ?? [], 'budget_changed')) };
  if (failed || (state && state.holds.length > 0)) return { ...base, op: 'forget', reason: firstReason(removed, 'budget_changed') };
  return undefined;
}
