/**
 * After each ingestion write: compare the account's active budgets and rules with the new totals and create
 * each alert exactly once per threshold and period. `planAlerts` is pure; `evaluateSpend` does the I/O:
 * one Query (budgets + rules), one BatchGetItem (spend), one BatchGetItem (already fired?), then a conditional
 * transaction per NEW alert only — and hands the created alerts to delivery, which never runs on this path.
 */
import { newId } from '#shared/ids.ts';
import { usdToMicros } from '#shared/pricing/money.ts';
import { dayWords, momentWords, monthWords, moneyWords } from '#shared/alerting/words.ts';
import { addDays } from '#shared/time/periods.ts';
import { alreadyFired, fireAlert, firedPk, loadAlertConfig, type FiredKey } from '#shared/db/alerts.ts';
import { keyItemForecast, loadSpend, type SpendSnapshot } from '#shared/alerting/spend.ts';
import { listProviderKeys } from '#shared/db/discovered-keys.ts';
import { rollingNames } from '#shared/db/rolling.ts';
import { isoDate, isoMonth } from '#shared/time/periods.ts';
import { reachesThreshold, type Alert, type AlertType, type Budget, type Channel, type Rule } from '#shared/alerting/model.ts';
import { publishAlerts } from '#shared/alerting/queue.ts';
import { keyDisplayName } from '#shared/usage/key-name.ts';

export interface Discovered {
  keyHash: string;
  provider: string;
  /** The provider's name of a key a connection found. */
  name?: string;
  hint?: string;
}

export interface Candidate {
  fired: FiredKey;
  alert: Alert;
}

/** Each amount once, in dollars as the dashboard writes them (the exact amounts are the alert's fields). */
const usd = moneyWords;
/** How many discovered keys a `new_key` alert's message names (`keyHashes` lists them all). */
const NEW_KEYS_LISTED = 20;
/** `key "Prod bot"`: the key by label, else hint, else hash prefix (shared/usage/key-name.ts), quoted as user text. */
const quotedKey = (name: string) => `key "${name}"`;

export function makeAlert(
  accountId: string,
  now: Date,
  fields: { type: AlertType; ruleId?: string; budgetId?: string; keyHash?: string | null; keyHashes?: string[]; keyName?: string; title: string; message: string; period: string; thresholdMicros: number | null; observedMicros: number | null; channels: Channel[]; webhookUrl?: string; slackWebhookUrl?: string },
): Alert {
  return {
    id: newId('alert'),
    accountId,
    type: fields.type,
    status: 'triggered',
    ruleId: fields.ruleId ?? null,
    budgetId: fields.budgetId ?? null,
    keyHash: fields.keyHash ?? null,
    keyHashes: fields.keyHashes ?? (fields.keyHash ? [fields.keyHash] : []),
    ...(fields.keyName !== undefined ? { keyName: fields.keyName } : {}),
    title: fields.title,
    message: fields.message,
    period: fields.period,
    thresholdMicros: fields.thresholdMicros,
    observedMicros: fields.observedMicros,
    deliveries: fields.channels.map((channel) => ({ channel, status: 'pending', attempts: 0 })),
    ...(fields.webhookUrl ? { webhookUrl: fields.webhookUrl } : {}),
    ...(fields.slackWebhookUrl ? { slackWebhookUrl: fields.slackWebhookUrl } : {}),
    triggeredAt: now.toISOString(),
    acknowledgedAt: null,
    acknowledgedBy: null,
  };
}

/** A PROJECT budget's figures: its project's keys' month-to-date and forecast (never the account's), and its name. */
export type ProjectFigures = ReadonlyMap<string, { observed: number; forecast: number; name: string }>;

function budgetCandidates(accountId: string, b: Budget, spend: SpendSnapshot, now: Date, projects: ProjectFigures): Candidate[] {
  const project = b.scope === 'PROJECT' ? (projects.get(b.id) ?? { observed: 0, forecast: 0, name: b.projectId ?? 'project' }) : undefined;
  const tag = b.scope === 'TAG' && b.tag ? b.tag : undefined;
  const observed = project ? project.observed : b.scope === 'KEY' && b.keyHash ? spend.keyMonth(b.keyHash) : tag ? spend.tagMonth(tag) : spend.accountMonth();
  const keyName = b.scope === 'KEY' && b.keyHash ? spend.keyName(b.keyHash) : undefined;
  const tagWords = tag ? `${tag.name}: ${tag.value}` : undefined;
  const name = b.name ?? (keyName !== undefined ? `key ${keyName}` : project ? `project ${project.name}` : tagWords !== undefined ? `tag ${tagWords}` : 'account');
  const where = keyName !== undefined ? quotedKey(keyName) : project ? `project "${project.name}"` : tagWords !== undefined ? `the keys tagged ${tagWords}` : 'the whole account';
  const about = { budgetId: b.id, keyHash: b.keyHash, ...(keyName !== undefined ? { keyName } : {}) };
  const out: Candidate[] = [];
  if (reachesThreshold(observed, b.monthlyLimitMicros, b.alertThreshold)) {
    const thresholdMicros = Math.ceil((b.monthlyLimitMicros * b.alertThreshold) / 100);
    out.push({
      fired: { source: b.id, level: 'threshold', period: spend.month },
      alert: makeAlert(accountId, now, {
        type: 'budget_threshold',
        ...about,
        title: `Budget "${name}" reached ${b.alertThreshold}% of ${usd(b.monthlyLimitMicros)}`,
        message: `Month-to-date spend of ${where} is ${usd(observed)} in ${monthWords(spend.month)}: at or past the alert threshold of ${b.alertThreshold}% (${usd(thresholdMicros)}) of the monthly budget of ${usd(b.monthlyLimitMicros)}.`,
        period: spend.month,
        thresholdMicros,
        observedMicros: observed,
        channels: ['email'],
      }),
    });
  }
  if (observed >= b.monthlyLimitMicros) {
    out.push({
      fired: { source: b.id, level: 'exceeded', period: spend.month },
      alert: makeAlert(accountId, now, {
        type: 'budget_exceeded',
        ...about,
        title: `Budget "${name}" exceeded: ${usd(observed)} of ${usd(b.monthlyLimitMicros)}`,
        message: `Month-to-date spend of ${where} is ${usd(observed)} in ${monthWords(spend.month)}: at or past the monthly budget of ${usd(b.monthlyLimitMicros)}.`,
        period: spend.month,
        thresholdMicros: b.monthlyLimitMicros,
        observedMicros: observed,
        channels: ['email'],
      }),
    });
  }
  if (b.alertOnForecast && observed < b.monthlyLimitMicros) {
    const forecast = project ? project.forecast : tag ? observed : b.scope === 'KEY' && b.keyHash ? spend.keyForecast(b.keyHash) : spend.accountForecast();
    if (forecast >= b.monthlyLimitMicros) {
      out.push({
        fired: { source: b.id, level: 'forecast', period: spend.month },
        alert: makeAlert(accountId, now, {
          type: 'budget_forecast',
          ...about,
          title: `Budget "${name}" is forecast to reach ${usd(b.monthlyLimitMicros)} this month`,
          message: `Spend of ${where} is forecast at ${usd(forecast)} by the end of ${monthWords(spend.month)} (month-to-date ${usd(observed)} plus the average of the last 7 complete days for each day left): at or past the monthly budget of ${usd(b.monthlyLimitMicros)}.`,
          period: spend.month,
          thresholdMicros: b.monthlyLimitMicros,
          observedMicros: forecast,
          channels: ['email'],
        }),
      });
    }
  }
  return out;
}

function ruleCandidates(accountId: string, r: Rule, spend: SpendSnapshot, discovered: Discovered[], now: Date): Candidate[] {
  const { webhookUrl, slackWebhookUrl } = r.config as { webhookUrl?: string; slackWebhookUrl?: string };
  const base = { ruleId: r.id, channels: r.channels, ...(webhookUrl ? { webhookUrl } : {}), ...(slackWebhookUrl ? { slackWebhookUrl } : {}) };
  if (r.type === 'cost_threshold') {
    const c = r.config as { threshold: number; period: 'daily' | 'weekly' | 'monthly'; keyHash?: string };
    const thresholdMicros = usdToMicros(c.threshold);
    const [period, observed, label] =
      c.period === 'daily'
        ? [spend.today, c.keyHash ? spend.keyToday(c.keyHash) : spend.accountDay(spend.today), `on ${dayWords(spend.today)}`]
        : c.period === 'weekly'
          ? [spend.week, c.keyHash ? spend.keyWeek(c.keyHash) : spend.accountWeek(), `in the week from ${dayWords(spend.week)}`]
          : [spend.month, c.keyHash ? spend.keyMonth(c.keyHash) : spend.accountMonth(), `in ${monthWords(spend.month)}`];
    if (observed < thresholdMicros) return [];
    const keyName = c.keyHash ? spend.keyName(c.keyHash) : undefined;
    const where = keyName !== undefined ? `of ${quotedKey(keyName)}` : 'of the account';
    return [
      {
        fired: { source: r.id, level: 'threshold', period },
        alert: makeAlert(accountId, now, {
          ...base,
          type: 'cost_threshold',
          keyHash: c.keyHash ?? null,
          ...(keyName !== undefined ? { keyName } : {}),
          title: `${r.name}: ${c.period} spend ${keyName !== undefined ? `${where} ` : ''}reached ${usd(thresholdMicros)}`,
          message: `Spend ${where} ${label} (UTC) is ${usd(observed)}, at or above the rule "${r.name}" threshold of ${usd(thresholdMicros)}.`,
          period,
          thresholdMicros,
          observedMicros: observed,
        }),
      },
    ];
  }
  if (r.type === 'spend_spike') {
    const c = r.config as { multiplier: number; minSpend: number };
    const today = spend.accountDay(spend.today);
    const before = Array.from({ length: 7 }, (_, i) => spend.accountDay(addDays(spend.today, -(i + 1)))).reduce((a, b) => a + b, 0);
    const minMicros = usdToMicros(c.minSpend);
    // today ≥ multiplier × (before / 7), compared without dividing
    if (today <= 0 || today < minMicros || today * 7 < c.multiplier * before) return [];
    const thresholdMicros = Math.max(minMicros, Math.ceil((c.multiplier * before) / 7));
    return [
      {
        fired: { source: r.id, level: 'spike', period: spend.today },
        alert: makeAlert(accountId, now, {
          ...base,
          type: 'spend_spike',
          title: `${r.name}: spend spike on ${dayWords(spend.today)}`,
          message: `Spend on ${dayWords(spend.today)} (UTC) is ${usd(today)}, at least ${c.multiplier}× the average of the 7 days before (${usd(Math.round(before / 7))}) and at least ${usd(minMicros)}.`,
          period: spend.today,
          thresholdMicros,
          observedMicros: today,
        }),
      },
    ];
  }
  // spend_anomaly is per key, evaluated where spend lands (shared/anomaly/).
  if (r.type === 'spend_anomaly') return [];
  // new_key: ONE alert per rule for everything this ingest discovered (its first key names it: each key is
  // discovered exactly once, so the fired item of a first key is never taken by another ingest).
  const [first] = discovered;
  if (!first) return [];
  // A key discovered by this ingest has no label yet: its hint, else its hash prefix.
  const nameOf = (k: Discovered) => keyDisplayName({ hash: k.keyHash, name: k.name ?? null, hint: k.hint ?? null });
  const listed = discovered.slice(0, NEW_KEYS_LISTED).map((k) => `${k.provider} ${quotedKey(nameOf(k))}`);
  const more = discovered.length - listed.length;
  return [
    {
      fired: { source: r.id, level: 'new_key', period: first.keyHash },
      alert: makeAlert(accountId, now, {
        ...base,
        type: 'new_key',
        keyHash: first.keyHash,
        keyHashes: discovered.map((k) => k.keyHash),
        ...(discovered.length === 1 ? { keyName: nameOf(first) } : {}),
        title:
          discovered.length === 1
            ? `${r.name}: new ${first.provider} ${quotedKey(nameOf(first))}`
            : `${r.name}: ${discovered.length} new keys discovered`,
        message:
          discovered.length === 1
            ? `A new ${first.provider} key was discovered at ${momentWords(now)} (UTC): ${quotedKey(nameOf(first))}.`
            : `${discovered.length} new keys were discovered at ${momentWords(now)} (UTC): ${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}.`,
        period: spend.today,
        thresholdMicros: null,
        observedMicros: null,
      }),
    },
  ];
}

/** Every alert the current figures call for (fired or not yet). Pure. */
export function planAlerts(
  accountId: string,
  config: { budgets: Budget[]; rules: Rule[] },
  spend: SpendSnapshot,
  discovered: Discovered[],
  now: Date,
  projects: ProjectFigures = new Map(),
): Candidate[] {
  return [
    ...config.budgets.flatMap((b) => budgetCandidates(accountId, b, spend, now, projects)),
    ...config.rules.filter((r) => r.isActive).flatMap((r) => ruleCandidates(accountId, r, spend, discovered, now)),
  ];
}

/** Keys whose spend the config needs: month/today from key items; weeks from their day items. */
function spendNeeds(config: { budgets: Budget[]; rules: Rule[] }) {
  const keyHashes = new Set<string>();
  const keyWeeks = new Set<string>();
  for (const b of config.budgets) if (b.scope === 'KEY' && b.keyHash) keyHashes.add(b.keyHash);
  const tags = config.budgets.some((b) => b.scope === 'TAG');
  for (const r of config.rules) {
    if (!r.isActive || r.type !== 'cost_threshold') continue;
    const c = r.config as { period: string; keyHash?: string };
    if (!c.keyHash) continue;
    // Every key a rule names is read (its item carries the label and hint the alert text names it by).
    keyHashes.add(c.keyHash);
    if (c.period === 'weekly') keyWeeks.add(c.keyHash);
  }
  return { keyHashes, keyWeeks, tags };
}

/** The figures of the PROJECT budgets: ONE Query of the account's keys, only when there is such a budget. */
async function projectFigures(accountId: string, budgets: Budget[], now: Date): Promise<ProjectFigures> {
  const projectBudgets = budgets.filter((b) => b.scope === 'PROJECT');
  if (projectBudgets.length === 0) return new Map();
  const items = await listProviderKeys(accountId);
  const monthCost = rollingNames(isoDate(now), isoMonth(now)).monthCost;
  const out = new Map<string, { observed: number; forecast: number; name: string }>();
  for (const b of projectBudgets) {
    const mine = items.filter((i) => i.connectionId === b.connectionId && (i.project as { id?: unknown } | null | undefined)?.id === b.projectId);
    const observed = mine.reduce((n, i) => n + Number(i[monthCost] ?? 0), 0);
    const forecast = mine.reduce((n, i) => n + keyItemForecast(i, now), 0);
    const name = (mine.map((i) => (i.project as { name?: string } | null | undefined)?.name).find((x) => typeof x === 'string') ?? b.projectId ?? 'project') as string;
    out.set(b.id, { observed, forecast: Math.max(observed, forecast), name });
  }
  return out;
}

/** Returns the alerts created; throws what DynamoDB throws (a sync's evaluator retries its message). */
export async function evaluateSpend(accountId: string, discovered: Discovered[], now = new Date(), known?: { budgets: Budget[]; rules: Rule[] }): Promise<Alert[]> {
  const config = known ?? (await loadAlertConfig(accountId));
  const active = { budgets: config.budgets, rules: config.rules.filter((r) => r.isActive) };
  if (active.budgets.length === 0 && active.rules.length === 0) return [];
  const [spend, projects] = await Promise.all([loadSpend(accountId, now, spendNeeds(active)), projectFigures(accountId, active.budgets, now)]);
  const candidates = planAlerts(accountId, active, spend, discovered, now, projects);
  const fired = await alreadyFired(accountId, candidates.map((c) => c.fired));
  const fresh = candidates.filter((c) => !fired.has(firedPk(accountId, c.fired)));
  const created = (await Promise.all(fresh.map(async (c) => ((await fireAlert(c.alert, c.fired)) ? c.alert : undefined)))).filter(
    (a): a is Alert => a !== undefined,
  );
  if (created.length > 0) await publishAlerts(created.map((a) => ({ accountId, alertId: a.id })));
  return created;
}
