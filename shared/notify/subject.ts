/**
 * E-mail Subjects that can't be turned into someone else's message (docs/security.md): every Subject
 * starts with `[Burnrate]` and a fixed text of ours (the kind of alert); text a user wrote (rule and budget names,
 * key labels and hints, company names) only comes after it, on one line, without characters that could reorder or
 * hide it, and the whole Subject is cut to SUBJECT_MAX characters.
 */
import type { AlertType } from '#shared/alerting/model.ts';

export const SUBJECT_PREFIX = '[Burnrate]';
/** Characters (code points) of a whole Subject at most, the prefix included. */
export const SUBJECT_MAX = 120;

/** The kind of alert, as the Subject names it right after the prefix. */
export const ALERT_KIND_LABELS: Record<AlertType, string> = {
  new_key: 'New key',
  cost_threshold: 'Cost threshold',
  spend_spike: 'Spend spike',
  budget_threshold: 'Budget threshold',
  budget_exceeded: 'Budget exceeded',
  budget_forecast: 'Budget forecast',
  plan_limit: 'Plan limit',
  connection_error: 'Connection error',
  unpriced_model: 'Unpriced model',
  budget_stopped: 'Budget stopped',
  budget_released: 'Budget released',
  enforcement_failed: 'Enforcement failed',
  spend_anomaly: 'Spend anomaly',
};

/**
 * One line of plain, visible text: line breaks (CR, LF, NEL, U+2028/9) and other control characters become spaces;
 * bidirectional overrides and isolates, zero-width and other format characters are dropped (they could make the
 * user's text render before ours); runs of white space become one space.
 */
export function plainLine(text: string): string {
  return text
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .replace(/\p{Cf}/gu, '')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** `fixed` (ours), then `: userText` cleaned, the whole cut to `max` code points (ending in `…` when cut). */
export function subjectLine(fixed: string, userText?: string, max = SUBJECT_MAX): string {
  const head = plainLine(fixed);
  const tail = userText === undefined ? '' : plainLine(userText);
  const whole = [...(tail ? `${head}: ${tail}` : head)];
  return whole.length <= max ? whole.join('') : `${whole.slice(0, max - 1).join('').trimEnd()}…`;
}

/** `[Burnrate] New key: <the alert's title>`. */
export function alertSubject(alert: { type: AlertType; title: string }): string {
  const kind = ALERT_KIND_LABELS[alert.type] ?? 'Alert';
  return subjectLine(`${SUBJECT_PREFIX} ${kind}`, alert.title);
}
