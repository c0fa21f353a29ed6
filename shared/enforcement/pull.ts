/**
 * An act on a provider's lever (a key switched, a project's hard limit set, read back or removed): claimed first by a
 * conditional write of its state, so it is taken once even when an ingest and a sync race, then pulled, then its
 * outcome written. Only the sync worker pulls levers (the admin key is open there only): the enforcement service gets
 * this as `pull` from `enforceForConnection`, so the passes of ingestion and the API do not bundle it.
 */
import { providerName } from '#shared/providers/names.ts';
import { writeState } from '#shared/db/enforcement.ts';
import type { Lever } from '#shared/enforcement/levers.ts';
import { nextState, type Act, type EnforcementState, type Outcome } from '#shared/enforcement/model.ts';
import { offText, onText, usd } from '#shared/enforcement/words.ts';
import { logger } from '#shared/http/logger.ts';

/** Takes `act` (not a reporter's, not `forget`) on `lever` from the state read, `prev`. Undefined: another writer won, or nothing to record. */
export async function pullLever(accountId: string, act: Act, prev: EnforcementState, lever: Lever, { now, month }: { now: Date; month: string }): Promise<Outcome | undefined> {
  const at = now.toISOString();
  const next = (fields: Partial<EnforcementState>, from: EnforcementState) => nextState(act, from, fields);
  const turningOn = act.op === 'stop' || act.op === 'set_limit';
  const hold = act.reason === 'released';
  if (act.op === 'read_limit') {
    try {
      const limit = await lever.readProjectLimit!(act.target.projectId!);
      const enforcing = limit?.enforcing === true;
      const stillOurs = limit !== null && limit.thresholdCents === act.target.limitCents;
      if (stillOurs && enforcing === (prev.enforcing === true)) return undefined;
      // Changed at the provider: enforcement began or ended, or someone changed or removed the limit (set again next pass).
      const fields: Partial<EnforcementState> = stillOurs ? { enforcing, since: enforcing ? at : prev.since } : { status: 'released', want: 'off', limitCents: null, enforcing: false, since: at };
      if (!(await writeState(accountId, act.state, next(fields, prev)))) return undefined;
      return enforcing && stillOurs ? { act, result: 'ok', detail: `${providerName(act.target.provider)} is refusing project ${act.target.name}'s requests: its limit is reached`, nowEnforcing: true } : undefined;
    } catch (error) {
      logger.warn('project limit read failed', { reason: error instanceof Error ? error.message : 'error' });
      return undefined;
    }
  }
  // Claim: only the writer that moves the state from the version read pulls the lever.
  const claimed = next({ status: 'acting', want: turningOn ? 'on' : 'off', since: at }, prev);
  if (!(await writeState(accountId, act.state, claimed))) return undefined;
  let done: EnforcementState;
  let detail: string;
  try {
    const t = act.target;
    if (act.op === 'stop') await lever.stopKey!(t.keyId!);
    else if (act.op === 'start') await lever.startKey!(t.keyId!);
    let fields: Partial<EnforcementState> = {};
    if (act.op === 'set_limit') {
      let prior = prev.priorLimitCents;
      if (prior === undefined || prev.limitCents === null || prev.limitCents === undefined) {
        // Before the first limit of ours: remember the customer's own (put back on removal).
        const existing = await lever.readProjectLimit!(t.projectId!);
        prior = existing && existing.thresholdCents !== prev.limitCents ? existing.thresholdCents : (prior ?? null);
      }
      const set = await lever.setProjectLimit!(t.projectId!, t.limitCents!);
      fields = { limitCents: t.limitCents!, enforcing: set.enforcing, priorLimitCents: prior };
    } else if (act.op === 'remove_limit') {
      if (typeof prev.priorLimitCents === 'number') await lever.setProjectLimit!(t.projectId!, prev.priorLimitCents);
      else await lever.removeProjectLimit!(t.projectId!);
      fields = { limitCents: null, enforcing: false, priorLimitCents: undefined };
    }
    detail = turningOn ? onText(t) : act.op === 'remove_limit' && typeof prev.priorLimitCents === 'number' ? `${offText(t)}; the earlier limit of ${usd(prev.priorLimitCents)} put back` : offText(t);
    done = next({ ...fields, status: turningOn ? (act.op === 'set_limit' ? 'armed' : 'stopped') : 'released', want: turningOn ? 'on' : 'off', hold, period: month, since: at, detail }, claimed);
    if (fields.priorLimitCents === undefined && act.op === 'remove_limit') delete done.priorLimitCents;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    detail = `${providerName(act.target.provider)} refused: ${message}`;
    done = next({ status: 'failed', detail, since: at }, claimed);
  }
  await writeState(accountId, claimed, done);
  return { act, result: done.status === 'failed' ? 'failed' : 'ok', detail };
}

