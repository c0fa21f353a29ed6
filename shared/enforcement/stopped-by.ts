/**
 * What stops a key now, read from the lever states (never recomputed): its switch, its reporter block, its project's
 * cap once reached. GET /keys joins it from ONE Query of the account's lever states per page.
 */
import { isCap, type Hold, type LeverState } from '#shared/db/enforcement-model.ts';

/** Whether a hold stops spend now: a switch held, a cap whose holder reached its limit or that the provider enforces. */
export function holdStops(s: LeverState, h: Hold): boolean {
  const inForce = s.status === 'stopped' || s.status === 'armed' || s.status === 'acting' || (s.status === 'failed' && s.want === 'off');
  return inForce && (!isCap(s.target) || h.reached || s.enforcing === true);
}

/** `stoppedBy` of a key (docs/features/budgets-and-alerts.md): the holders stopping it now, by its switch, its reporter block or its project's cap. */
export function stoppedBy(keyHash: string, project: { connectionId: string; projectId: string } | null, states: readonly LeverState[]) {
  const ids = new Set([`key:${keyHash}`, `reporter:${keyHash}`, ...(project ? [`project:${project.connectionId}:${project.projectId}`] : [])]);
  const out: Array<{ kind: Hold['kind']; id: string; name: string | null; lever: string; since: string }> = [];
  for (const s of states) {
    if (!ids.has(s.target.id)) continue;
    for (const h of s.holds) {
      if (!holdStops(s, h)) continue;
      out.push({ kind: h.kind, id: h.id, name: h.name, lever: s.target.kind === 'project' ? `${s.target.provider}_project_limit` : s.target.kind === 'reporter' ? 'reporter' : `${s.target.provider}_key`, since: isCap(s.target) ? s.since : h.since });
    }
  }
  return out;
}

