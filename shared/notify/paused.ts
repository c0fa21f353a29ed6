/**
 * The "paused" notice: the one e-mail a recipient gets when the hourly cap on alert e-mail first holds an alert
 * back in an hour. Plain text, our product name, no user text anywhere in it (the Subject least of all).
 */
import type { PlainEmail } from '#shared/notify/plain-email.ts';
import { EMAIL_CAP_PER_HOUR, type HourWindow } from '#shared/notify/caps.ts';
import { SUBJECT_PREFIX, subjectLine } from '#shared/notify/subject.ts';

/** `22:00 UTC` */
const hhmm = (date: Date) => `${date.toISOString().slice(11, 16)} UTC`;

export function pausedNoticeEmail(input: { to: string; window: HourWindow; appUrl?: string; tag: string }): PlainEmail {
  const until = hhmm(input.window.endsAt);
  const lines = [
    `Burnrate has sent ${EMAIL_CAP_PER_HOUR} alert e-mails to this address in the current hour, the most it sends`,
    'to one address in an hour. Alert e-mail to you is paused until the hour ends:',
    '',
    `  Paused until: ${input.window.endsAt.toISOString()} (${until})`,
    '',
    'Alerts raised meanwhile are not lost: they are listed in the Burnrate dashboard, where their e-mail',
    'delivery shows as "suppressed".',
  ];
  if (input.appUrl) lines.push('', input.appUrl.replace(/\/+$/, '') + '/alerts');
  lines.push(
    '',
    'If these alerts are more than you want, an admin of your account can change or deactivate the alert rules,',
    'and you can turn alert e-mail off in your profile.',
    '',
    '-- Burnrate',
  );
  return { to: input.to, subject: subjectLine(`${SUBJECT_PREFIX} Alert e-mail paused until ${until}`), lines, tag: input.tag };
}
