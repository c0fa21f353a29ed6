/**
 * The spend-anomaly rule where spend lands (docs/features/budgets-and-alerts.md, "Runaway and leaked keys"): after an ingest (the keys it
 * wrote) and after a sync (the keys whose today figure grew), each such key's rate of the last hour is compared with
 * its baseline (rate.ts). A key past an active rule raises `spend_anomaly` once per key and UTC day (the fired item),
 * and with `action: "stop"` its lever is pulled at once: the reporter's block (here, any caller), the Anthropic and
 * OpenRouter key switches (in the sync worker, the one place their admin key is open). An OpenAI key can't be paused
 * alone: alert only, saying so.
 *
 * A stop is held as an enforcement state of (rule, key) with `holder: "anomaly"` (shared/db/enforcement-model.ts): taken
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
import { providerName } from '#shared/providers/names.ts';
import { queueSyncs } from '#shared/connections/queue.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { batchGet, type Item } from '#shared/db/client.ts';
import { getConnection, type Connection } from '#shared/db/connections.ts';
import { getProviderKey } from '#shared/db/discovered-keys.ts';
import { listEnforcement, putActions, putRelease, writeState, type EnforcementItems } from '#shared/db/enforcement.ts';
import { keys } from '#shared/db/keys.ts';
import { listRules } from '#shared/db/rules.ts';
import type { Lever } from '#shared/enforcement/levers.ts';
import { applied } from '#shared/enforcement/decide.ts';
import { holderKey, type Act, type ActionKind, type Hold, type LeverState, type Target } from '#shared/db/enforcement-model.ts';
import { leverOffer } from '#shared/enforcement/offers.ts';
import { needsLever, takeAct } from '#shared/enforcement/pull.ts';
import { enforceWithoutKeys } from '#shared/enforcement/service.ts';
import { onText } from '#shared/enforcement/words.ts';
import { Conflict, NotFound } from '#shared/http/errors.ts';
import { newId } from '#shared/ids.ts';
import { keyDisplayName } from '#shared/usage/key-name.ts';
import { publishAlerts } from '#shared/alerting/queue.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { isoDate, isoMonth } from '#shared/time/periods.ts';

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

/** The act in the actions log, under the rule as its holder (named, as a budget's acts are). */
async function record(accountId: string, rule: Rule, t: Target, on: boolean, result: 'ok' | 'failed', detail: string, now: Date) {
  await putActions(accountId, [
    {
      id: newId('action'),
      budgetId: null,
      holder: { kind: 'anomaly', id: rule.id },
      holderName: rule.name,
      targetName: t.name || null,
      kind: actionKind(t, on),
      provider: t.provider,
      keyHash: t.keyHash,
      projectId: t.projectId,
      reason: 'anomaly',
      actor: 'burnrate',
      result,
      detail,
      at: now.toISOString(),
    },
  ]);
}

/**
 * The release of one rule's hold of one key (a person's `POST /keys/{hash}/release`): a Release of the holder
 * `anomaly:<ruleId>#<keyHash>`, so releasing one key leaves the rule's holds of other keys alone
 * (shared/enforcement/service.ts `claimsOf` reads it).
 */
export const anomalyReleaseHolder = (ruleId: string, keyHash: string) => ({ kind: 'anomaly' as const, id: `${ruleId}#${keyHash}` });

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

/**
 * Pulls the rule's lever for a key past it and says what was done. The rule becomes a holder of the key's lever state
 * (shared/db/enforcement-model.ts): the switch is pulled when it is the first holder (a budget holding it already: the
 * hold is added to the state only), by one conditional write of the state (racing ingests make one act).
 */
async function stopKey(accountId: string, t: Trigger, enforcement: EnforcementItems, opts: AnomalyOptions): Promise<Done> {
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
          ? "OpenAI can't pause a single API key, so Burnrate did not stop it: revoke or rotate the key at OpenAI (platform.openai.com → API keys) if it leaked, or give its project a stop budget (a hard spend limit OpenAI enforces)."
          : `${provider} has no switch Burnrate can pull for this key (or the key is gone there): revoke or rotate it at ${provider} if it leaked.`,
    };
  }
  const keyHash = item.keyHash as string;
  const releasedToday = enforcement.releases.some((r) => r.holder.kind === 'anomaly' && r.holder.id === anomalyReleaseHolder(rule.id, keyHash).id && r.at.slice(0, 10) === day);
  const state = enforcement.states.find((s) => s.target.id === target.id);
  const staleBefore = new Date(now.getTime() - ACTING_STALE_MS).toISOString();
  if (state?.holds.some((h) => h.kind === 'anomaly' && h.id === rule.id) && !releasedToday) return { kind: 'stopped', detail: state.detail || onText(target) };
  if (releasedToday) return { kind: 'released-today' };
  if (state?.status === 'acting' && state.since >= staleBefore) return { kind: 'stopped', detail: onText(target) }; // a racing act
  if (target.kind === 'key') {
    const conn = opts.connection?.id === target.connectionId ? opts.connection : target.connectionId ? await getConnection(accountId, target.connectionId) : undefined;
    if (!conn || conn.status === 'paused' || conn.enforcement !== 'on') {
      const why = !conn
        ? `its ${provider} connection is gone`
        : conn.status === 'paused'
          ? `its ${provider} connection is paused`
          : `enforcement is off on its ${provider} connection (turn it on with an admin key that may write, and Burnrate stops keys itself)`;
      return { kind: 'no-lever', why: `Burnrate could not stop it: ${why}. Set it inactive at ${provider} yourself if it should not spend.` };
    }
  }
  const hold: Hold = { kind: 'anomaly', id: rule.id, name: rule.name, since: now.toISOString(), reached: true };
  const holds = [...(state?.holds ?? []).filter((h) => !(h.kind === 'anomaly' && h.id === rule.id)), hold].sort((a, b) => holderKey(a).localeCompare(holderKey(b)));
  const act: Act = { target, op: applied(state, staleBefore) ? 'hold' : 'stop', reason: 'anomaly', holds, added: [{ hold, reason: 'anomaly' }], removed: [], changed: [], state };
  if (needsLever(act) && (!opts.lever || opts.connection?.id !== target.connectionId)) {
    // Not in this connection's sync (no admin key here): its sync is queued; the rule stops the key when it sees the rate.
    await queueSyncs([{ accountId, connectionId: target.connectionId!, provider: target.provider as never }]);
    return { kind: 'failed', detail: `the key's connection was not syncing here; its sync is queued` };
  }
  const outcome = await takeAct(act, target.kind === 'reporter' ? undefined : opts.lever, { write: (prev, next) => writeState(accountId, prev, next) }, { now, month: isoMonth(now) });
  if (!outcome) return { kind: 'stopped', detail: onText(target) }; // another writer took it first
  await record(accountId, rule, target, true, outcome.result, outcome.detail, now);
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
 * Returns the alerts created. Throws what DynamoDB throws (an ingest's evaluation goes on with the budgets' pass, then throws it: shared/ingest/after-ingest.ts).
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
  const enforcement: EnforcementItems = triggers.some((t) => configOf(t.rule).action === 'stop') ? await listEnforcement(accountId) : { states: [], releases: [] };
  const fired = await alreadyFired(accountId, triggers.map(firedOf));
  const created: Alert[] = [];
  for (const t of triggers) {
    const c = configOf(t.rule);
    const already = fired.has(firedPk(accountId, firedOf(t)));
    // A stop is pulled even when today's alert fired already (a released key is not stopped again today: its state says so).
    const done: Done = c.action === 'stop' ? await stopKey(accountId, t, enforcement, opts) : { kind: 'notify' };
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

// ---------------------------------------------------------------------------------------------------------------
// Release by a person

/** The key's lever states (its switch, its reporter block) and the anomaly holds on them. */
function anomalyHoldsOf(states: readonly LeverState[], keyHash: string) {
  const ids = new Set([`key:${keyHash}`, `reporter:${keyHash}`]);
  return states.filter((s: LeverState) => ids.has(s.target.id)).flatMap((s: LeverState) => s.holds.filter((h: Hold) => h.kind === 'anomaly').map((h) => ({ s, h })));
}

export interface ReleaseResult {
  keyHash: string;
  /** Each rule hold released: the rule, the lever, and whether the key runs again, is being switched on, or a budget keeps it off. */
  released: { ruleId: string; lever: Target['kind']; status: 'released' | 'releasing' | 'held_by_budget' }[];
}

/**
 * POST /keys/{hash}/release: lets go of every spend-anomaly hold of the key (a Release each, by the user; the act
 * recorded as theirs). The reporter's block ends at once; a key switch is turned back on by the connection's next
 * sync (queued now), unless a budget holds the key too (then only the rule's hold ends). 404 for a key not in the
 * account; 409 `not-stopped` when no rule holds it (or it was released already).
 */
export async function releaseKey(accountId: string, keyHash: string, userId: string, now = new Date()): Promise<ReleaseResult> {
  if (!/^[0-9a-f]{64}$/.test(keyHash) || !(await getProviderKey(accountId, keyHash))) throw new NotFound('The key does not exist.');
  const { states, releases } = await listEnforcement(accountId);
  const held = anomalyHoldsOf(states, keyHash).filter(({ h }) => !releases.some((r) => r.holder.id === anomalyReleaseHolder(h.id, keyHash).id && r.at >= h.since));
  if (held.length === 0) throw new Conflict('No spend-anomaly rule holds this key stopped: there is nothing to release.', 'not-stopped');
  const at = now.toISOString();
  await Promise.all(held.map(({ h }) => putRelease(accountId, { holder: anomalyReleaseHolder(h.id, keyHash), period: isoMonth(now), by: userId, at })));
  // The reporter's block and state-only changes now; a key switch by its connection's sync, queued by this pass.
  await enforceWithoutKeys(accountId, now);
  return {
    keyHash,
    released: held.map(({ s, h }) => ({
      ruleId: h.id,
      lever: s.target.kind,
      status: s.target.kind === 'reporter' ? 'released' : s.holds.some((o) => o.kind === 'budget') ? 'held_by_budget' : 'releasing',
    })),
  };
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
  const [dayItems, enforcement, rules] = await Promise.all([
    batchGet(baselineDays(today).map((d) => keys.spendDayKey(accountId, d, keyHash))),
    listEnforcement(accountId, false),
    listRules(accountId),
  ]);
  const firstSeen = typeof item.firstSeenAt === 'string' ? item.firstSeenAt.slice(0, 10) : undefined;
  const baseline = baselineOf(new Map(dayItems.map((d) => [d.date as string, micros(d.costMicros)])), today, firstSeen);
  const names = new Map(rules.map((r) => [r.id, r.name]));
  const releaseOf = (ruleId: string) => enforcement.releases.find((r) => r.holder.kind === 'anomaly' && r.holder.id === anomalyReleaseHolder(ruleId, keyHash).id);
  const current = anomalyHoldsOf(enforcement.states, keyHash).map(({ s, h }) => {
    const release = releaseOf(h.id);
    const releasing = release !== undefined && release.at >= h.since;
    const status: HoldStatus = s.status === 'failed' && s.want === 'on' ? 'failed' : releasing ? 'releasing' : s.status === 'acting' ? 'stopping' : 'stopped';
    return { ruleId: h.id, ruleName: names.get(h.id) ?? h.name, lever: s.target.kind, status, since: h.since, releasedBy: releasing ? release.by : null, detail: s.detail };
  });
  // Holds let go: the rule's latest release of this key (today's incident view still says who released it).
  const past = rules
    .filter((r) => !current.some((c) => c.ruleId === r.id))
    .flatMap((r) => {
      const release = releaseOf(r.id);
      return release && release.at.slice(0, 10) === today ? [{ ruleId: r.id, ruleName: r.name, lever: (item.source === 'connection' ? 'key' : 'reporter') as Target['kind'], status: 'released' as HoldStatus, since: release.at, releasedBy: release.by, detail: '' }] : [];
    });
  const holds = [...current, ...past];
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
    stopped: holds.some((h) => h.status === 'stopped' || h.status === 'stopping' || h.status === 'failed'),
    holds,
  };
}
