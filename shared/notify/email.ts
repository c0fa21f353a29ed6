/**
 * The e-mail channel: one plain-text RFC 5322 message per user of the account whose address is verified and who
 * wants alert e-mail, each recipient at most EMAIL_CAP_PER_HOUR alert e-mails an hour (shared/notify/caps.ts).
 * In AWS it goes out through SES (SESv2 SendEmail, raw content); locally (`OUTBOX_DIR` set) each message is
 * written as one `.eml` file into that folder — atomically, so a reader never sees half a message.
 */
import { randomBytes } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { config } from '#shared/config.ts';
import { queryAll } from '#shared/db/client.ts';
import { queries } from '#shared/db/keys.ts';
import { formatUsd } from '#shared/pricing/money.ts';
import { alertKeyName, type Alert, type AlertType } from '#shared/alerting/model.ts';
import { logger } from '#shared/http/logger.ts';
import { hourWindow, takeSlot, targetHash } from '#shared/notify/caps.ts';
import { pausedNoticeEmail } from '#shared/notify/paused.ts';
import type { PlainEmail } from '#shared/notify/plain-email.ts';
import { alertSubject } from '#shared/notify/subject.ts';

const CRLF = '\r\n';
const DEFAULT_FROM_ADDRESS = 'alerts@localhost';
const FROM_NAME = 'Burnrate Alerts';

const TYPE_LABELS: Record<AlertType, string> = {
  cost_threshold: 'Cost threshold',
  new_key: 'New key discovered',
  spend_spike: 'Spend spike',
  budget_threshold: 'Budget threshold reached',
  budget_exceeded: 'Budget exceeded',
  budget_forecast: 'Budget forecast to be exceeded',
  plan_limit: 'Plan limit reached',
  connection_error: 'Provider connection failing',
  unpriced_model: 'A model has no price',
  budget_stopped: 'Budget stopped spend',
  budget_released: 'Budget released',
  enforcement_failed: 'A budget could not stop spend',
  spend_anomaly: 'A key suddenly spends far more than usual',
};

export interface EmailSettings {
  /** `alerts@example.com` or `Name <alerts@example.com>` (env ALERT_EMAIL_FROM). */
  from: string;
  /** Links the alert in the dashboard when set (env DASHBOARD_URL). */
  dashboardUrl?: string;
  /** Write `.eml` files here instead of sending (env OUTBOX_DIR; local only). */
  outboxDir?: string;
  /** The deployment has no e-mail (`-c email=off` → env EMAIL_DELIVERY=off): nothing is sent, nothing retried. */
  off?: boolean;
}

/** Why an e-mail was not sent in a deployment without e-mail. */
export const EMAIL_OFF_ERROR = 'e-mail is off in this deployment (email=off)';

export function emailSettings(env: NodeJS.ProcessEnv = process.env): EmailSettings {
  return {
    from: env.ALERT_EMAIL_FROM || DEFAULT_FROM_ADDRESS,
    ...(env.DASHBOARD_URL ? { dashboardUrl: env.DASHBOARD_URL } : {}),
    ...(env.OUTBOX_DIR ? { outboxDir: env.OUTBOX_DIR } : {}),
    ...(env.EMAIL_DELIVERY === 'off' ? { off: true } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering (pure)

/** `From` header value: `Burnrate Alerts <alerts@…>` unless the setting names its own display name. */
export function fromHeader(from: string): { header: string; address: string } {
  const clean = oneLine(from);
  const angle = /<([^<>\s]+@[^<>\s]+)>\s*$/.exec(clean);
  if (angle) return { header: clean, address: angle[1]! };
  return { header: `${FROM_NAME} <${clean}>`, address: clean };
}

/** RFC 5322 date: `Sat, 21 Nov 2026 22:34:24 +0000`. */
export function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

export interface RenderInput {
  alert: Alert;
  to: string;
  settings: EmailSettings;
  date: Date;
  /** Defaults to a random id under the sender's domain. */
  messageId?: string;
}

/** The whole message: headers and body, CRLF line endings, lines ≤ 78 characters where the text allows. */
export function renderAlertEmail(input: RenderInput): string {
  const { alert, settings } = input;
  const from = fromHeader(settings.from);
  const domain = from.address.split('@')[1] ?? 'localhost';
  const messageId = input.messageId ?? `<${alert.id}.${randomBytes(8).toString('hex')}@${domain}>`;
  const body = renderBody(alert, settings.dashboardUrl);
  const ascii = isAscii(body);
  const headers = [
    `From: ${from.header}`,
    `To: ${oneLine(input.to)}`,
    foldHeader('Subject', encodeHeaderText(alertSubject(alert))),
    `Date: ${rfc5322Date(input.date)}`,
    `Message-ID: ${messageId}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=UTF-8',
    `Content-Transfer-Encoding: ${ascii ? '7bit' : 'quoted-printable'}`,
    'Auto-Submitted: auto-generated',
    `X-Burnrate-Alert-Id: ${alert.id}`,
  ];
  const encodedBody = ascii ? body.join(CRLF) : quotedPrintable(body.join('\n'));
  return `${headers.join(CRLF)}${CRLF}${CRLF}${encodedBody}${CRLF}`;
}

/** Body lines (unencoded, no line endings). */
export function renderBody(alert: Alert, dashboardUrl?: string): string[] {
  const rows: [string, string][] = [
    ['Alert', alert.id],
    ['Type', `${TYPE_LABELS[alert.type] ?? alert.type} (${alert.type})`],
  ];
  if (alert.ruleId) rows.push(['Rule', alert.ruleId]);
  if (alert.budgetId) rows.push(['Budget', alert.budgetId]);
  const keyName = alertKeyName(alert);
  if (keyName !== undefined) rows.push(['Key', oneLine(keyName)]);
  else if (alert.keyHashes.length > 1) rows.push(['Keys', String(alert.keyHashes.length)]);
  rows.push(['Period', alert.period]);
  if (alert.thresholdMicros !== null) rows.push(['Threshold', formatUsd(alert.thresholdMicros)]);
  if (alert.observedMicros !== null) rows.push(['Observed spend', formatUsd(alert.observedMicros)]);
  rows.push(['Triggered at', alert.triggeredAt]);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;

  const lines = [...wrap(oneLine(alert.title)), '', ...wrap(oneLine(alert.message)), ''];
  lines.push(...rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`));
  if (dashboardUrl) lines.push('', 'Open it in the dashboard:', `${dashboardUrl.replace(/\/+$/, '')}/alerts/${encodeURIComponent(alert.id)}`);
  lines.push('', '-- ', 'Burnrate sends alerts to the account\'s users with a verified address who want', 'alert e-mail; you can turn it off in your profile.');
  return lines;
}

const oneLine = (text: string) => text.replace(/[\r\n\t\u0000-\u001f\u007f]+/g, ' ').trim();
// eslint-disable-next-line no-control-regex
const isAscii = (lines: string[]) => lines.every((line) => /^[\x20-\x7e]*$/.test(line));

/** Wraps at spaces to ≤ 76 characters (a word longer than that stays whole). */
function wrap(text: string, width = 76): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.length ? lines : [''];
}

/** ASCII stays as is; anything else becomes RFC 2047 encoded-words (UTF-8, base64), each ≤ 75 characters. */
function encodeHeaderText(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return text;
  // The ASCII words before the first non-ASCII one (our `[Burnrate] Kind:` prefix) stay readable as they are.
  const plain = /^(?:[\x21-\x7e]+ )*/.exec(text)?.[0] ?? '';
  const plainHead = plain.split(' ').some((w) => /^=\?|\?=$/.test(w)) ? '' : plain;
  const rest = text.slice(plainHead.length);
  const words: string[] = [];
  let chunk = '';
  for (const char of rest) {
    // 45 bytes of UTF-8 encode to 60 base64 characters: with `=?UTF-8?B?` and `?=` a word stays ≤ 72.
    if (Buffer.byteLength(chunk + char, 'utf8') > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  if (chunk) words.push(chunk);
  return plainHead + words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(' ');
}

/** `Name: value`, folded at spaces so lines stay ≤ 78 characters where possible (RFC 5322 §2.2.3). */
function foldHeader(name: string, value: string): string {
  const lines: string[] = [];
  let line = `${name}:`;
  for (const word of value.split(' ')) {
    if (line.length + 1 + word.length > 78 && line !== `${name}:`) {
      lines.push(line);
      line = ` ${word}`;
    } else line = `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(CRLF);
}

/** Quoted-printable (RFC 2045 §6.7) of UTF-8 text; `\n` in the text become CRLF, lines soft-broken at 76. */
function quotedPrintable(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const tokens = [...Buffer.from(line, 'utf8')].map((byte, i, all) => {
        const trailingSpace = (byte === 0x20 || byte === 0x09) && i === all.length - 1;
        const plain = byte >= 0x21 && byte <= 0x7e && byte !== 0x3d;
        return plain || ((byte === 0x20 || byte === 0x09) && !trailingSpace) ? String.fromCharCode(byte) : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
      });
      const out: string[] = [];
      let current = '';
      for (const token of tokens) {
        if (current.length + token.length > 75) {
          out.push(`${current}=`);
          current = '';
        }
        current += token;
      }
      out.push(current);
      return out.join(CRLF);
    })
    .join(CRLF);
}

// ---------------------------------------------------------------------------------------------------------------
// Sending

/**
 * `sentTo`: recipients that got it; `suppressedTo`: recipients past their hourly cap (both kept across attempts,
 * so a retry skips them). `ok` with nobody in `sentTo`: nobody may be mailed — the delivery is `suppressed`.
 */
export type EmailOutcome =
  | { ok: true; sentTo: string[]; suppressedTo: string[] }
  | { ok: false; error: string; permanent?: boolean; sentTo: string[]; suppressedTo: string[] };

/** Who may get alert e-mail: users with a verified address who want alert e-mail (`alertEmails` defaults to on). */
export function alertRecipients(users: readonly Record<string, unknown>[], adminsOnly = false): string[] {
  const eligible = users.filter((u) => u.emailVerified === true && u.alertEmails !== false && (!adminsOnly || u.role === 'admin'));
  return [...new Set(eligible.map((u) => u.email).filter((e): e is string => typeof e === 'string' && e.includes('@')))];
}

/**
 * THE place that says who gets an alert's e-mail — every alert type, budgets and plan limits included: the users
 * of the account whose `emailVerified` and `alertEmails` are both true. ONE Query of its USER# items.
 */
export async function accountRecipients(accountId: string, adminsOnly = false): Promise<string[]> {
  const q = queries.accountItems(accountId, 'USER');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
    ProjectionExpression: 'email, emailVerified, alertEmails, #role',
    ExpressionAttributeNames: { '#role': 'role' },
  });
  return alertRecipients(items, adminsOnly);
}

let ses: SESv2Client | undefined;
const sesClient = () => (ses ??= new SESv2Client({ region: config().region }));

/**
 * Sends the alert to each recipient (accountRecipients), one message each, except those an earlier, partly failed
 * attempt handled (`alreadySent`, `alreadySuppressed`). Each takes one slot of the recipient's hourly cap first;
 * past it the recipient is skipped, and the first refusal of the hour sends the recipient the "paused" notice.
 * Stops at the first failure and reports who was handled so far.
 */
export async function sendAlertEmail(
  alert: Alert,
  options: { now?: Date; alreadySent?: readonly string[]; alreadySuppressed?: readonly string[]; settings?: EmailSettings } = {},
): Promise<EmailOutcome> {
  const now = options.now ?? new Date();
  const settings = options.settings ?? emailSettings();
  if (settings.off) {
    return { ok: false, error: EMAIL_OFF_ERROR, permanent: true, sentTo: [...(options.alreadySent ?? [])], suppressedTo: [...(options.alreadySuppressed ?? [])] };
  }
  const recipients = await accountRecipients(alert.accountId, alert.adminsOnly === true);
  const sentTo = [...(options.alreadySent ?? [])];
  const suppressedTo = [...(options.alreadySuppressed ?? [])];
  const todo = recipients.filter((to) => !sentTo.includes(to) && !suppressedTo.includes(to));
  // The slots are taken together (one conditional UpdateItem per recipient, in parallel), then the mail goes out.
  const slots = await Promise.all(todo.map((to) => takeSlot('email', to, now)));
  for (const [i, to] of todo.entries()) {
    const slot = slots[i]!;
    if (slot !== 'allowed') {
      suppressedTo.push(to);
      if (slot === 'first-suppressed') await sendPausedNotice(to, now, settings);
      continue;
    }
    const raw = renderAlertEmail({ alert, to, settings, date: now });
    try {
      if (settings.outboxDir) await writeOutbox(settings.outboxDir, `${fileStamp(now)}-${alert.id}-${recipients.indexOf(to) + 1}.eml`, raw);
      else {
        await sesClient().send(
          new SendEmailCommand({
            FromEmailAddress: fromHeader(settings.from).address,
            Destination: { ToAddresses: [to] },
            Content: { Raw: { Data: Buffer.from(raw, 'utf8') } },
          }),
        );
      }
      sentTo.push(to);
    } catch (error) {
      return { ok: false, error: sendError(error), sentTo, suppressedTo };
    }
  }
  return { ok: true, sentTo, suppressedTo };
}

/**
 * The one "alert e-mail is paused" notice of a recipient's hour. Best effort: exactly one delivery per hour sends
 * it (the one whose count landed on cap + 1); if that send fails, it is logged and not retried.
 */
async function sendPausedNotice(to: string, now: Date, settings: EmailSettings): Promise<void> {
  const window = hourWindow(now);
  const tag = `paused-${window.hour.replace(/\D/g, '')}-${targetHash('email', to).slice(0, 16)}`;
  try {
    await sendPlainEmail(pausedNoticeEmail({ to, window, tag, ...(settings.dashboardUrl ? { appUrl: settings.dashboardUrl } : {}) }), now, settings);
    logger.warn('alert e-mail cap reached: recipient told that alert e-mail is paused', { hour: window.hour });
  } catch (error) {
    logger.error('the paused notice could not be sent', { hour: window.hour, error: sendError(error) });
  }
}

export type { PlainEmail };

/** Renders a plain-text message to one recipient (CRLF, UTF-8, quoted-printable when not ASCII). */
export function renderPlainEmail(email: PlainEmail, settings: EmailSettings, date: Date): string {
  const from = fromHeader(settings.from);
  const domain = from.address.split('@')[1] ?? 'localhost';
  const ascii = isAscii([...email.lines]);
  const headers = [
    `From: ${from.header}`,
    `To: ${oneLine(email.to)}`,
    foldHeader('Subject', encodeHeaderText(oneLine(email.subject))),
    `Date: ${rfc5322Date(date)}`,
    `Message-ID: <${randomBytes(12).toString('hex')}@${domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=UTF-8',
    `Content-Transfer-Encoding: ${ascii ? '7bit' : 'quoted-printable'}`,
    'Auto-Submitted: auto-generated',
  ];
  const body = ascii ? email.lines.join(CRLF) : quotedPrintable(email.lines.join('\n'));
  return `${headers.join(CRLF)}${CRLF}${CRLF}${body}${CRLF}`;
}

/** Sends one account e-mail (a link to follow): SES in AWS, an `.eml` file in the local outbox. */
export async function sendPlainEmail(email: PlainEmail, now = new Date(), settings: EmailSettings = emailSettings()): Promise<void> {
  if (settings.off) throw new Error(EMAIL_OFF_ERROR);
  const raw = renderPlainEmail(email, settings, now);
  if (settings.outboxDir) return writeOutbox(settings.outboxDir, `${fileStamp(now)}-${email.tag.replace(/[^A-Za-z0-9_-]/g, '')}.eml`, raw);
  await sesClient().send(
    new SendEmailCommand({
      FromEmailAddress: fromHeader(settings.from).address,
      Destination: { ToAddresses: [email.to] },
      Content: { Raw: { Data: Buffer.from(raw, 'utf8') } },
    }),
  );
}

/** `20261121T223424123Z`: sorts by time, safe in any file system. */
const fileStamp = (date: Date) => date.toISOString().replace(/[-:.]/g, '');

/** Temp file in the same folder, then rename: the `.eml` appears whole or not at all. */
async function writeOutbox(dir: string, name: string, content: string): Promise<void> {
  const temp = join(dir, `.${name}.${randomBytes(4).toString('hex')}.tmp`);
  await writeFile(temp, content, { encoding: 'utf8', flag: 'wx' });
  await rename(temp, join(dir, name));
}

/** A short reason: the SDK error's name (`MessageRejected`, `TooManyRequestsException`) or the fs code. */
function sendError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return (typeof code === 'string' ? code : error.name).slice(0, 100);
  }
  return 'send failed';
}
