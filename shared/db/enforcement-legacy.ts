/**
 * Enforcement state of the earlier layout, carried over to levers owned per target.
 *
 * Before levers were owned per target, each stop budget kept its own state per target it acted on
 * (`ENFORCE#<budgetId>#<targetId>`, entity `EnforcementState`): its status (`stopped`, `armed`, `released`, `failed`,
 * `acting`), what its last act aimed for, whether a person had released it for the month, and, for an OpenAI
 * project, the limit it set and the customer's own limit before it. Those items sit under the same `ENFORCE#` prefix,
 * so the one Query that reads the levers reads them too. Left alone they would be ignored: a key Burnrate had switched
 * off would look "off by a person" to the next pass, which would then never switch it back on, and a project's
 * Burnrate-set limit would be taken for the customer's own.
 *
 * The carry-over is done on read, when a writer reads the levers (a pass of the sync worker, an ingest, a budget's
 * change): the old items of one target become (or join) that target's lever state, written conditionally on its
 * version like every act; each old item is then overwritten by a marker that expires after 30 days, so the carry-over
 * runs once per item. The new state lists the old items it took in (`migratedFrom`): a marker write lost after the
 * state's write is finished by the next read without taking the item in twice. Readers that only show states (lists of
 * keys, the block list) see the same carry-over in memory without writing. No deploy step, no Scan of the table.
 *
 * What the old layout could not know is said here: it kept no status of a key before Burnrate switched it off, so a
 * key an old state says Burnrate stopped is taken as on before (the old levers switched a key off whatever its
 * status); the customer's own project limit is the earliest one an old state recorded that is not another old
 * budget's own limit (the old levers took a second budget's view of the first one's limit as "the customer's").
 */
import { isCap, type Hold, type LeverState, type Prior, type Release, type Target } from '#shared/db/enforcement-model.ts';
import type { Item } from '#shared/db/client.ts';

/** The entity of an old state item, and of the marker that replaces it once carried over. */
export const LEGACY_STATE_ENTITY = 'EnforcementState';
export const LEGACY_MIGRATED_ENTITY = 'EnforcementStateMigrated';

/** One old state item: what one stop budget did to one target. */
export interface LegacyState {
  /** The item's sort key (the carry-over's record of what it took in). */
  sk: string;
  budgetId: string;
  target: Target & { limitCents?: number; atLimit?: boolean };
  status: 'stopped' | 'armed' | 'released' | 'failed' | 'acting';
  want: 'on' | 'off';
  /** Released by a person for the rest of `period`. */
  hold: boolean;
  period: string;
  since: string;
  limitCents?: number | null;
  enforcing?: boolean;
  priorLimitCents?: number | null;
  releasedBy?: string;
}

export function toLegacy(item: Item): LegacyState {
  return {
    sk: item.sk as string,
    budgetId: item.budgetId as string,
    target: item.target as LegacyState['target'],
    status: item.status as LegacyState['status'],
    want: item.want === 'off' ? 'off' : 'on',
    hold: item.hold === true,
    period: item.period as string,
    since: item.since as string,
    ...(item.limitCents !== undefined ? { limitCents: item.limitCents as number | null } : {}),
    ...(item.enforcing !== undefined ? { enforcing: item.enforcing === true } : {}),
    ...(item.priorLimitCents !== undefined ? { priorLimitCents: item.priorLimitCents as number | null } : {}),
    ...(typeof item.releasedBy === 'string' ? { releasedBy: item.releasedBy } : {}),
  };
}

/** The lever is (or may be) pulled at the provider by this old state. */
const pulled = (s: LegacyState) => s.status === 'stopped' || s.status === 'armed' || (s.status === 'acting' && s.want === 'on') || (s.status === 'failed' && s.want === 'off');
/** The old state's budget still holds the target (not released by a person, not let go). */
const holding = (s: LegacyState) => !s.hold && (s.status === 'stopped' || s.status === 'armed' || s.want === 'on') && s.status !== 'released';

export interface Carried {
  /** The target's lever state to write (undefined: nothing held or pulled: the old items only go). */
  state?: LeverState;
  /** Budgets a person released for the current month. */
  releases: Release[];
  /** The old items taken in (to be replaced by markers). */
  taken: string[];
}

/**
 * The carry-over of one target's old states (pure): `existing` is the target's lever state if one was written since
 * (its holders stay; the old holders join), `month` the current UTC month, `at` now.
 */
export function carryOver(olds: LegacyState[], existing: LeverState | undefined, month: string, at: string): Carried {
  const taken = olds.map((o) => o.sk);
  const pending = olds.filter((o) => !existing?.migratedFrom?.includes(o.sk));
  const releases: Release[] = pending
    .filter((o) => o.hold && o.period === month)
    .map((o) => ({ holder: { kind: 'budget', id: o.budgetId }, period: o.period, by: o.releasedBy ?? 'unknown', at: o.since }));
  if (pending.length === 0) return { releases, taken };
  const { limitCents: _l, atLimit: _a, ...target } = pending[0]!.target;
  const cap = isCap(target);
  const holds: Hold[] = pending.filter(holding).map((o) => ({
    kind: 'budget',
    id: o.budgetId,
    name: null,
    since: o.since,
    reached: cap ? o.enforcing === true || o.target.atLimit === true : true,
    ...(cap && typeof o.target.limitCents === 'number' ? { limitCents: o.target.limitCents } : {}),
  }));
  const applied = pending.filter(pulled);
  const anyPulled = applied.length > 0;

  // What the target was before Burnrate's first act.
  let prior: Prior | undefined;
  // A key an old act switched off was on before it; one never switched off is read by the next stop, as any.
  if (!cap) prior = anyPulled ? { active: true } : undefined;
  else {
    const ours = new Set(olds.map((o) => o.target.limitCents).filter((c): c is number => typeof c === 'number'));
    const recorded = [...pending].sort((a, b) => a.since.localeCompare(b.since)).filter((o) => o.priorLimitCents !== undefined);
    const own = recorded.find((o) => o.priorLimitCents === null || !ours.has(o.priorLimitCents!));
    prior = recorded.length > 0 ? { limitCents: own ? own.priorLimitCents! : null } : undefined;
  }
  const inForce = [...applied].sort((a, b) => b.since.localeCompare(a.since)).find((o) => typeof o.limitCents === 'number')?.limitCents ?? null;

  const base = existing && (existing.holds.length > 0 || existing.status !== 'released') ? existing : undefined;
  const mergedHolds = [...(base?.holds ?? [])];
  for (const h of holds) if (!mergedHolds.some((m) => m.kind === h.kind && m.id === h.id)) mergedHolds.push(h);
  mergedHolds.sort((a, b) => `${a.kind}:${a.id}`.localeCompare(`${b.kind}:${b.id}`));
  const migratedFrom = [...(existing?.migratedFrom ?? []), ...pending.map((o) => o.sk)];
  const period = [...pending.map((o) => o.period), existing?.period ?? ''].sort().at(-1)!;
  const v = (existing?.v ?? 0) + 1;
  const detail = 'Carried over from the earlier enforcement layout';

  if (base) {
    // A state written since: its status stands; the old holders join; what the old layout knew of the target's own
    // state wins where Burnrate's old act had pulled the lever (the newer read saw Burnrate's doing, not the customer's).
    const mergedPrior = anyPulled && prior ? { ...base.prior, ...prior } : (base.prior ?? prior);
    // (its `askedCents` stays: the next pass sets the lowest of the holders' amounts if the old ones ask for less.)
    const state: LeverState = { ...base, holds: mergedHolds, ...(mergedPrior ? { prior: mergedPrior } : {}), migratedFrom, period, v };
    return { state, releases, taken };
  }
  if (!anyPulled && holds.length === 0) {
    // Nothing pulled, nobody holding: only the record of the carry-over (so a lost marker is not taken in again).
    return { state: existing ? { ...existing, migratedFrom, v } : undefined, releases, taken };
  }
  const status: LeverState['status'] = anyPulled ? (mergedHolds.length > 0 ? (cap ? 'armed' : 'stopped') : 'failed') : 'failed';
  const want: LeverState['want'] = anyPulled ? (mergedHolds.length > 0 ? 'on' : 'off') : 'on';
  const state: LeverState = {
    target,
    holds: mergedHolds,
    ...(prior ? { prior } : {}),
    status,
    want,
    ...(cap
      ? {
          // What was last asked is the amount in force: the next pass sets the lowest of the holders' amounts.
          askedCents: anyPulled ? inForce : null,
          limitCents: anyPulled ? inForce : null,
          enforcing: applied.some((o) => o.enforcing === true),
        }
      : {}),
    period,
    since: at,
    detail,
    migratedFrom,
    v,
  };
  return { state, releases, taken };
}
