/** Reads the local stack's outbox (`.eml` files) the way a person reads their mail: find the message, click the link. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stack } from './harness.ts';

export interface Mail {
  name: string;
  to: string;
  subject: string;
  text: string;
}

/** Every message in the outbox to `to` (oldest first). */
export async function mailTo(to: string): Promise<Mail[]> {
  const dir = stack().outboxDir;
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml')).sort();
  const mails = await Promise.all(
    names.map(async (name) => {
      const text = await readFile(join(dir, name), 'utf8');
      const header = (field: string) => new RegExp(`^${field}: (.*)$`, 'mi').exec(text)?.[1]?.trim() ?? '';
      return { name, to: header('To'), subject: header('Subject'), text };
    }),
  );
  return mails.filter((m) => m.to.toLowerCase() === to.toLowerCase());
}

/**
 * The link to `<appUrl><path>?token=…` in the newest message to `to` (waiting up to 5 s for it to arrive);
 * returns the whole link and its token.
 */
export async function linkInMail(to: string, path: string): Promise<{ url: string; token: string; mail: Mail }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const mails = (await mailTo(to)).reverse();
    for (const mail of mails) {
      const body = mail.text.replace(/=\r?\n/g, ''); // undo quoted-printable soft line breaks
      const match = new RegExp(`^(https?://\\S+${path.replace('/', '\\/')}\\?token=([A-Za-z0-9_-]+))\\s*$`, 'm').exec(body);
      if (match) return { url: match[1]!, token: match[2]!, mail };
    }
    await sleep(100);
  }
  throw new Error(`no message to ${to} with a ${path} link in the outbox`);
}
