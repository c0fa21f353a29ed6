/**
 * The stored shapes of budgets, alert rules and alerts, and their API views. Shared by the CRUD services,
 * the evaluation after ingestion (shared/alerting/evaluate.ts) and the notifier (shared/notify/).
 * Money is stored in integer micro-dollars (`*Micros`); the API speaks dollars.
 */
import { microsToUsd } from '#shared/pricing/money.ts';
import { keyDisplayName } from '#shared/keys/name.ts';

export type BudgetScope = 'ACCOUNT' | 'KEY' | 'PROJECT';
export type BudgetAction = 'notify' | 'stop';

export interface Budget {
  id: string;
  name: string | null;
  monthlyLimitMicros: number;
  /** Percent of the limit, at most 2 decimals (API `alertThreshold`). */
  alertThreshold: number;
  scope: BudgetScope;
  keyHash: string | null;
  /** PROJECT: the connection and its project (OpenAI project, Anthropic workspace); null otherwise. */
  connectionId?: string | null;
  projectId?: string | null;
  /** `stop`: at the limit, the levers of what it covers are pulled (shared/enforcement/). Absent: `notify`. */
  action?: BudgetAction;
  /** Alert (`budget_forecast`, once a month) when the month-end forecast reaches the limit while spend is below it. */
  alertOnForecast: boolean;
  createdAt: string;
  updatedAt: string;
}

export type RuleType = 'cost_threshold' | 'new_key' | 'spend_spike' | 'spend_anomaly';
export type Channel = 'email' | 'webhook' | 'slack';
export type Period = 'daily' | 'weekly' | 'monthly';

/** Rule config as the API takes it (dollars as JSON numbers, ≤ 6 decimals). `webhookUrl` is required iff channels has webhook. */
export type RuleConfig =
  | { threshold: number; period: Period; keyHash?: string; webhookUrl?: string; slackWebhookUrl?: string } // cost_threshold
  | { webhookUrl?: string; slackWebhookUrl?: string } // new_key
  | { multiplier: number; minSpend: number; webhookUrl?: string; slackWebhookUrl?: string } // spend_spike
  | SpendAnomalyRuleConfig;

export interface SpendAnomalyRuleConfig {
  minUsdPerHour: number;
  multiplier: number;
  action: 'notify' | 'stop';
  webhookUrl?: string;
  slackWebhookUrl?: string;
}

export interface Rule {
  id: string;
  type: RuleType;
  name: string;
  config: RuleConfig;
  channels: Channel[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  lastTriggeredAt: string | null;
}

export type AlertType =
  | 'cost_threshold'
  | 'new_key'
  | 'spend_spike'
  | 'budget_threshold'
  | 'budget_exceeded'
  | 'budget_forecast'
  | 'plan_limit'
  | 'connection_error'
  | 'budget_stopped'
  | 'budget_released'
  | 'enforcement_failed'
  | 'unpriced_model'
  | 'spend_anomaly';
const ALERT_TYPE_SET: Record<AlertType, true> = {
  cost_threshold: true,
  new_key: true,
  spend_spike: true,
  budget_threshold: true,
  budget_exceeded: true,
  budget_forecast: true,
  plan_limit: true,
  connection_error: true,
  unpriced_model: true,
  budget_stopped: true,
  budget_released: true,
  enforcement_failed: true,
  spend_anomaly: true,
};
/** Every alert type (a compile error when AlertType gains one this list lacks). */
export const ALERT_TYPES = Object.keys(ALERT_TYPE_SET) as [AlertType, ...AlertType[]];
export type AlertStatus = 'triggered' | 'acknowledged';

/**
 * `sending` is internal (a notifier claimed the channel); the API shows it as `pending`. `suppressed`: settled
 * without sending, on purpose — past an hourly cap, or (e-mail) no user with a verified address who wants alert
 * e-mail (shared/notify/caps.ts, shared/notify/email.ts).
 */
export type DeliveryStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'suppressed';

export interface Delivery {
  channel: Channel;
  status: DeliveryStatus;
  attempts: number;
  /** When a notifier claimed it (`sending`); a claim older than the lease may be taken over. */
  claimedAt?: string;
  lastError?: string;
  sentAt?: string;
  /** Why a `suppressed` delivery was not sent (internal). */
  suppressedBy?: 'cap' | 'no-recipient';
  /** Before issue 19: a URL channel's slot taken once per delivery. Every attempt counts now; only removed (deliver.ts). */
  capCounted?: boolean;
}

export interface Alert {
  id: string;
  accountId: string;
  type: AlertType;
  status: AlertStatus;
  ruleId: string | null;
  budgetId: string | null;
  keyHash: string | null;
  /**
   * The keys the alert is about: every key one ingest discovered for `new_key` (`keyHash` is the first); the one
   * key `keyHash` names for the other types, or none.
   */
  keyHashes: string[];
  /**
   * How the texts named the alert's one key when it fired (shared/keys/name.ts: label, else hint, else hash
   * prefix); absent when the alert names no key or several, and on alerts stored before it existed.
   */
  keyName?: string;
  title: string;
  message: string;
  /** The period the alert belongs to: `2026-11-21` (day), `2026-W47`-style week start `2026-11-16`, `2026-11` (month). */
  period: string;
  thresholdMicros: number | null;
  observedMicros: number | null;
  deliveries: Delivery[];
  /** The provider connection a `connection_error` alert is about. */
  connectionId?: string;
  /** E-mail only to the account's admins (`connection_error`: only they can fix a connection). */
  adminsOnly?: true;
  /** Snapshot of the rule's webhook URL when the alert fired (the notifier posts there). */
  webhookUrl?: string;
  /** Snapshot of the rule's Slack webhook URL when the alert fired (shared/notify/slack.ts). */
  slackWebhookUrl?: string;
  triggeredAt: string;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
}

/**
 * The name of the one key an alert is about, as its texts gave it (`keyName`); for an alert stored before
 * `keyName` existed, its hash prefix. Undefined when it names no key, or several (a `new_key` of many).
 */
export function alertKeyName(a: Pick<Alert, 'keyHash' | 'keyHashes' | 'keyName'>): string | undefined {
  if (a.keyName !== undefined) return a.keyName;
  return a.keyHash && a.keyHashes.length <= 1 ? keyDisplayName({ hash: a.keyHash }) : undefined;
}

const usdOrNull = (micros: number | null) => (micros === null ? null : microsToUsd(BigInt(micros)));

export function alertView(a: Alert) {
  return {
    id: a.id,
    type: a.type,
    status: a.status,
    ruleId: a.ruleId,
    budgetId: a.budgetId,
    keyHash: a.keyHash,
    keyHashes: a.keyHashes,
    ...(a.connectionId ? { connectionId: a.connectionId } : {}),
    title: a.title,
    message: a.message,
    period: a.period,
    threshold: usdOrNull(a.thresholdMicros),
    observedSpend: usdOrNull(a.observedMicros),
    deliveries: a.deliveries.map((d) => ({ channel: d.channel, status: d.status === 'sending' ? 'pending' : d.status, attempts: d.attempts })),
    triggeredAt: a.triggeredAt,
    acknowledgedAt: a.acknowledgedAt,
    acknowledgedBy: a.acknowledgedBy,
  };
}

export function ruleView(r: Rule) {
  return {
    id: r.id,
    type: r.type,
    name: r.name,
    config: r.config,
    channels: r.channels,
    isActive: r.isActive,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    lastTriggeredAt: r.lastTriggeredAt,
  };
}

/** Budget status from spend: `exceeded` at or past the limit, `warning` at or past the threshold. Exact integer math. */
export function budgetStatus(spendMicros: number, limitMicros: number, thresholdPercent: number): 'ok' | 'warning' | 'exceeded' {
  if (spendMicros >= limitMicros) return 'exceeded';
  return reachesThreshold(spendMicros, limitMicros, thresholdPercent) ? 'warning' : 'ok';
}

/** spend ≥ limit × percent / 100, without division: percent has ≤ 2 decimals, so compare in basis points. */
export function reachesThreshold(spendMicros: number, limitMicros: number, thresholdPercent: number): boolean {
  const bp = BigInt(Math.round(thresholdPercent * 100));
  return BigInt(spendMicros) * 10_000n >= BigInt(limitMicros) * bp;
}

/** percentUsed rounded to 2 decimals (11 of 10 → 110). */
export function percentUsed(spendMicros: number, limitMicros: number): number {
  if (limitMicros <= 0) return 0;
  // round(spend / limit × 100, 2) = round(spend × 10000 / limit) / 100, half up, in integers
  const scaled = (BigInt(spendMicros) * 10_000n * 2n + BigInt(limitMicros)) / (2n * BigInt(limitMicros));
  return Number(scaled) / 100;
}

/** What a stop budget did (API.md part 5): the worst of its targets' states, the lever, since when. */
export interface BudgetEnforcementView {
  status: 'armed' | 'stopped' | 'released' | 'failed';
  lever: string | null;
  detail: string;
  since: string;
}

/** `forecastMicros`: the month-end forecast of what the budget watches (shared/spend/forecast.ts). */
export function budgetView(b: Budget, spendMicros: number, forecastMicros: number = spendMicros, enforcement?: BudgetEnforcementView) {
  return {
    id: b.id,
    name: b.name,
    monthlyLimit: microsToUsd(b.monthlyLimitMicros),
    alertThreshold: b.alertThreshold,
    scope: b.scope,
    keyHash: b.keyHash,
    ...(b.scope === 'PROJECT' ? { connectionId: b.connectionId ?? null, projectId: b.projectId ?? null } : {}),
    action: b.action ?? 'notify',
    spend: { monthToDate: microsToUsd(BigInt(spendMicros)) },
    percentUsed: percentUsed(spendMicros, b.monthlyLimitMicros),
    status: budgetStatus(spendMicros, b.monthlyLimitMicros, b.alertThreshold),
    alertOnForecast: b.alertOnForecast,
    forecast: { monthEnd: microsToUsd(BigInt(forecastMicros)), percentOfLimit: percentUsed(forecastMicros, b.monthlyLimitMicros) },
    ...(enforcement ? { enforcement } : {}),
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
  };
}

/**
 * The `updatedAt` of a new version: now, but always after the version it replaces (two edits in one millisecond
 * must still differ, since an edit is conditional on the `updatedAt` it read).
 */
export function nextUpdatedAt(now: Date, previous: string): string {
  const at = now.toISOString();
  return at > previous ? at : new Date(Date.parse(previous) + 1).toISOString();
}
