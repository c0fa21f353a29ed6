/**
 * Enforcement: what each stop budget covers (targets), the decision (decide.ts), and the acts taken — each claimed
 * by a conditional write of its state first, so it is taken once even when an ingest and a sync race; recorded in the
 * actions log; announced by alerts (`budget_stopped`, `budget_released` to the budget's people, `enforcement_failed`
 * to admins, retried by the next sync).
 *
 * Who acts: a lever that needs the admin key runs in the sync worker only (the one function that may open admin
 * keys), for its own connection's targets. Ingestion and the API act on reporter targets themselves (no key needed)
 * and queue a sync of each connection that has an act waiting.
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
import { listStates, putAction, writeState } from '#shared/db/enforcement.ts';
import type { Item } from '#shared/db/client.ts';
import { rollingNames } from '#shared/db/rolling.ts';
import { queueSyncs } from '#shared/connections/queue.ts';
import { decide, type BudgetCoverage } from '#shared/enforcement/decide.ts';
import type { Lever } from '#shared/enforcement/levers.ts';
import { leverOffer } from '#shared/enforcement/offers.ts';
import { pullLever } from '#shared/enforcement/pull.ts';
import { offText, onText } from '#shared/enforcement/words.ts';
import { nextState, type Act, type ActionKind, type EnforcementAction, type EnforcementState, type Outcome, type Target } from '#shared/enforcement/model.ts';
import { logger } from '#shared/http/logger.ts';
import { newId } from '#shared/ids.ts';
import { keyDisplayName } from '#shared/keys/name.ts';
import { publishAlerts } from '#shared/notify/queue.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { isoDate, isoMonth } from '#shared/time/periods.ts';

export type { Outcome } from '#shared/enforcement/model.ts';

/** An act under way longer than this is taken as lost (its worker died): the next pass does it again. */
const ACTING_STALE_MS = 2 * 60_000;

export const budgetLabel = (b: Pick<Budget, 'name' | 'id'>) => (b.name ? `"${b.name}"` : `budget ${b.id}`);

const micros = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0);

interface KeyInfo {
  hash: string;
  item: Item;
  source: 'connection' | 'ingest';
  provider: string;
  connectionId: string | null;
  keyId: string | null;
  projectId: string | null;
  active: boolean;
  name: string;
  monthMicros: number;
}

function keyInfo(item: Item, month: string, today: string): KeyInfo {
  const project = item.project as { id?: string } | null | undefined;
  const hash = item.keyHash as string;
  return {
    hash,
    item,
    source: item.source === 'connection' ? 'connection' : 'ingest',
    provider: String(item.provider ?? ''),
    connectionId: typeof item.connectionId === 'string' ? item.connectionId : null,
    keyId: typeof item.providerKeyId === 'string' ? item.providerKeyId : null,
    projectId: typeof project?.id === 'string' ? project.id : null,
    active: item.providerStatus === undefined || item.providerStatus === null || item.providerStatus === 'active',
    name: keyDisplayName({ hash, label: item.label as string | null | undefined, name: item.name as string | null | undefined, hint: item.hint as string | null | undefined }),
    monthMicros: micros(item[rollingNames(today, month).monthCost]),
  };
}

const keyTarget = (k: KeyInfo): Target | undefined => {
  if (k.source === 'ingest') return { id: `reporter:${k.hash}`, kind: 'reporter', provider: k.provider, connectionId: null, keyHash: k.hash, keyId: null, projectId: null, name: k.name };
  if (!k.connectionId || !k.keyId || !leverOffer(k.provider)?.keySwitch) return undefined;
  return { id: `key:${k.hash}`, kind: 'key', provider: k.provider, connectionId: k.connectionId, keyHash: k.hash, keyId: k.keyId, projectId: k.projectId, name: k.name };
};

export interface AccountView {
  budgets: Budget[];
  keys: KeyInfo[];
  connections: Map<string, Connection>;
  states: EnforcementState[];
  accountMonthMicros: number;
  month: string;
}

/** Everything a decision needs: budgets, keys, connections, states (one Query each) and the account's month (one BatchGetItem). */
export async function loadAccount(accountId: string, now: Date, known?: { budgets: Budget[]; states: EnforcementState[] }): Promise<AccountView> {
  const month = isoMonth(now);
  const today = isoDate(now);
  const [budgets, keyItems, connections, states, spend] = await Promise.all([
    known?.budgets ?? listBudgets(accountId),
    listProviderKeys(accountId),
    listConnections(accountId),
    known?.states ?? listStates(accountId),
    loadSpend(accountId, now),
  ]);
  return {
    budgets,
    keys: keyItems.map((item) => keyInfo(item, month, today)),
    connections: new Map(connections.map((c) => [c.id, c])),
    states,
    accountMonthMicros: spend.accountMonth(),
    month,
  };
}

/** The target id of a project's hard limit: one per (connection, project), whichever budget sets it. */
const projectTargetId = (connectionId: string, projectId: string) => `project:${connectionId}:${projectId}`;

/** A project's name as the provider gave it on one of its keys, else its id. */
const projectNameOf = (key: KeyInfo | undefined, projectId: string) => (key?.item.project as { name?: string } | null | undefined)?.name ?? projectId;

/** What a budget covers now, and its spend this month. A key the budget stopped stays covered while inactive. */
export function coverageOf(budget: Budget, view: AccountView): BudgetCoverage {
  const mine = new Set(view.states.filter((s) => s.budgetId === budget.id && s.status !== 'released').map((s) => s.target.id));
  const covered = (t: Target | undefined, active: boolean): t is Target => t !== undefined && (active || mine.has(t.id));
  if (budget.scope === 'KEY') {
    const key = view.keys.find((k) => k.hash === budget.keyHash);
    const t = key && keyTarget(key);
    return { budget, spendMicros: key?.monthMicros ?? 0, targets: t ? [t] : [] };
  }
  if (budget.scope === 'PROJECT') {
    const conn = budget.connectionId ? view.connections.get(budget.connectionId) : undefined;
    const inProject = view.keys.filter((k) => k.connectionId === budget.connectionId && k.projectId === budget.projectId);
    const spendMicros = inProject.reduce((n, k) => n + k.monthMicros, 0);
    if (!conn || !budget.projectId) return { budget, spendMicros, targets: [] };
    const offer = leverOffer(conn.provider);
    if (offer?.projectLimit) {
      const projectName = projectNameOf(inProject.find((k) => k.item.project), budget.projectId);
      return {
        budget,
        spendMicros,
        targets: [
          {
            id: projectTargetId(conn.id, budget.projectId),
            kind: 'project',
            provider: conn.provider,
            connectionId: conn.id,
            keyHash: null,
            keyId: null,
            projectId: budget.projectId,
            name: projectName,
            limitCents: Math.max(1, Math.floor(budget.monthlyLimitMicros / 10_000)),
          },
        ],
      };
    }
    return { budget, spendMicros, targets: inProject.map((k) => ({ k, t: keyTarget(k) })).filter(({ k, t }) => covered(t, k.active)).map(({ t }) => t!) };
  }
  if (budget.scope === 'TAG') {
    // TAG: the keys whose effective tags hold the tag (now and later: read from the keys each time), their switches and
    // reporter blocks, and the hard limit of every project whose keys ALL hold it (a project limit also stops the
    // project's other keys, so a project only partly tagged is left alone: its tagged keys are stopped where they can be).
    const tag = budget.tag;
    const holds = (k: KeyInfo) => tag !== undefined && tag !== null && effectiveTagsOf(k.item)[tag.name] === tag.value;
    const tagged = view.keys.filter(holds);
    const spendMicros = tagged.reduce((n, k) => n + k.monthMicros, 0);
    const targets = tagged.map((k) => ({ k, t: keyTarget(k) })).filter(({ k, t }) => covered(t, k.active)).map(({ t }) => t!);
    const wholly = new Set<string>();
    const partly = new Set<string>();
    for (const k of view.keys) {
      if (!k.connectionId || !k.projectId) continue;
      (holds(k) ? wholly : partly).add(projectTargetId(k.connectionId, k.projectId));
    }
    const projects = accountProjectTargets(budget, view, mine, { keys: tagged, spendMicros }).filter((t) => wholly.has(t.id) && !partly.has(t.id));
    return { budget, spendMicros, targets: [...targets, ...projects] };
  }
  // ACCOUNT: every key switch of the account's connections, every key that sends events, and a hard limit on every
  // project (of a provider with project limits) its connections' keys are in.
  const targets = view.keys.map((k) => ({ k, t: keyTarget(k) })).filter(({ k, t }) => covered(t, k.active)).map(({ t }) => t!);
  return { budget, spendMicros: view.accountMonthMicros, targets: [...targets, ...accountProjectTargets(budget, view, mine)] };
}

/**
 * The project limits of an ACCOUNT stop budget. Below the account's limit each project's limit is the account's limit
 * (no project alone may spend more than the whole account); once the account reaches it, each project's limit drops
 * to what that project spent this month (at least 1 cent), so the provider refuses its requests — and stays there
 * (the lowest set this month) while the account is past its limit. A project with a `PROJECT` stop budget of its own
 * is left to that budget (one limit per project).
 */
function accountProjectTargets(budget: Budget, view: AccountView, mine: ReadonlySet<string>, only?: { keys: KeyInfo[]; spendMicros: number }): Target[] {
  const ownBudget = new Set(view.budgets.filter((b) => b.scope === 'PROJECT' && b.action === 'stop').map((b) => projectTargetId(b.connectionId ?? '', b.projectId ?? '')));
  const reached = (only ? only.spendMicros : view.accountMonthMicros) >= budget.monthlyLimitMicros;
  const byProject = new Map<string, { conn: Connection; projectId: string; name: string; micros: number; active: boolean }>();
  for (const k of only?.keys ?? view.keys) {
    const conn = k.connectionId ? view.connections.get(k.connectionId) : undefined;
    if (k.source !== 'connection' || !conn || !k.projectId || !leverOffer(conn.provider)?.projectLimit) continue;
    const id = projectTargetId(conn.id, k.projectId);
    if (ownBudget.has(id)) continue;
    const p = byProject.get(id) ?? { conn, projectId: k.projectId, name: projectNameOf(k, k.projectId), micros: 0, active: false };
    p.micros += k.monthMicros;
    p.active ||= k.active;
    byProject.set(id, p);
  }
  const cents = (m: number) => Math.max(1, Math.floor(m / 10_000));
  const targets: Target[] = [];
  for (const [id, p] of byProject) {
    if (!p.active && !mine.has(id)) continue;
    let limitCents = cents(budget.monthlyLimitMicros);
    if (reached) {
      const state = view.states.find((s) => s.budgetId === budget.id && s.target.id === id && s.period === view.month && s.target.atLimit);
      limitCents = Math.min(typeof state?.limitCents === 'number' ? state.limitCents : Infinity, cents(p.micros));
    }
    targets.push({ id, kind: 'project', provider: p.conn.provider, connectionId: p.conn.id, keyHash: null, keyId: null, projectId: p.projectId, name: p.name, limitCents, ...(reached ? { atLimit: true } : {}) });
  }
  return targets;
}

const connectionsOn = (view: AccountView) => new Set([...view.connections.values()].filter((c) => c.enforcement === 'on' && c.status !== 'paused').map((c) => c.id));

export function decisionFor(view: AccountView, now: Date, scope?: (t: Target) => boolean): Act[] {
  return decide({
    budgets: view.budgets.map((b) => coverageOf(b, view)),
    states: view.states,
    month: view.month,
    connectionsOn: connectionsOn(view),
    staleBefore: new Date(now.getTime() - ACTING_STALE_MS).toISOString(),
    ...(scope ? { scope } : {}),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Taking the acts

const KINDS: Record<Target['kind'], { on: ActionKind; off: ActionKind }> = {
  key: { on: 'key_deactivated', off: 'key_reactivated' },
  project: { on: 'project_limit_set', off: 'project_limit_removed' },
  reporter: { on: 'reporter_blocked', off: 'reporter_unblocked' },
};
/** Providers whose key switch is called "disabled" (OpenRouter) record key_disabled / key_enabled. */
const kindOf = (t: Target, on: boolean): ActionKind =>
  t.kind === 'key' && leverOffer(t.provider)?.keySwitchWords === 'disabled' ? (on ? 'key_disabled' : 'key_enabled') : KINDS[t.kind][on ? 'on' : 'off'];

/** Takes one act on a provider's lever from the state read (pull.ts); the sync worker's passes only. */
type Pull = (act: Act, prev: EnforcementState, month: string) => Promise<Outcome | undefined>;

export interface ActOptions {
  now: Date;
  /**
   * The connection's lever, as the act that pulls it (the sync worker only, `enforceForConnection`): undefined for
   * reporter-only passes, whose bundles (ingestion, the API) then hold no lever code.
   */
  pull?: Pull;
  /** Who a release by a person is recorded as (`released` acts); default `burnrate`. */
  actor?: string;
}

function base(act: Act, now: Date, month: string): EnforcementState {
  return (
    act.state ?? { budgetId: act.budgetId, target: act.target, status: 'released', want: 'off', hold: false, period: month, since: now.toISOString(), detail: '', v: 0 }
  );
}

/** Takes one act: a reporter block or release here, a lever's act through `opts.pull`. Undefined: another writer won, or nothing to record. */
async function take(accountId: string, act: Act, opts: ActOptions, month: string): Promise<Outcome | undefined> {
  const at = opts.now.toISOString();
  const prev = base(act, opts.now, month);
  const next = (fields: Partial<EnforcementState>, from: EnforcementState) => nextState(act, from, fields);
  const turningOn = act.op === 'stop' || act.op === 'set_limit';
  const hold = act.reason === 'released';

  if (act.op === 'forget') {
    await writeState(accountId, act.state, next({ status: 'released', want: 'off', hold, period: month, since: at, detail: '' }, prev));
    return undefined;
  }
  if (act.target.kind === 'reporter') {
    const done = next({ status: turningOn ? 'stopped' : 'released', want: turningOn ? 'on' : 'off', hold, period: month, since: at, detail: turningOn ? onText(act.target) : offText(act.target) }, prev);
    if (!(await writeState(accountId, act.state, done))) return undefined;
    return { act, result: 'ok', detail: done.detail };
  }
  return opts.pull ? opts.pull(act, prev, month) : undefined;
}

async function record(accountId: string, outcomes: Outcome[], opts: ActOptions, holders: Map<string, string>): Promise<void> {
  await Promise.all(
    outcomes
      .filter((o) => !o.nowEnforcing)
      .map((o) => {
        const on = o.act.op === 'stop' || o.act.op === 'set_limit';
        const action: EnforcementAction = {
          id: newId('action'),
          budgetId: o.act.budgetId,
          kind: kindOf(o.act.target, on),
          provider: o.act.target.provider,
          keyHash: o.act.target.keyHash,
          projectId: o.act.target.projectId,
          reason: o.act.reason,
          actor: o.act.reason === 'released' ? (holders.get(o.act.budgetId) ?? opts.actor ?? 'burnrate') : 'burnrate',
          result: o.result,
          detail: o.detail,
          at: opts.now.toISOString(),
        };
        return putAction(accountId, action);
      }),
  );
}

async function announce(accountId: string, outcomes: Outcome[], budgets: Map<string, Budget>, now: Date): Promise<void> {
  const byBudget = new Map<string, Outcome[]>();
  for (const o of outcomes) byBudget.set(o.act.budgetId, [...(byBudget.get(o.act.budgetId) ?? []), o]);
  const created: { accountId: string; alertId: string }[] = [];
  const day = isoDate(now);
  for (const [budgetId, list] of byBudget) {
    const budget = budgets.get(budgetId);
    const label = budget ? budgetLabel(budget) : `the deleted budget ${budgetId}`;
    const failed = list.filter((o) => o.result === 'failed');
    const stopped = list.filter((o) => o.result === 'ok' && (o.act.op === 'stop' || o.nowEnforcing || (o.act.op === 'set_limit' && o.act.reason === 'limit_reached')));
    const released = list.filter((o) => o.result === 'ok' && o.act.op === 'start');
    const keyHash = list.length === 1 ? list[0]!.act.target.keyHash : null;
    const common = { budgetId, period: isoMonth(now), thresholdMicros: budget?.monthlyLimitMicros ?? null, observedMicros: null, channels: ['email' as const], ...(keyHash ? { keyHash } : {}) };
    const fire = async (alert: ReturnType<typeof makeAlert> & { adminsOnly?: true }, level: string, period: string) => {
      const fired = { source: budgetId, level, period };
      if ((await alreadyFired(accountId, [fired])).has(firedPk(accountId, fired))) return;
      if (await fireAlert(alert, fired)) created.push({ accountId, alertId: alert.id });
    };
    if (stopped.length > 0) {
      const alert = makeAlert(accountId, now, {
        ...common,
        type: 'budget_stopped',
        title: `Budget ${label} stopped spend`,
        message: `${label} reached its limit of $${microsToUsd(budget?.monthlyLimitMicros ?? 0)} this month. ${stopped.map((o) => o.detail).join('. ')}. It is undone at the start of next month, when the limit is raised, or with "Release for this month" on the budget.`,
      });
      await fire(alert, 'stopped', `${now.toISOString()}#${alert.id}`);
    }
    if (released.length > 0) {
      const alert = makeAlert(accountId, now, {
        ...common,
        type: 'budget_released',
        title: `Budget ${label} released`,
        message: `${released.map((o) => o.detail).join('. ')} (${released[0]!.act.reason.replace('_', ' ')}).`,
      });
      await fire(alert, 'released', `${now.toISOString()}#${alert.id}`);
    }
    if (failed.length > 0) {
      const alert = {
        ...makeAlert(accountId, now, {
          ...common,
          type: 'enforcement_failed',
          title: `Budget ${label} could not act`,
          message: `${failed.map((o) => `${o.act.target.kind === 'project' ? 'Project' : 'Key'} ${o.act.target.name}: ${o.detail}`).join('. ')}. Give the connection an admin key that may write (PATCH the connection with a new admin key); the next sync tries again.`,
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
  /** Connections with acts waiting that this pass could not take (no lever here): queue a sync of each. */
  waiting: string[];
  /** This connection holds a stop budget at or past its alert threshold: sync it every minute. */
  hot: Set<string>;
}

/**
 * One pass: decides for the whole account, takes the acts in `scope` (with `lever` for a connection's targets),
 * records and announces them. Never throws (a failure is logged; the next pass decides again).
 */
export async function enforcePass(accountId: string, opts: ActOptions & { scope: (t: Target) => boolean }): Promise<PassResult> {
  const empty: PassResult = { outcomes: [], waiting: [], hot: new Set() };
  try {
    // Two Queries decide whether there is anything to do; most accounts stop here.
    const [budgets, states] = await Promise.all([listBudgets(accountId), listStates(accountId)]);
    if (budgets.every((b) => b.action !== 'stop') && states.every((s) => s.status === 'released' && !s.hold)) return empty;
    const view = await loadAccount(accountId, opts.now, { budgets, states });
    const acts = decisionFor(view, opts.now);
    const mine = acts.filter((a) => opts.scope(a.target));
    const waiting = [...new Set(acts.filter((a) => !opts.scope(a.target) && a.target.connectionId && a.op !== 'read_limit').map((a) => a.target.connectionId!))];
    const holders = new Map(view.states.filter((s) => s.hold).map((s) => [s.budgetId, s.releasedBy ?? 'burnrate']));
    const outcomes = (await Promise.all(mine.map((a) => take(accountId, a, opts, view.month)))).filter((o): o is Outcome => o !== undefined);
    await record(accountId, outcomes, opts, holders);
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

/** After an ingest or a budget change (no admin key here): reporter targets now, a sync queued for each connection with acts waiting. */
export async function enforceWithoutKeys(accountId: string, now = new Date(), actor?: string): Promise<PassResult> {
  const result = await enforcePass(accountId, { now, scope: (t) => t.kind === 'reporter', ...(actor ? { actor } : {}) });
  if (result.waiting.length > 0) await queueSyncs(result.waiting.map((connectionId) => ({ accountId, connectionId })));
  return result;
}

/** In the sync worker, after the import: the connection's own targets, with its lever. */
export function enforceForConnection(accountId: string, connectionId: string, lever: Lever, now: Date): Promise<PassResult> {
  const pull: Pull = (act, prev, month) => pullLever(accountId, act, prev, lever, { now, month });
  return enforcePass(accountId, { now, pull, scope: (t) => t.connectionId === connectionId });
}

// ---------------------------------------------------------------------------------------------------------------
// Release by a person, and the budget's view

/**
 * Holds every lever of the budget off for the rest of the month (`hold` on each target's state, by `userId`); the
 * next pass releases them (reporter targets at once, the others by a sync queued now).
 */
export async function holdBudget(accountId: string, budget: Budget, userId: string, now: Date): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const view = await loadAccount(accountId, now);
    const targets = new Map(coverageOf(budget, view).targets.map((t) => [t.id, t]));
    for (const s of view.states) if (s.budgetId === budget.id) targets.set(s.target.id, s.target);
    const results = await Promise.all(
      [...targets.values()].map((target) => {
        const prev = view.states.find((s) => s.budgetId === budget.id && s.target.id === target.id);
        const from: EnforcementState = prev ?? { budgetId: budget.id, target, status: 'released', want: 'off', hold: false, period: view.month, since: now.toISOString(), detail: '', v: 0 };
        if (from.hold && from.period === view.month) return true;
        return writeState(accountId, prev, { ...from, hold: true, period: from.status === 'released' ? view.month : from.period, releasedBy: userId, v: from.v + 1 });
      }),
    );
    if (results.every(Boolean)) break;
  }
  await enforceWithoutKeys(accountId, now, userId);
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

/** `enforcement` of a stop budget's view: the worst of its targets' states. */
export function enforcementView(budget: Budget, states: EnforcementState[], lever: string | null, month: string) {
  const mine = states.filter((s) => s.budgetId === budget.id);
  const latest = (list: EnforcementState[]) => list.reduce<EnforcementState | undefined>((a, s) => (!a || s.since > a.since ? s : a), undefined);
  const failed = mine.filter((s) => s.status === 'failed');
  const stopped = mine.filter((s) => s.status === 'stopped' || (s.status === 'armed' && s.enforcing === true));
  const held = mine.filter((s) => s.hold && s.period === month);
  const pick = (status: EnforcementStatus, list: EnforcementState[]) => {
    const last = latest(list);
    return { status, lever, detail: list.map((s) => s.detail).filter(Boolean).join('. ') || defaultDetail(status), since: last?.since ?? budget.updatedAt };
  };
  if (failed.length > 0) return pick('failed', failed);
  if (stopped.length > 0) return pick('stopped', stopped);
  if (held.length > 0) return pick('released', held);
  return pick('armed', mine.filter((s) => s.status === 'armed'));
}

const defaultDetail = (status: EnforcementStatus) =>
  status === 'released' ? 'Released for the rest of this month.' : status === 'armed' ? 'Stops spend when the limit is reached.' : '';
