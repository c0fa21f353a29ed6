/**
 * Budgets, alert rules and alerts: their API views and the rules over them (their stored shapes are shared/db's,
 * re-exported here). Shared by the CRUD services,
 * the evaluation after ingestion (shared/alerting/evaluate.ts) and the notifier (shared/notify/).
 * Money is stored in integer micro-dollars (`*Micros`); the API speaks dollars.
 */
import { microsToUsd } from '#shared/pricing/money.ts';
import { keyDisplayName } from '#shared/usage/key-name.ts';
import type { Budget, BudgetAction, BudgetScope } from '#shared/db/budgets.ts';
import type { Channel, Period, Rule, RuleConfig, RuleType, SpendAnomalyRuleConfig } from '#shared/db/rules.ts';
import type { Alert, AlertStatus, AlertType, Delivery, DeliveryStatus } from '#shared/db/alerts.ts';

export type { Alert, AlertStatus, AlertType, Budget, BudgetAction, BudgetScope, Channel, Delivery, DeliveryStatus, Period, Rule, RuleConfig, RuleType, SpendAnomalyRuleConfig };

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

/** What a stop budget did (docs/features/budgets-and-alerts.md): the worst of its targets' states, the lever, since when. */
export interface BudgetEnforcementView {
  status: 'armed' | 'stopped' | 'released' | 'failed';
  lever: string | null;
  detail: string;
  since: string;
  nativeCap: { status: 'set' | 'unavailable' | 'none'; provider: string | null; detail: string };
}

/** `forecastMicros`: the month-end forecast of what the budget watches (shared/usage/forecast.ts). */
export function budgetView(b: Budget, spendMicros: number, forecastMicros: number = spendMicros, enforcement?: BudgetEnforcementView) {
  return {
    id: b.id,
    name: b.name,
    monthlyLimit: microsToUsd(b.monthlyLimitMicros),
    alertThreshold: b.alertThreshold,
    scope: b.scope,
    keyHash: b.keyHash,
    ...(b.scope === 'PROJECT' ? { connectionId: b.connectionId ?? null, projectId: b.projectId ?? null } : {}),
    ...(b.scope === 'TAG' ? { tag: b.tag ?? null } : {}),
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
