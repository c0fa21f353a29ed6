/**
 * The account e-mails that carry a link (docs/features/budgets-and-alerts.md): plain text, the link on a line of its
 * own, our product name, and a Subject that is a fixed text — no user text in it (the invitation's company name, after
 * a fixed prefix, is the one exception: shared/invitations/email.ts). Rendered and sent by shared/notify/email.ts
 * (`sendPlainEmail`).
 */
import type { PlainEmail } from '#shared/notify/email.ts';

export const PRODUCT = 'Burnrate';
export const SUBJECTS = {
  verifyEmail: `[${PRODUCT}] Verify your e-mail address`,
  resetPassword: `[${PRODUCT}] Reset your password`,
} as const;

/** `<appUrl><path>?token=<token>`; the token is `[A-Za-z0-9_-]` only, so it needs no encoding. */
export function linkTo(appUrl: string, path: '/verify-email' | '/reset-password', token: string): string {
  return `${appUrl.replace(/\/+$/, '')}${path}?token=${token}`;
}

/** The message register (and POST /auth/resend-verification) sends to a new address. */
export function verificationEmail(input: { to: string; link: string }): PlainEmail {
  return {
    to: input.to,
    subject: SUBJECTS.verifyEmail,
    tag: 'verify-email',
    lines: [
      `Welcome to ${PRODUCT}.`,
      '',
      'Please confirm that this is your e-mail address by opening this link:',
      '',
      input.link,
      '',
      'The link works once and expires in 24 hours. Until the address is confirmed, Burnrate sends it no alert e-mail.',
      'If you did not sign up for Burnrate, ignore this e-mail: nothing is sent to this address without it.',
      '',
      `-- ${PRODUCT}`,
    ],
  };
}

/** The message POST /auth/forgot-password sends to a known address. */
export function resetPasswordEmail(input: { to: string; link: string }): PlainEmail {
  return {
    to: input.to,
    subject: SUBJECTS.resetPassword,
    tag: 'reset-password',
    lines: [
      `Someone asked to reset the password of your ${PRODUCT} account.`,
      '',
      'To choose a new password, open this link:',
      '',
      input.link,
      '',
      'The link works once and expires in 1 hour. Setting a new password signs you out everywhere.',
      'If you did not ask for this, ignore this e-mail: your password stays as it is.',
      '',
      `-- ${PRODUCT}`,
    ],
  };
}
