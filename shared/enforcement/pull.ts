/**
 * Taking one act on one target: claimed first by a conditional write of the target's state (acts on one target are
 * serialised: only the writer that moves the state from the version read goes on), then the provider's lever pulled
 * (or not: a holder joining or leaving a target that stays held touches no provider), then the outcome written.
 *
 * What a release puts back is the target's own state before the first hold (`prior`, read from the provider by the
 * act that took it): a key that was off stays off; a cap goes back to the customer's own limit (or none). A cap in
 * force is never above the customer's own: the lowest of the holders' amounts and that limit.
 *
 * Provider levers are pulled only in the sync worker (the admin key is open there only); reporter blocks and
 * state-only changes are taken anywhere (`lever` undefined).
 */
import { providerName } from '#shared/providers/names.ts';
import { CapUnavailable, type Lever } from '#shared/enforcement/levers.ts';
import { emptyState, isCap, nextState, type Act, type LeverState, type Outcome, type Prior, type Target } from '#shared/db/enforcement-model.ts';
import { heldText, offText, onText, usd } from '#shared/enforcement/words.ts';
import { logger } from '#shared/http/logger.ts';

/** Where states are written (DynamoDB in the service; memory in unit tests). */
export interface StateWriter {
  write(previous: LeverState | undefined, next: LeverState): Promise<boolean>;
}

export interface TakeContext {
  now: Date;
  month: string;
}

/** Whether this act needs the provider's lever (else it can be taken anywhere). */
export const needsLever = (act: Act): boolean => act.target.kind !== 'reporter' && act.op !== 'hold' && act.op !== 'forget';

/** Takes `act`. Undefined: another writer won, nothing to record, or the lever is not here. */
export async function takeAct(act: Act, lever: Lever | undefined, io: StateWriter, { now, month }: TakeContext): Promise<Outcome | undefined> {
  const at = now.toISOString();
  const prev = act.state ?? emptyState(act.target, month, at);
  const next = (fields: Partial<LeverState>, from: LeverState) => nextState(act, from, fields);
  const t = act.target;
  const cap = isCap(t);
  const clean = (s: LeverState) => {
    if (!s.letGo?.length) delete s.letGo;
    if (s.holds.length === 0) delete s.prior;
    return s;
  };

  if (act.op === 'forget') {
    const done = clean(next({ holds: [], status: 'released', want: 'off', letGo: [], period: month, since: at, detail: '' }, prev));
    await io.write(act.state, done);
    return undefined;
  }
  if (act.op === 'hold') {
    // Holders joined or left a target that stays held: the state only.
    const fields: Partial<LeverState> = { holds: act.holds, status: cap ? 'armed' : 'stopped', want: 'on', period: month, ...(cap ? { askedCents: act.askedCents ?? null } : {}) };
    const done = next(fields, prev);
    if (!(await io.write(act.state, done))) return undefined;
    return { act, result: 'ok', detail: heldText(t, act), state: done };
  }
  if (act.op === 'read_limit') {
    if (!lever?.readProjectLimit) return undefined;
    try {
      const limit = await lever.readProjectLimit(t.projectId!);
      const enforcing = limit?.enforcing === true;
      const ours = limit !== null && limit.thresholdCents === prev.limitCents;
      if (ours && enforcing === (prev.enforcing === true)) return undefined;
      // Changed at the provider: enforcement began or ended; or a person changed or removed the limit: that is the
      // customer's own limit now (the next pass sets the lowest of it and the holders' again).
      const fields: Partial<LeverState> = ours
        ? { enforcing, since: enforcing ? at : prev.since }
        : { prior: { ...prev.prior, limitCents: limit?.thresholdCents ?? null }, askedCents: null, limitCents: limit?.thresholdCents ?? null, enforcing };
      const done = next(fields, prev);
      if (!(await io.write(act.state, done))) return undefined;
      return enforcing && ours ? { act, result: 'ok', detail: `${providerName(t.provider)} is refusing project ${t.name}'s requests: its limit is reached`, nowEnforcing: true, state: done } : undefined;
    } catch (error) {
      logger.warn('project limit read failed', { reason: error instanceof Error ? error.message : 'error' });
      return undefined;
    }
  }
  if (t.kind !== 'reporter' && !lever) return undefined;

  const turningOn = act.op === 'stop' || act.op === 'set_limit';
  // Claim: only the writer that moves the state from the version read pulls the lever.
  const claimed = next({ status: 'acting', want: turningOn ? 'on' : 'off', since: at }, prev);
  if (!(await io.write(act.state, claimed))) return undefined;
  let done: LeverState;
  let detail: string;
  try {
    let fields: Partial<LeverState> = {};
    if (t.kind === 'reporter') {
      detail = turningOn ? onText(t) : offText(t);
    } else if (act.op === 'stop') {
      const prior = prev.prior?.active !== undefined ? prev.prior : { active: lever!.readKey ? (await lever!.readKey(t.keyId!)).active : true };
      if (prior.active) await lever!.stopKey!(t.keyId!);
      fields = { prior };
      detail = prior.active ? onText(t) : `Key ${t.name} was already off at ${providerName(t.provider)} (turned off by a person): Burnrate leaves it off`;
    } else if (act.op === 'start') {
      const wasOn = prev.prior?.active !== false;
      if (wasOn) await lever!.startKey!(t.keyId!);
      detail = wasOn ? offText(t) : `Key ${t.name} stays off at ${providerName(t.provider)}: it was off before Burnrate stopped it`;
    } else if (act.op === 'set_limit') {
      const caps = capOps(lever!, t);
      const applied = prev.status === 'armed' || (prev.status === 'failed' && prev.want === 'off') || prev.status === 'acting';
      let prior = prev.prior;
      if (prior?.limitCents === undefined) {
        // Before the first hold: the customer's own limit (put back when the last holder leaves).
        const existing = await caps.read();
        prior = { ...prior, limitCents: existing && !(applied && existing.cents === prev.limitCents) ? existing.cents : null, ...(existing?.reset !== undefined ? { limitReset: existing.reset } : {}) };
      }
      const own = prior.limitCents;
      const cents = typeof own === 'number' ? Math.min(act.askedCents!, own) : act.askedCents!;
      const inForce = applied ? prev.limitCents : own;
      let enforcing = prev.enforcing === true;
      let capId = prev.capId;
      if (cents !== inForce) {
        const set = await caps.set(cents);
        enforcing = set.enforcing ?? enforcing;
        capId = set.id ?? capId;
      }
      fields = { prior, askedCents: act.askedCents!, limitCents: cents, enforcing, ...(capId ? { capId } : {}), unavailable: undefined };
      detail = typeof own === 'number' && own <= act.askedCents! ? `${capName(t)}: the customer's own limit of ${usd(own)} is lower and stays` : onText(t, cents);
    } else {
      // remove_limit: the customer's own limit back, or none.
      const own = prev.prior?.limitCents;
      await capOps(lever!, t).restore(prev.prior ?? {}, prev.limitCents ?? null, prev.capId);
      fields = { askedCents: null, limitCents: null, enforcing: false, capId: undefined, unavailable: undefined };
      detail = typeof own === 'number' ? `${offText(t)}; the earlier limit of ${usd(own)} put back` : offText(t);
    }
    done = clean(
      next(
        {
          ...fields,
          holds: act.holds,
          status: turningOn ? (cap ? 'armed' : 'stopped') : 'released',
          want: turningOn ? 'on' : 'off',
          letGo: [],
          period: month,
          since: at,
          detail,
        },
        claimed,
      ),
    );
  } catch (error) {
    if (error instanceof CapUnavailable) {
      // Not for this organization (Anthropic's early access): said on the budget, not retried until it changes;
      // its keys still stop by their switches.
      detail = `${providerName(t.provider)} would not set ${capName(t)}'s spend limit: ${error.message}`;
      done = next({ holds: act.holds, status: 'released', want: 'off', askedCents: act.askedCents ?? null, unavailable: detail, period: month, detail, since: at }, claimed);
      await io.write(claimed, done);
      return { act, result: 'ok', detail, state: done, unavailable: true };
    }
    const message = error instanceof Error ? error.message : String(error);
    detail = `${providerName(t.provider)} refused: ${message}`;
    done = next({ holds: act.holds, status: 'failed', letGo: [...(prev.letGo ?? []), ...act.removed], period: month, detail, since: at }, claimed);
  }
  await io.write(claimed, done);
  return { act, result: done.status === 'failed' ? 'failed' : 'ok', detail, state: done };
}

/** A cap's words: `OpenAI project Web app`, `OpenRouter key Production`, `Anthropic workspace Research`. */
const capName = (t: Target) => `${providerName(t.provider)} ${t.kind === 'key_limit' ? 'key' : t.kind === 'workspace_cap' ? 'workspace' : 'project'} ${t.name}`;

type CapRead = { cents: number | null; reset?: string | null };

/** One cap's provider calls, whatever its kind: read the customer's own, set Burnrate's, put the customer's back. */
function capOps(lever: Lever, t: Target) {
  if (t.kind === 'key_limit') {
    return {
      read: async () => {
        const own = await lever.readKeyLimit!(t.keyId!);
        return { cents: own.limitCents, reset: own.limitReset } as CapRead;
      },
      set: async (cents: number) => {
        await lever.setKeyLimit!(t.keyId!, cents, 'monthly');
        return {} as { enforcing?: boolean; id?: string };
      },
      restore: async (prior: Prior, _inForce: number | null, _id?: string) => lever.setKeyLimit!(t.keyId!, prior.limitCents ?? null, prior.limitReset ?? null),
    };
  }
  if (t.kind === 'workspace_cap') {
    // A Console organization can't read a workspace's own limit: Burnrate's replaces it, and release deletes it.
    return {
      read: async () => null as CapRead | null,
      set: async (cents: number) => ({ ...(await lever.setWorkspaceLimit!(t.projectId!, cents)) }) as { enforcing?: boolean; id?: string },
      restore: async (_prior: Prior, _inForce: number | null, id?: string) => {
        if (id) await lever.deleteSpendLimit!(id);
      },
    };
  }
  return {
    read: async () => {
      const l = await lever.readProjectLimit!(t.projectId!);
      return l ? ({ cents: l.thresholdCents } as CapRead) : null;
    },
    set: async (cents: number) => ({ enforcing: (await lever.setProjectLimit!(t.projectId!, cents)).enforcing }) as { enforcing?: boolean; id?: string },
    restore: async (prior: Prior, inForce: number | null) => {
      if (typeof prior.limitCents === 'number') {
        if (inForce !== prior.limitCents) await lever.setProjectLimit!(t.projectId!, prior.limitCents);
      } else await lever.removeProjectLimit!(t.projectId!);
    },
  };
}
