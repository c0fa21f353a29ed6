/**
 * Enforcement: what each stop budget claims (the targets it wants held now), the decision (decide.ts: claims × the
 * targets' lever states → acts), and the acts taken (pull.ts: each claimed by a conditional write of its target's
 * state, so acts on one target never run at once); recorded in the actions log (one entry per holder concerned);
 * announced by alerts (`budget_stopped`, `budget_released` to the budget's people, `enforcement_failed` to admins,
 * retried by the next sync).
 *
 * Who acts: a lever that needs the admin key runs in the sync worker only (the one function that may open admin
 * keys), for its own connection's targets. Ingestion and the API act on reporter targets and state-only changes
 * themselves (no key needed) and queue a sync of each connection that has an act waiting.
 */
import { effectiveTagsOf } from '#shared/tags/tags.ts';
import { makeAlert } from '#shared/alerting/evaluate.ts';
import type { Budget } from '#shared/alerting/model.ts';
import { loadSpend } from '#shared/alerting/spend.ts';
import { reachesThreshold } from '#shared/alerting/model.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { listBudgets } from '#shared/db/budgets.ts';
import { listConnections, type Connection } from '#shared/db/connections.ts';
import { listProviderKeys } from '#shared/db/discovered-keys.ts';
import { listEnforcement, putActions, putRelease, writeState } from '#shared/db/enforcement.ts';
import type { Item } from '#shared/db/client.ts';
import { rollingNames } from '#shared/db/rolling.ts';
import { queueSyncs } from '#shared/connections/queue.ts';
import type { Provider } from '#shared/connections/model.ts';
import { decide } from '#shared/enforcement/decide.ts';
import type { Lever } from '#shared/enforcement/levers.ts';
import { leverOffer } from '#shared/enforcement/offers.ts';
import { needsLever, takeAct, type StateWriter } from '#shared/enforcement/pull.ts';
import { holderName, undoByHand } from '#shared/enforcement/words.ts';
import { holdStops } from '#shared/enforcement/stopped-by.ts';
import { holderKey, isCap, type Act, type ActionKind, type Claim, type EnforcementAction, type Hold, type LeverState, type Outcome, type Release, type Target } from '#shared/db/enforcement-model.ts';
import { logger } from '#shared/http/logger.ts';
import { newId } from '#shared/ids.ts';
import { keyDisplayName } from '#shared/usage/key-name.ts';
import { publishAlerts } from '#shared/alerting/queue.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { isoDate, isoMonth } from '#shared/time/periods.ts';

export type { Outcome } from '#shared/db/enforcement-model.ts';

/** An act under way longer than this is taken as lost (its worker died): the next pass does it again. */
const ACTING_STALE_MS = 2 * 60_000;

export const budgetLabel = (b: Pick<Budget, 'name' | 'id'>) => (b.name ? `"${b.name}"` : `budget ${b.id}`);

const micros = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0);

export interface KeyInfo {
  hash: string;
  item: Item;
  source: 'connection' | 'ingest';
  provider: string;
  connectionId: string | null;
  keyId: string | null;
  projectId: string | null;
  /** The provider's status (`active`, `inactive`, `archived`, `expired`, `deleted`; null: unknown or none). */
  status: string | null;
  active: boolean;
  name: string;
  monthMicros: number;
}

function keyInfo(item: Item, month: string, today: string): KeyInfo {
  const project = item.project as { id?: string } | null | undefined;
  const hash = item.keyHash as string;
  const status = typeof item.providerStatus === 'string' ? item.providerStatus : null;
  return {
    hash,
    item,
    source: item.source === 'connection' ? 'connection' : 'ingest',
    provider: String(item.provider ?? ''),
    connectionId: typeof item.connectionId === 'string' ? item.connectionId : null,
    keyId: typeof item.providerKeyId === 'string' ? item.providerKeyId : null,
    projectId: typeof project?.id === 'string' ? project.id : null,
    status,
    active: status === null || status === 'active',
    name: keyDisplayName({ hash, label: item.label as string | null | undefined, name: item.name as string | null | undefined, hint: item.hint as string | null | undefined }),
    monthMicros: micros(item[rollingNames(today, month).monthCost]),
  };
}

/** A key Burnrate can never switch: gone at the provider, archived or expired (no way back). */
const keyGone = (k: KeyInfo) => k.status === 'deleted' || k.status === 'archived' || k.status === 'expired';

export const keyTarget = (k: KeyInfo): Target | undefined => {
  if (k.source === 'ingest') return { id: `reporter:${k.hash}`, kind: 'reporter', provider: k.provider, connectionId: null, keyHash: k.hash, keyId: null, projectId: null, name: k.name };
  if (!k.connectionId || !k.keyId || keyGone(k) || !leverOffer(k.provider)?.keySwitch) return undefined;
  return { id: `key:${k.hash}`, kind: 'key', provider: k.provider, connectionId: k.connectionId, keyHash: k.hash, keyId: k.keyId, projectId: k.projectId, name: k.name };
};

export interface AccountView {
  budgets: Budget[];
  keys: KeyInfo[];
  connections: Map<string, Connection>;
  states: LeverState[];
  releases: Release[];
  accountMonthMicros: number;
  month: string;
  /** When it was read (the `since` of holds taken now). */
  at?: string;
}

/** Everything a decision needs: budgets, keys, connections, lever states (one Query each) and the account's month (one BatchGetItem). */
export async function loadAccount(
  accountId: string,
  now: Date,
  known?: { budgets: Budget[]; states: LeverState[]; releases: Release[] },
  /** A reader that writes nothing (GET /budgets: its function may not write): state of the earlier layout carried over in memory only. */
  readOnly = false,
): Promise<AccountView> {
  const month = isoMonth(now);
  const today = isoDate(now);
  const [budgets, keyItems, connections, enforcement, spend] = await Promise.all([
    known?.budgets ?? listBudgets(accountId),
    listProviderKeys(accountId),
    listConnections(accountId),
    known ? { states: known.states, releases: known.releases } : listEnforcement(accountId, true, { persist: !readOnly }),
    loadSpend(accountId, now),
  ]);
  return {
    budgets,
    keys: keyItems.map((item) => keyInfo(item, month, today)),
    connections: new Map(connections.map((c) => [c.id, c])),
    states: enforcement.states,
    releases: enforcement.releases,
    accountMonthMicros: spend.accountMonth(),
    month,
    at: now.toISOString(),
  };
}

/** The target id of a project's hard limit: one per (connection, project), whichever holders hold it. */
const projectTargetId = (connectionId: string, projectId: string) => `project:${connectionId}:${projectId}`;

/** A project's name as the provider gave it on one of its keys, else its id. */
const projectNameOf = (key: KeyInfo | undefined, projectId: string) => (key?.item.project as { name?: string } | null | undefined)?.name ?? projectId;

const cents = (m: number) => Math.max(1, Math.floor(m / 10_000));

/** Released by a person for this month. */
export const releasedNow = (view: Pick<AccountView, 'releases' | 'month'>, holder: { kind: string; id: string }) =>
  view.releases.some((r) => r.holder.kind === holder.kind && r.holder.id === holder.id && r.period === view.month);

/** Whether `holder` holds the target now (a key it stopped stays covered while inactive). */
const holds = (view: AccountView, targetId: string, key: string) => view.states.some((s) => s.target.id === targetId && s.holds.some((h) => holderKey(h) === key));

export interface Coverage {
  /** This month's spend of what the budget watches. */
  spendMicros: number;
  /** The targets it covers (held or not). */
  targets: Target[];
}

/** The project a PROJECT budget watches: its keys (this month's spend) and name. */
function projectKeys(budget: Budget, view: Pick<AccountView, 'keys'>) {
  const inProject = view.keys.filter((k) => k.connectionId === budget.connectionId && k.projectId === budget.projectId);
  return { inProject, spendMicros: inProject.reduce((n, k) => n + k.monthMicros, 0), name: projectNameOf(inProject.find((k) => k.item.project), budget.projectId ?? '') };
}

/** What a budget covers now, and its spend this month. */
export function coverageOf(budget: Budget, view: AccountView): Coverage {
  return { spendMicros: spendOf(budget, view), targets: claimsOfBudget(budget, view, true).map((c) => c.target) };
}

export function spendOf(budget: Budget, view: Pick<AccountView, 'keys' | 'accountMonthMicros'>): number {
  if (budget.scope === 'KEY') return view.keys.find((k) => k.hash === budget.keyHash)?.monthMicros ?? 0;
  if (budget.scope === 'PROJECT') return projectKeys(budget, view).spendMicros;
  if (budget.scope === 'TAG') return view.keys.filter(holdsTag(budget)).reduce((n, k) => n + k.monthMicros, 0);
  return view.accountMonthMicros;
}

/** A TAG budget's keys: those whose effective tags hold its tag, read from the keys each time (now and later). */
const holdsTag = (budget: Budget) => (k: KeyInfo) => !!budget.tag && effectiveTagsOf(k.item)[budget.tag.name] === budget.tag.value;

/**
 * What one stop budget claims now: switch targets (keys, reporter blocks) once its spend reaches its limit; caps
 * (project limits) as long as it is a stop budget, at its limit (ACCOUNT: at the account's limit, or once reached at
 * what each project spent this month, and never higher than it was earlier this month). `all` lists every target it
 * covers, reached or not (the budget's view).
 */
function claimsOfBudget(budget: Budget, view: AccountView, all = false): Claim[] {
  if (budget.action !== 'stop' && !all) return [];
  const at = view.at ?? new Date().toISOString();
  const holder = { kind: 'budget' as const, id: budget.id };
  const key = holderKey(holder);
  const spend = spendOf(budget, view);
  const reached = spend >= budget.monthlyLimitMicros;
  const hold = (extra: Partial<Hold> = {}): Hold => ({ ...holder, name: budget.name, since: at, reached: true, ...extra });
  const switchClaim = (t: Target | undefined): Claim[] => (t && (reached || all) ? [{ target: t, hold: hold(), reason: 'limit_reached' }] : []);
  const covered = (k: KeyInfo) => k.active || holds(view, `key:${k.hash}`, key);
  if (budget.scope === 'KEY') {
    const k = view.keys.find((x) => x.hash === budget.keyHash);
    const t = k && keyTarget(k);
    if (!k || !t) return [];
    // OpenRouter: the key's own limit too (monthly), OpenRouter refusing the key past it even while Burnrate is down.
    const native: Claim[] =
      t.kind === 'key' && leverOffer(t.provider)?.keyLimit && budget.nativeCap !== false
        ? [{ target: { ...t, id: `keylimit:${k.hash}`, kind: 'key_limit' }, hold: hold({ limitCents: cents(budget.monthlyLimitMicros), reached }), reason: reached ? 'limit_reached' : 'budget_changed' }]
        : [];
    return [...switchClaim(t), ...native];
  }
  if (budget.scope === 'PROJECT') {
    const conn = budget.connectionId ? view.connections.get(budget.connectionId) : undefined;
    if (!conn || !budget.projectId) return [];
    const { inProject, name } = projectKeys(budget, view);
    if (leverOffer(conn.provider)?.projectLimit) {
      const target: Target = { id: projectTargetId(conn.id, budget.projectId), kind: 'project', provider: conn.provider, connectionId: conn.id, keyHash: null, keyId: null, projectId: budget.projectId, name };
      return [{ target, hold: hold({ limitCents: cents(budget.monthlyLimitMicros), reached }), reason: reached ? 'limit_reached' : 'budget_changed' }];
    }
    // Anthropic: every active key of the workspace; with `nativeCap`, the workspace's monthly spend limit too.
    const native: Claim[] =
      leverOffer(conn.provider)?.workspaceCap && budget.nativeCap === true
        ? [{ target: { id: `wscap:${conn.id}:${budget.projectId}`, kind: 'workspace_cap', provider: conn.provider, connectionId: conn.id, keyHash: null, keyId: null, projectId: budget.projectId, name }, hold: hold({ limitCents: cents(budget.monthlyLimitMicros), reached }), reason: reached ? 'limit_reached' : 'budget_changed' }]
        : [];
    return [...inProject.filter(covered).flatMap((k) => switchClaim(keyTarget(k))), ...native];
  }
  // ACCOUNT: every key switch of the account's connections, every key that sends events, and a limit on every
  // project (of a provider with project limits) its connections' keys are in. TAG: the same for the keys whose
  // effective tags hold its tag, and a limit only on projects whose keys ALL hold it (a project's limit stops all of
  // its keys: a project only partly tagged keeps running, its tagged keys are stopped where a provider can).
  const scoped = budget.scope === 'TAG' ? view.keys.filter(holdsTag(budget)) : view.keys;
  const partly = new Set<string>();
  if (budget.scope === 'TAG') {
    const tagged = holdsTag(budget);
    for (const k of view.keys) if (k.connectionId && k.projectId && !tagged(k)) partly.add(projectTargetId(k.connectionId, k.projectId));
  }
  const claims = scoped.filter((k) => k.source === 'ingest' || covered(k)).flatMap((k) => switchClaim(keyTarget(k)));
  const byProject = new Map<string, { conn: Connection; projectId: string; name: string; micros: number; active: boolean }>();
  for (const k of scoped) {
    const conn = k.connectionId ? view.connections.get(k.connectionId) : undefined;
    if (k.source !== 'connection' || !conn || !k.projectId || !leverOffer(conn.provider)?.projectLimit) continue;
    const id = projectTargetId(conn.id, k.projectId);
    if (partly.has(id)) continue;
    const p = byProject.get(id) ?? { conn, projectId: k.projectId, name: projectNameOf(k, k.projectId), micros: 0, active: false };
    p.micros += k.monthMicros;
    p.active ||= k.active;
    byProject.set(id, p);
  }
  for (const [id, p] of byProject) {
    if (!p.active && !holds(view, id, key)) continue;
    let limitCents = cents(budget.monthlyLimitMicros);
    if (reached) {
      const earlier = view.states.find((s) => s.target.id === id && s.period === view.month)?.holds.find((h) => holderKey(h) === key && h.reached);
      limitCents = Math.min(earlier?.limitCents ?? Number.MAX_SAFE_INTEGER, cents(p.micros));
    }
    const target: Target = { id, kind: 'project', provider: p.conn.provider, connectionId: p.conn.id, keyHash: null, keyId: null, projectId: p.projectId, name: p.name };
    claims.push({ target, hold: hold({ limitCents, reached }), reason: reached ? 'limit_reached' : 'budget_changed' });
  }
  return claims;
}

/**
 * Every claim of the account now: its stop budgets' (not those released by a person this month), and the anomaly
 * holds already taken (they stay until a person releases them).
 */
export function claimsOf(view: AccountView): { claims: Claim[]; holders: Map<string, 'exists' | 'released'> } {
  const holders = new Map<string, 'exists' | 'released'>();
  const claims: Claim[] = [];
  for (const b of view.budgets) {
    const released = releasedNow(view, { kind: 'budget', id: b.id });
    holders.set(holderKey({ kind: 'budget', id: b.id }), released ? 'released' : 'exists');
    if (!released) claims.push(...claimsOfBudget(b, view));
  }
  for (const s of view.states) {
    for (const h of s.holds) {
      if (h.kind !== 'anomaly') continue;
      // A person releases one key of a rule (shared/anomaly/service.ts: the holder `anomaly:<ruleId>#<keyHash>`).
      const released = view.releases.some(
        (r) => r.holder.kind === 'anomaly' && (r.holder.id === h.id || r.holder.id === `${h.id}#${s.target.keyHash}`) && r.at >= h.since,
      );
      if (holders.get(holderKey(h)) !== 'released') holders.set(holderKey(h), released ? 'released' : 'exists');
      if (!released) claims.push({ target: s.target, hold: h, reason: 'anomaly' });
    }
  }
  return { claims, holders };
}

const connectionsOn = (view: AccountView) => new Set([...view.connections.values()].filter((c) => c.enforcement === 'on' && c.status !== 'paused').map((c) => c.id));

export function decisionFor(view: AccountView, now: Date, opts: { scope?: (t: Target) => boolean; releasing?: ReadonlySet<string> } = {}): Act[] {
  const { claims, holders } = claimsOf(view);
  return decide({
    claims,
    holders,
    states: view.states,
    month: view.month,
    connectionsOn: connectionsOn(view),
    ...(opts.releasing ? { connectionsReleasing: opts.releasing } : {}),
    staleBefore: new Date(now.getTime() - ACTING_STALE_MS).toISOString(),
    ...(opts.scope ? { scope: opts.scope } : {}),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Taking the acts

const KINDS: Record<Target['kind'], { on: ActionKind; off: ActionKind }> = {
  key: { on: 'key_deactivated', off: 'key_reactivated' },
  project: { on: 'project_limit_set', off: 'project_limit_removed' },
  reporter: { on: 'reporter_blocked', off: 'reporter_unblocked' },
  key_limit: { on: 'key_limit_set', off: 'key_limit_removed' },
  workspace_cap: { on: 'workspace_limit_set', off: 'workspace_limit_removed' },
};
/** Providers whose key switch is called "disabled" (OpenRouter) record key_disabled / key_enabled. */
const kindOf = (t: Target, on: boolean): ActionKind =>
  t.kind === 'key' && leverOffer(t.provider)?.keySwitchWords === 'disabled' ? (on ? 'key_disabled' : 'key_enabled') : KINDS[t.kind][on ? 'on' : 'off'];

export interface ActOptions {
  now: Date;
  /** The connection's lever (the sync worker only, `enforceForConnection`): undefined for passes without admin keys. */
  lever?: Lever;
  /** Connections whose every hold goes now (`connection_changed`). */
  releasing?: ReadonlySet<string>;
}

const dbWriter = (accountId: string): StateWriter => ({ write: (prev, next) => writeState(accountId, prev, next) });

/** The holders an outcome concerns, each with the way it went (held: on; let go: off) and why. */
function concerned(o: Outcome): Array<{ hold: Hold; on: boolean; reason: ActReason }> {
  const a = o.act;
  const retried = a.state?.status === 'failed' || a.state?.status === 'acting';
  const on = [...a.added, ...a.changed];
  if (on.length === 0 && retried && (a.op === 'stop' || a.op === 'set_limit')) on.push(...a.holds.map((hold) => ({ hold, reason: a.reason })));
  const off = [...a.removed, ...(a.state?.letGo ?? [])].filter((x, i, all) => all.findIndex((y) => holderKey(y.hold) === holderKey(x.hold)) === i);
  return [...on.map((x) => ({ ...x, on: true })), ...off.map((x) => ({ ...x, on: false }))];
}
type ActReason = Act['reason'];

async function record(accountId: string, outcomes: Outcome[], opts: ActOptions, releases: Release[], month: string): Promise<void> {
  const at = opts.now.toISOString();
  const releasedBy = new Map(releases.filter((r) => r.period === month).map((r) => [holderKey(r.holder), r.by]));
  const actions: EnforcementAction[] = [];
  for (const o of outcomes) {
    if (o.nowEnforcing) continue;
    for (const c of concerned(o)) {
      // A cap's holder joined, or reached its limit, while the cap stays as it is: nothing done at the provider.
      if (o.act.op === 'hold' && c.on && (!c.hold.reached || o.act.changed.some((x) => holderKey(x.hold) === holderKey(c.hold)))) continue;
      actions.push({
        id: newId('action'),
        budgetId: c.hold.kind === 'budget' ? c.hold.id : null,
        holder: { kind: c.hold.kind, id: c.hold.id },
        kind: kindOf(o.act.target, c.on),
        provider: o.act.target.provider,
        keyHash: o.act.target.keyHash,
        projectId: o.act.target.projectId,
        reason: c.reason,
        actor: c.reason === 'released' ? (releasedBy.get(`${holderKey(c.hold)}#${o.act.target.keyHash}`) ?? releasedBy.get(holderKey(c.hold)) ?? 'burnrate') : 'burnrate',
        result: o.unavailable ? 'failed' : o.result,
        detail: o.detail,
        at,
        holderName: c.hold.name,
        targetName: o.act.target.name || null,
      });
    }
  }
  if (actions.length > 0) await putActions(accountId, actions);
}

async function announce(accountId: string, outcomes: Outcome[], budgets: Map<string, Budget>, now: Date): Promise<void> {
  const byBudget = new Map<string, { stopped: string[]; released: Array<{ detail: string; reason: ActReason }>; failed: string[]; byHand: boolean; keyHashes: Set<string> }>();
  const entry = (id: string) => {
    const e = byBudget.get(id) ?? { stopped: [], released: [], failed: [], byHand: false, keyHashes: new Set<string>() };
    byBudget.set(id, e);
    return e;
  };
  for (const o of outcomes) {
    const t = o.act.target;
    if (o.unavailable) continue; // said on the budget (`enforcement.nativeCap`); its keys' switches still act
    if (o.result === 'failed') {
      const puttingBack = o.act.op === 'start' || o.act.op === 'remove_limit';
      const text = puttingBack
        ? `${t.kind === 'project' ? 'Project' : 'Key'} ${t.name} stays ${t.kind === 'project' ? 'capped' : 'stopped'} at ${t.provider === 'openai' ? 'OpenAI' : t.provider === 'anthropic' ? 'Anthropic' : t.provider === 'openrouter' ? 'OpenRouter' : t.provider}: ${o.detail}. To undo it by hand: ${undoByHand(t)}`
        : `${t.kind === 'project' ? 'Project' : 'Key'} ${t.name}: ${o.detail}`;
      const connectionGone = [...o.act.removed, ...(o.act.state?.letGo ?? [])].some((r) => r.reason === 'connection_changed');
      for (const h of [...o.act.holds, ...o.act.removed.map((r) => r.hold), ...(o.act.state?.letGo ?? []).map((r) => r.hold)]) {
        if (h.kind !== 'budget') continue;
        entry(h.id).failed.push(text);
        entry(h.id).byHand ||= connectionGone;
      }
      continue;
    }
    if (o.nowEnforcing) {
      for (const h of o.act.holds) if (h.kind === 'budget') entry(h.id).stopped.push(o.detail);
      continue;
    }
    for (const c of concerned(o)) {
      if (c.hold.kind !== 'budget') continue;
      const e = entry(c.hold.id);
      if (t.keyHash) e.keyHashes.add(t.keyHash);
      const before = o.act.state?.holds.find((h) => holderKey(h) === holderKey(c.hold));
      const retried = o.act.state?.status === 'failed' || o.act.state?.status === 'acting';
      if (c.on && c.hold.reached && (before === undefined || retried || (isCap(t) && !before.reached))) e.stopped.push(o.detail);
      if (!c.on) e.released.push({ detail: o.detail, reason: c.reason });
    }
  }
  const created: { accountId: string; alertId: string }[] = [];
  const day = isoDate(now);
  for (const [budgetId, e] of byBudget) {
    const budget = budgets.get(budgetId);
    const label = budget ? budgetLabel(budget) : `the deleted budget ${budgetId}`;
    const keyHash = e.keyHashes.size === 1 ? [...e.keyHashes][0] : null;
    const common = { budgetId, period: isoMonth(now), thresholdMicros: budget?.monthlyLimitMicros ?? null, observedMicros: null, channels: ['email' as const], ...(keyHash ? { keyHash } : {}) };
    const fire = async (alert: ReturnType<typeof makeAlert> & { adminsOnly?: true }, level: string, period: string) => {
      const fired = { source: budgetId, level, period };
      if ((await alreadyFired(accountId, [fired])).has(firedPk(accountId, fired))) return;
      if (await fireAlert(alert, fired)) created.push({ accountId, alertId: alert.id });
    };
    const what = budget?.scope === 'PROJECT' ? 'its project' : budget?.scope === 'KEY' ? 'its key' : 'the account';
    if (e.stopped.length > 0) {
      const alert = makeAlert(accountId, now, {
        ...common,
        type: 'budget_stopped',
        title: `Budget ${label} stopped spend`,
        message: `${label} reached its limit of $${microsToUsd(budget?.monthlyLimitMicros ?? 0)} this month (spend of ${what}). ${e.stopped.join('. ')}. It is undone at the start of next month, when the limit is raised, or with "Release for this month" on the budget.`,
      });
      await fire(alert, 'stopped', `${now.toISOString()}#${alert.id}`);
    }
    if (e.released.length > 0) {
      const alert = makeAlert(accountId, now, {
        ...common,
        type: 'budget_released',
        title: `Budget ${label} released`,
        message: `${e.released.map((r) => r.detail).join('. ')} (${e.released[0]!.reason.replace('_', ' ')}).`,
      });
      await fire(alert, 'released', `${now.toISOString()}#${alert.id}`);
    }
    if (e.failed.length > 0) {
      const alert = {
        ...makeAlert(accountId, now, {
          ...common,
          type: 'enforcement_failed',
          title: `Budget ${label} could not act`,
          message: e.byHand
            ? `${[...new Set(e.failed)].join('. ')}. The connection was turned off, paused or deleted, so Burnrate will not try again.`
            : `${[...new Set(e.failed)].join('. ')}. Give the connection an admin key that may write (PATCH the connection with a new admin key); the next sync tries again.`,
        }),
        adminsOnly: true as const,
      };
      await fire(alert, 'enforce-failed', day);
    }
  }
  if (created.length > 0) await publishAlerts(created);
}

export interface PassResult {
  outcomes: Outcome[];
  /** Connections with acts waiting that this pass could not take (no lever here): queue a sync of each (its provider's worker). */
  waiting: { connectionId: string; provider: Provider }[];
  /** This connection holds a stop budget at or past its alert threshold: sync it every minute. */
  hot: Set<string>;
}

/**
 * One pass: decides for the whole account, takes the acts in `scope` that it can (provider acts with `lever` only),
 * records and announces them. Never throws (a failure is logged; the next pass decides again).
 */
export async function enforcePass(accountId: string, opts: ActOptions & { scope: (t: Target) => boolean }): Promise<PassResult> {
  const empty: PassResult = { outcomes: [], waiting: [], hot: new Set() };
  try {
    // Two Queries decide whether there is anything to do; most accounts stop here.
    const [budgets, enforcement] = await Promise.all([listBudgets(accountId), listEnforcement(accountId)]);
    if (budgets.every((b) => b.action !== 'stop') && enforcement.states.every((s) => s.holds.length === 0 && s.status === 'released')) return empty;
    const view = await loadAccount(accountId, opts.now, { budgets, ...enforcement });
    const acts = decisionFor(view, opts.now, opts.releasing ? { releasing: opts.releasing } : {});
    const here = (a: Act) => opts.scope(a.target) && (!needsLever(a) || opts.lever !== undefined);
    const mine = acts.filter(here);
    const waitingActs = acts.filter((a) => !here(a) && a.target.connectionId && a.op !== 'read_limit');
    const waiting = [...new Map(waitingActs.map((a) => [a.target.connectionId!, { connectionId: a.target.connectionId!, provider: a.target.provider as Provider }])).values()];
    const io = dbWriter(accountId);
    const ctx = { now: opts.now, month: view.month };
    const outcomes = (await Promise.all(mine.map((a) => takeAct(a, a.target.kind === 'reporter' ? undefined : opts.lever, io, ctx)))).filter((o): o is Outcome => o !== undefined);
    await record(accountId, outcomes, opts, view.releases, view.month);
    await announce(accountId, outcomes, new Map(view.budgets.map((b) => [b.id, b])), opts.now);
    const hot = new Set<string>();
    for (const b of view.budgets) {
      if (b.action !== 'stop') continue;
      const c = coverageOf(b, view);
      if (!reachesThreshold(c.spendMicros, b.monthlyLimitMicros, b.alertThreshold)) continue;
      for (const t of c.targets) if (t.connectionId) hot.add(t.connectionId);
    }
    return { outcomes, waiting, hot };
  } catch (error) {
    logger.error('enforcement pass failed', error as Error);
    return empty;
  }
}

/** After an ingest or a budget change (no admin key here): reporter targets and state-only changes now, a sync queued for each connection with acts waiting. */
export async function enforceWithoutKeys(accountId: string, now = new Date()): Promise<PassResult> {
  const result = await enforcePass(accountId, { now, scope: () => true });
  if (result.waiting.length > 0) await queueSyncs(result.waiting.map((w) => ({ accountId, ...w })));
  return result;
}

/** In the sync worker, after the import: the connection's own targets, with its lever (`releasing`: every hold there goes, `connection_changed`). */
export function enforceForConnection(accountId: string, connectionId: string, lever: Lever, now: Date, releasing = false): Promise<PassResult> {
  return enforcePass(accountId, { now, lever, scope: (t) => t.connectionId === connectionId, ...(releasing ? { releasing: new Set([connectionId]) } : {}) });
}

// ---------------------------------------------------------------------------------------------------------------
// Release by a person, and the budget's view

/** Releases the budget for the rest of the month (by `userId`); the next pass lets its holds go (reporter blocks at once, the others by a sync queued now). */
export async function holdBudget(accountId: string, budget: Budget, userId: string, now: Date): Promise<void> {
  await putRelease(accountId, { holder: { kind: 'budget', id: budget.id }, period: isoMonth(now), by: userId, at: now.toISOString() });
  await enforceWithoutKeys(accountId, now);
}

export type EnforcementStatus = 'armed' | 'stopped' | 'released' | 'failed';

/** The lever a budget uses, as the API names it. */
export function leverName(budget: Budget, view: Pick<AccountView, 'keys' | 'connections'>): string | null {
  if (budget.scope === 'ACCOUNT') return 'account';
  if (budget.scope === 'TAG') return 'tag';
  if (budget.scope === 'PROJECT') {
    const c = budget.connectionId ? view.connections.get(budget.connectionId) : undefined;
    if (!c) return null;
    const offer = leverOffer(c.provider);
    return offer?.projectLimit ? `${c.provider}_project_limit` : offer?.keySwitch ? `${c.provider}_workspace_keys` : null;
  }
  const k = view.keys.find((x) => x.hash === budget.keyHash);
  if (!k) return null;
  return k.source === 'ingest' ? 'reporter' : leverOffer(k.provider)?.keySwitch ? `${k.provider}_key` : null;
}

/** `enforcement` of a stop budget's view, from the lever states it holds (each holder shows its own status). */
export function enforcementView(budget: Budget, view: Pick<AccountView, 'states' | 'releases' | 'month'>, lever: string | null) {
  const key = holderKey({ kind: 'budget', id: budget.id });
  const all = view.states.flatMap((s) => s.holds.filter((h) => holderKey(h) === key).map((h) => ({ s, h })));
  const nativeCap = nativeCapView(all.map((x) => x.s).filter((s) => isCap(s.target)));
  // A cap the provider would not set stops nothing: its keys' switches speak for the budget.
  const mine = all.filter(({ s }) => !s.unavailable);
  const withCap = <T extends object>(v: T) => ({ ...v, nativeCap });
  const failed = mine.filter(({ s }) => s.status === 'failed');
  const stopped = mine.filter(({ s, h }) => s.status !== 'failed' && holdStops(s, h));
  const latest = (list: typeof mine) => list.reduce<string | undefined>((a, { s, h }) => { const at = isCap(s.target) ? s.since : h.since; return !a || at > a ? at : a; }, undefined);
  const pick = (status: EnforcementStatus, list: typeof mine, detail?: string) => ({
    status,
    lever,
    detail: detail ?? (list.map(({ s }) => s.detail).filter(Boolean).join('. ') || defaultDetail(status)),
    since: latest(list) ?? budget.updatedAt,
  });
  const release = view.releases.find((r) => r.holder.kind === 'budget' && r.holder.id === budget.id && r.period === view.month);
  if (failed.length > 0 && !(release && failed.every(({ s }) => s.want === 'on'))) return withCap(pick('failed', failed));
  // Released by a person: so at once (its levers are put back by the pass the release queued).
  if (release) return withCap({ status: 'released' as const, lever, detail: defaultDetail('released'), since: release.at });
  if (stopped.length > 0) return withCap(pick('stopped', stopped));
  return withCap(pick('armed', mine.filter(({ s }) => s.status === 'armed')));
}

/** `enforcement.nativeCap`: the provider's own cap this budget keeps (set), would keep but may not (unavailable), or none. */
function nativeCapView(caps: LeverState[]): { status: 'set' | 'unavailable' | 'none'; provider: string | null; detail: string } {
  const unavailable = caps.find((s) => s.unavailable);
  if (unavailable) return { status: 'unavailable', provider: unavailable.target.provider, detail: unavailable.unavailable! };
  const set = caps.find((s) => s.status === 'armed' || (s.status === 'failed' && s.want === 'off'));
  if (set) return { status: 'set', provider: set.target.provider, detail: set.detail };
  return { status: 'none', provider: caps[0]?.target.provider ?? null, detail: caps[0]?.detail || 'No provider cap: Burnrate stops spend itself.' };
}

const defaultDetail = (status: EnforcementStatus) =>
  status === 'released' ? 'Released for the rest of this month.' : status === 'armed' ? 'Stops spend when the limit is reached.' : '';

export { holderName };
export { holdStops, stoppedBy } from '#shared/enforcement/stopped-by.ts';
