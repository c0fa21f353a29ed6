/** Sending the e-mails that carry a link (verification, reset): through a seam the unit tests replace. */
import { config } from '#shared/config.ts';
import { logger } from '#shared/http/logger.ts';
import { sendPlainEmail, type PlainEmail } from '#shared/notify/email.ts';

export interface Mail {
  send(email: PlainEmail, now: Date): Promise<void>;
  /** docs/features/identity-and-teams.md `appUrl`: where e-mailed links point (empty when not configured: no link can be sent). */
  appUrl(): string;
}

export const defaultMail: Mail = { send: (email, now) => sendPlainEmail(email, now), appUrl: () => config().appUrl };

/**
 * Sends an e-mail with a link; a failure is logged, never thrown (the change it belongs to is done: the user can
 * ask for another link). False when nothing was sent.
 */
export async function sendLinkEmail(mail: Mail, build: (appUrl: string) => PlainEmail, now: Date, what: string): Promise<boolean> {
  const appUrl = mail.appUrl();
  if (!appUrl) {
    logger.error(`${what} e-mail not sent: no appUrl (DASHBOARD_URL) is configured`);
    return false;
  }
  try {
    await mail.send(build(appUrl), now);
    return true;
  } catch (error) {
    logger.error(`${what} e-mail failed`, { error: String(error) });
    return false;
  }
}
