/**
 * The spend-anomaly rule where spend lands (API.md part 6 "Runaway and leaked keys"): after an ingest (the keys it
 * wrote) and after a sync (the keys whose today figure grew), each such key's rate of the last hour is compared with
 * its baseline (rate.ts). A key past an active rule raises `spend_anomaly` once per key and UTC day (the fired item),
 * and with `action: "stop"` its lever is pulled at once: the reporter's block (here, any caller), the Anthropic and
 * OpenRouter key switches (in the sync worker, the one place their admin key is open). An OpenAI key can't be paused
 * alone: alert only, saying so.
 *
 * A stop is held as an enforcement state of (rule, key) with `holder: "anomaly"` (shared/enforcement/model.ts): taken
 * once by a conditional write (20 racing ingests make one act), never released by a budget's decision, and released
 * only by a person (`releaseKey`, POST /keys/{hash}/release); a release leaves the key off while a budget holds it,
 * and a budget's release leaves it off while the rule does. Released keys are not stopped again by the rule that day.
 *
 * Cost: nothing is read unless the account has an active spend_anomaly rule; then one BatchGetItem of the keys
 * written, and only for keys at or past `minUsdPerHour`, one BatchGetItem of their 14 per-day items and one Query of
 * the enforcement states. No scan.
 */
import { makeAlert } from '#shared/alerting/evaluate.ts';
import type { Alert, Rule, SpendAnomalyRuleConfig } from '#shared/alerting/model.ts';
import { moneyWords } from '#shared/alerting/words.ts';
import { baselineDays, baselineMicrosPerHour, baselineOf, isAnomalous, lastDayByHour, rateMicros, type Baseline } from '#shared/anomaly/rate.ts';
import { providerName } from '#shared/connections/alerts.ts';
import { queueSyncs } from '#shared/connections/queue.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { batchGet, type Item } from '#shared/db/client.ts';
import { getConnection, type Connection } from '#shared/db/connections.ts';
import { getProviderKey } from '#shared/db/discovered-keys.ts';
import { listStates, putAction, writeState } from '#shared/db/enforcement.ts';
import { keys } from '#shared/db/keys.ts';
import { listRules } from '#shared/db/rules.ts';
import type { Lever } from '#shared/enforcement/levers.ts';
import { nextState, type Act, type ActionKind, type EnforcementState, type Target } from '#shared/enforcement/model.ts';
import { leverOffer } from '#shared/enforcement/offers.ts';
import { pullLever } from '#shared/enforcement/pull.ts';
import { offText, onText } from '#shared/enforcement/words.ts';
import { Conflict, NotFound } from '#shared/http/errors.ts';
import { logger } from '#shared/http/logger.ts';
import { newId } from '#shared/ids.ts';
import { keyDisplayName } from '#shared/keys/name.ts';
import { publishAlerts } from '#shared/notify/queue.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { isoDate } from '#shared/time/periods.ts';

/** A key this ingest or sync wrote spend for; `rated`: an earlier ingest or sync saw it today, so its rate exists. */
export interface AnomalyCandidate {
  keyHash: string;
  rated: boolean;
}

export interface AnomalyOptions {
  now: Date;
  /** The account's rules when already read (one Query less). */
  rules?: readonly Rule[];
  /** In the sync worker: the connection synced and its lever (its keys' switches can be pulled here). */
  connection?: Connection;
  lever?: Lever;
}

/** An act under way longer than this is taken as lost (its worker died), as for budgets. */
const ACTING_STALE_MS = 2 * 60_000;

const configOf = (r: Rule) => r.config as SpendAnomalyRuleConfig;
export const anomalyRules = (rules: readonly Rule[]): Rule[] => rules.filter((r) => r.isActive && r.type === 'spend_anomaly');
/** Whether an account's rules ask for a key to be stopped (its connections then sync more often). */
export const hasStoppingAnomalyRule = (rules: readonly Rule[]): boolean => anomalyRules(rules).some((r) => configOf(r).action === 'stop');

const micros = (v: unknown): bigint => (typeof v === 'bigint' ? v : typeof v === 'number' && Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n);

/** How people know the key (label, else name, else hint, else hash prefix). */
const nameOf = (item: Item) =>
  keyDisplayName({ hash: item.keyHash as string, label: item.label as string | null | undefined, name: item.name as string | null | undefined, hint: item.hint as string | null | undefined });

/** What the rule can pull for this key: the reporter's block, a connection key's switch, or nothing (OpenAI). */
export function anomalyTarget(item: Item): Target | undefined {
  const hash = item.keyHash as string;
  const provider = String(item.provider ?? '');
  const name = nameOf(item);
  if (item.source !== 'connection') return { id: `reporter:${hash}`, kind: 'reporter', provider, connectionId: null, keyHash: hash, keyId: null, projectId: null, name };
  const keyId = typeof item.providerKeyId === 'string' ? item.providerKeyId : null;
  const connectionId = typeof item.connectionId === 'string' ? item.connectionId : null;
  if (!keyId || !connectionId || !leverOffer(provider)?.keySwitch) return undefined;
  const project = item.project as { id?: string } | null | undefined;
  return { id: `key:${hash}`, kind: 'key', provider, connectionId, keyHash: hash, keyId, projectId: typeof project?.id === 'string' ? project.id : null, name };
}

const actionKind = (t: Target, on: boolean): ActionKind =>
  t.kind === 'reporter'
    ? on
      ? 'reporter_blocked'
      : 'reporter_unblocked'
    : leverOffer(t.provider)?.keySwitchWords === 'disabled'
      ? on
        ? 'key_disabled'
        : 'key_enabled'
      : on
        ? 'key_deactivated'
        : 'key_reactivated';

async function record(accountId: string, ruleId: string, t: Target, on: boolean, reason: 'anomaly' | 'released', actor: string, result: 'ok' | 'failed', detail: string, now: Date) {
  await putAction(accountId, {
    id: newId('action'),
    budgetId: null,
    ruleId,
    kind: actionKind(t, on),
    provider: t.provider,
    keyHash: t.keyHash,
    projectId: t.projectId,
    reason,
    actor,
    result,
    detail,
    at: now.toISOString(),
  });
}

/** A fresh state of (rule, target) before its first act. */
const blank = (ruleId: string, target: Target, day: string, now: Date): EnforcementState => ({
  budgetId: ruleId,
  holder: 'anomaly',
  target,
  status: 'released',
  want: 'off',
  hold: false,
  period: day,
  since: now.toISOString(),
  detail: '',
  v: 0,
});

/** What happened to the key, for the alert's text. */
type Done =
  | { kind: 'notify' }
  | { kind: 'stopped'; detail: string }
  | { kind: 'failed'; detail: string }
  | { kind: 'no-lever'; why: string }
  | { kind: 'released-today' };

interface Trigger {
  rule: Rule;
  item: Item;
  rate: bigint;
  baseline: Baseline;
}

/** Pulls the rule's lever for a key past it (once: the state's conditional write), and says what was done. */
async function stopKey(accountId: string, t: Trigger, states: EnforcementState[], opts: AnomalyOptions): Promise<Done> {
  const { rule, item } = t;
  const { now } = opts;
  const day = isoDate(now);
  const provider = providerName(String(item.provider ?? ''));
  const target = anomalyTarget(item);
  if (!target) {
    return {
      kind: 'no-lever',
      why:
        item.provider === 'openai'
          ? 'OpenAI can\'t pause a single API key, so Burnrate did not stop it: revoke or rotate the key at OpenAI (platform.openai.com → API keys) if it leaked, or give its project a stop budget (a hard spend limit OpenAI enforces).'
          : `${provider} has no switch Burnrate can pull for this key: revoke or rotate it at ${provider} if it leaked.`,
    };
  }
  const state = states.find((s) => s.budgetId === rule.id && s.target.id === target.id);
  const staleBefore = new Date(now.getTime() - ACTING_STALE_MS).toISOString();
  if (state && state.status !== 'released' && state.status !== 'failed' && !(state.status === 'acting' && state.since < staleBefore)) {
    return { kind: 'stopped', detail: state.detail || onText(target) }; // held already (this act, or a racing one)
  }
  if (state && state.status === 'released' && state.period === day && state.hold) return { kind: 'released-today' };
  if (target.kind === 'reporter') {
    const prev = state ?? blank(rule.id, target, day, now);
    const done = nextState({ target }, prev, { status: 'stopped', want: 'on', hold: false, period: day, since: now.toISOString(), detail: onText(target) });
    delete done.releasedBy;
    if (await writeState(accountId, state, done)) await record(accountId, rule.id, target, true, 'anomaly', 'burnrate', 'ok', done.detail, now);
    return { kind: 'stopped', detail: done.detail };
  }
  const conn = opts.connection?.id === target.connectionId ? opts.connection : target.connectionId ? await getConnection(accountId, target.connectionId) : undefined;
  if (!conn || conn.status === 'paused' || conn.enforcement !== 'on') {
    const why = !conn
      ? `its ${provider} connection is gone`
      : conn.status === 'paused'
        ? `its ${provider} connection is paused`
        : `enforcement is off on its ${provider} connection (turn it on with an admin key that may write, and Burnrate stops keys itself)`;
    return { kind: 'no-lever', why: `Burnrate could not stop it: ${why}. Set it inactive at ${provider} yourself if it should not spend.` };
  }
  if (!opts.lever || opts.connection?.id !== conn.id) {
    // Not in this connection's sync (no admin key here): its next sync, queued now, pulls the lever.
    await queueSyncs([{ accountId, connectionId: conn.id }]);
    return { kind: 'stopped', detail: `Key ${target.name} is being stopped at ${provider}` };
  }
  const act: Act = { budgetId: rule.id, target, op: 'stop', reason: 'anomaly', state };
  const prev = state ?? blank(rule.id, target, day, now);
  const outcome = await pullLever(accountId, act, { ...prev, holder: 'anomaly', hold: false }, opts.lever, { now, month: day });
  if (!outcome) return { kind: 'stopped', detail: onText(target) };
  await record(accountId, rule.id, target, true, 'anomaly', 'burnrate', outcome.result, outcome.detail, now);
  return outcome.result === 'ok' ? { kind: 'stopped', detail: outcome.detail } : { kind: 'failed', detail: outcome.detail };
}

/** The alert's text: the key, its rate and baseline, what was done, how to release it. */
export function anomalyText(t: Trigger, done: Done, now: Date): { title: string; message: string } {
  const { rule, item, rate, baseline } = t;
  const c = configOf(rule);
  const key = `key "${nameOf(item)}"`;
  const provider = providerName(String(item.provider ?? ''));
  const perHour = baselineMicrosPerHour(baseline);
  const times = perHour > 0n ? `${(Number(rate) / Number(perHour)).toFixed(0)}× its usual ${moneyWords(perHour)} an hour` : 'a key with no usual spend yet';
  const usual =
    baseline.days === 0
      ? `It is new: it has no spend in the 14 days before today, so any rate past ${moneyWords(Math.round(c.minUsdPerHour * 1e6))} an hour counts.`
      : `Its usual rate is its average over the last ${baseline.days === 14 ? '14' : baseline.days} complete day${baseline.days === 1 ? '' : 's'}: ${moneyWords(baseline.totalMicros)} in all.`;
  const opening = `${provider} ${key} spent ${moneyWords(rate)} in the last hour (to ${now.toISOString().slice(11, 16)} UTC), ${times}: past the rule "${rule.name}" (at least ${c.multiplier}× its usual rate and ${moneyWords(Math.round(c.minUsdPerHour * 1e6))} an hour). ${usual}`;
  const release = `It stays stopped until someone releases it: "Release the key" on this alert in the dashboard, or POST /keys/${item.keyHash as string}/release.`;
  let what: string;
  if (done.kind === 'stopped') what = `Burnrate stopped it: ${done.detail}. ${release}`;
  else if (done.kind === 'failed') what = `Burnrate tried to stop it, but ${done.detail}. Set it inactive at ${provider} yourself; Burnrate tries again at the next sync.`;
  else if (done.kind === 'no-lever') what = done.why;
  else if (done.kind === 'released-today') what = 'Someone released it today after an earlier stop, so Burnrate did not stop it again.';
  else what = 'The rule only notifies: nothing was stopped. Set the rule to stop keys, or stop the key at its provider, if this spend is not expected.';
  return { title: `${rule.name}: ${key} spent ${moneyWords(rate)} in the last hour, ${perHour > 0n ? `${(Number(rate) / Number(perHour)).toFixed(0)}× its usual rate` : 'new and already past the minimum'}`, message: `${opening} ${what}` };
}

/**
 * Compares the keys written with the account's active spend_anomaly rules; stops and alerts where they say so.
 * Returns the alerts created. Throws what DynamoDB throws (callers that must not fail wrap it: `anomaliesAfterIngest`).
 */
export async function evaluateAnomalies(accountId: string, candidates: readonly AnomalyCandidate[], opts: AnomalyOptions): Promise<Alert[]> {
  const rated = [...new Map(candidates.filter((c) => c.rated).map((c) => [c.keyHash, c])).values()];
  if (rated.length === 0) return [];
  const rules = anomalyRules(opts.rules ?? (await listRules(accountId)));
  if (rules.length === 0) return [];
  const { now } = opts;
  const today = isoDate(now);
  const min = BigInt(Math.round(Math.min(...rules.map((r) => configOf(r).minUsdPerHour)) * 1_000_000));
  const items = await batchGet(rated.map((c) => keys.providerKey(accountId, c.keyHash)), undefined, true);
  const hot = items.map((item) => ({ item, rate: rateMicros(item, now) })).filter((h) => h.rate >= min);
  if (hot.length === 0) return [];
  // The baselines of the hot keys only: their 14 per-day items.
  const days = baselineDays(today);
  const dayItems = await batchGet(hot.flatMap((h) => days.map((d) => keys.spendDayKey(accountId, d, h.item.keyHash as string))));
  const byKey = new Map<string, Map<string, bigint>>();
  for (const d of dayItems) {
    const hash = d.keyHash as string;
    if (!byKey.has(hash)) byKey.set(hash, new Map());
    byKey.get(hash)!.set(d.date as string, micros(d.costMicros));
  }
  const triggers: Trigger[] = [];
  for (const { item, rate } of hot) {
    const firstSeen = typeof item.firstSeenAt === 'string' ? item.firstSeenAt.slice(0, 10) : undefined;
    const baseline = baselineOf(byKey.get(item.keyHash as string) ?? new Map(), today, firstSeen);
    for (const rule of rules) if (isAnomalous(rate, baseline, configOf(rule))) triggers.push({ rule, item, rate, baseline });
  }
  if (triggers.length === 0) return [];
  const firedOf = (t: Trigger) => ({ source: t.rule.id, level: 'anomaly', period: `${today}#${t.item.keyHash as string}` });
  const states = triggers.some((t) => configOf(t.rule).action === 'stop') ? await listStates(accountId) : [];
  const fired = await alreadyFired(accountId, triggers.map(firedOf));
  const created: Alert[] = [];
  for (const t of triggers) {
    const c = configOf(t.rule);
    const already = fired.has(firedPk(accountId, firedOf(t)));
    // A stop is pulled even when today's alert fired already (a released key is not stopped again today: its state says so).
    const done: Done = c.action === 'stop' ? await stopKey(accountId, t, states, opts) : { kind: 'notify' };
    if (already) continue;
    const text = anomalyText(t, done, now);
    const alert = makeAlert(accountId, now, {
      type: 'spend_anomaly',
      ruleId: t.rule.id,
      keyHash: t.item.keyHash as string,
      keyName: nameOf(t.item),
      title: text.title,
      message: text.message,
      period: today,
      thresholdMicros: Math.max(Math.round(c.minUsdPerHour * 1e6), Math.ceil(Number(baselineMicrosPerHour(t.baseline)) * c.multiplier)),
      observedMicros: Number(t.rate),
      channels: t.rule.channels,
      ...(c.webhookUrl ? { webhookUrl: c.webhookUrl } : {}),
      ...(c.slackWebhookUrl ? { slackWebhookUrl: c.slackWebhookUrl } : {}),
    });
    if (await fireAlert(alert, firedOf(t))) created.push(alert);
  }
  if (created.length > 0) await publishAlerts(created.map((a) => ({ accountId, alertId: a.id })));
  return created;
}

/** `evaluateAnomalies` after an ingest, which has succeeded already: never throws, a failure is logged. */
export async function anomaliesAfterIngest(accountId: string, candidates: readonly AnomalyCandidate[], opts: AnomalyOptions): Promise<Alert[]> {
  try {
    return await evaluateAnomalies(accountId, candidates, opts);
  } catch (error) {
    logger.error('anomaly evaluation failed', error as Error);
    return [];
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Release by a person

/** Whether another holder (a budget) keeps this key switched off. */
const heldByOther = (states: readonly EnforcementState[], s: EnforcementState) =>
  states.some((o) => o.target.id === s.target.id && o.budgetId !== s.budgetId && (o.status === 'stopped' || o.status === 'acting' || (o.status === 'failed' && o.want === 'on')));

/** The anomaly holds of one key that a person has not released yet. */
const holdsOf = (states: readonly EnforcementState[], keyHash: string) =>
  states.filter((s) => s.holder === 'anomaly' && s.target.keyHash === keyHash && s.status !== 'released' && !s.hold);

export interface ReleaseResult {
  keyHash: string;
  /** Each rule hold released: the rule, the lever, and whether the key is running again or another holder keeps it off. */
  released: { ruleId: string; lever: Target['kind']; status: 'released' | 'releasing' | 'held_by_budget' }[];
}

/**
 * POST /keys/{hash}/release: lets go of every spend-anomaly hold of the key (recorded as the user's). The reporter's
 * block ends at once; a key switch is turned back on by the connection's next sync (queued now), unless a budget
 * holds the key too. 404 for a key not in the account; 409 `not-stopped` when no rule holds it.
 */
export async function releaseKey(accountId: string, keyHash: string, userId: string, now = new Date()): Promise<ReleaseResult> {
  if (!/^[0-9a-f]{64}$/.test(keyHash) || !(await getProviderKey(accountId, keyHash))) throw new NotFound('The key does not exist.');
  const states = await listStates(accountId);
  const holds = holdsOf(states, keyHash);
  if (holds.length === 0) throw new Conflict('No spend-anomaly rule holds this key stopped: there is nothing to release.', 'not-stopped');
  const released: ReleaseResult['released'] = [];
  const syncs = new Set<string>();
  for (const s of holds) {
    const other = heldByOther(states, s);
    const at = now.toISOString();
    if (s.target.kind === 'reporter' || s.status === 'failed' || other) {
      // Nothing at a provider to turn back on (the reporter's block is this state; a failed stop never took; a budget
      // keeps the key off): released now.
      const done = nextState({ target: s.target }, s, { status: 'released', want: 'off', hold: true, releasedBy: userId, since: at, detail: offText(s.target) });
      if (!(await writeState(accountId, s, done))) throw new Conflict('The key was changed by another request meanwhile. Read it again and retry.', 'edit-conflict');
      if (s.target.kind === 'reporter') await record(accountId, s.budgetId, s.target, false, 'released', userId, 'ok', offText(s.target), now);
      released.push({ ruleId: s.budgetId, lever: s.target.kind, status: other ? 'held_by_budget' : 'released' });
      continue;
    }
    const marked = nextState({ target: s.target }, s, { hold: true, releasedBy: userId });
    if (!(await writeState(accountId, s, marked))) throw new Conflict('The key was changed by another request meanwhile. Read it again and retry.', 'edit-conflict');
    if (s.target.connectionId) syncs.add(s.target.connectionId);
    released.push({ ruleId: s.budgetId, lever: s.target.kind, status: 'releasing' });
  }
  if (syncs.size > 0) await queueSyncs([...syncs].map((connectionId) => ({ accountId, connectionId })));
  return { keyHash, released };
}

/**
 * In a connection's sync: its keys' anomaly holds a person released are switched back on (recorded as theirs),
 * unless a budget holds the key too (then only the rule's hold ends); stops that failed are tried again.
 */
export async function settleAnomalyHolds(accountId: string, conn: Connection, lever: Lever, now: Date): Promise<void> {
  const states = await listStates(accountId);
  const staleBefore = new Date(now.getTime() - ACTING_STALE_MS).toISOString();
  const mine = states.filter((s) => s.holder === 'anomaly' && s.target.kind === 'key' && s.target.connectionId === conn.id && s.hold && s.status !== 'released');
  for (const s of mine) {
    if (s.status === 'acting' && s.since >= staleBefore) continue;
    if (heldByOther(states, s)) {
      await writeState(accountId, s, nextState({ target: s.target }, s, { status: 'released', want: 'off', since: now.toISOString(), detail: offText(s.target) }));
      continue;
    }
    const act: Act = { budgetId: s.budgetId, target: s.target, op: 'start', reason: 'released', state: s };
    const outcome = await pullLever(accountId, act, s, lever, { now, month: s.period });
    if (outcome) await record(accountId, s.budgetId, s.target, false, 'released', s.releasedBy ?? 'burnrate', outcome.result, outcome.detail, now);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The incident: a key's last day against its usual rate

export type HoldStatus = 'stopped' | 'stopping' | 'releasing' | 'released' | 'failed';

/**
 * GET /keys/{hash}/incident: what the spend-anomaly rule sees of the key now (its rate, its baseline, its spend hour by
 * hour over the last 24 hours and the current one) and the rules' holds of it. One GetItem, one BatchGetItem, two Queries.
 */
export async function keyIncident(accountId: string, keyHash: string, now = new Date()) {
  const item = /^[0-9a-f]{64}$/.test(keyHash) ? await getProviderKey(accountId, keyHash) : undefined;
  if (!item) throw new NotFound('The key does not exist.');
  const today = isoDate(now);
  const [dayItems, states, rules] = await Promise.all([
    batchGet(baselineDays(today).map((d) => keys.spendDayKey(accountId, d, keyHash))),
    listStates(accountId, false),
    listRules(accountId),
  ]);
  const firstSeen = typeof item.firstSeenAt === 'string' ? item.firstSeenAt.slice(0, 10) : undefined;
  const baseline = baselineOf(new Map(dayItems.map((d) => [d.date as string, micros(d.costMicros)])), today, firstSeen);
  const names = new Map(rules.map((r) => [r.id, r.name]));
  const holds = states
    .filter((s) => s.holder === 'anomaly' && s.target.keyHash === keyHash)
    .sort((a, b) => (a.since < b.since ? 1 : -1))
    .map((s) => {
      const status: HoldStatus =
        s.status === 'released' ? 'released' : s.status === 'failed' ? 'failed' : s.hold ? 'releasing' : s.status === 'acting' ? 'stopping' : 'stopped';
      return { ruleId: s.budgetId, ruleName: names.get(s.budgetId) ?? null, lever: s.target.kind, status, since: s.since, releasedBy: s.releasedBy ?? null, detail: s.detail };
    });
  const usd = (m: bigint) => microsToUsd(m);
  return {
    keyHash,
    name: nameOf(item),
    provider: String(item.provider ?? ''),
    ratePerHour: usd(rateMicros(item, now)),
    baselinePerHour: usd(baselineMicrosPerHour(baseline)),
    baselineDays: baseline.days,
    hours: lastDayByHour(item, now).map((h) => ({ hour: `${h.hour}:00:00Z`, cost: usd(h.micros) })),
    /** Whether a rule holds the key stopped now (a person can release it). */
    stopped: holds.some((h) => h.status === 'stopped' || h.status === 'stopping'),
    holds,
  };
}
