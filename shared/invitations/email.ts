/** The invitation e-mail (plain text, the link on its own line; user text only after the Subject's fixed prefix). */
import type { PlainEmail } from '#shared/notify/email.ts';
import type { Role } from '#shared/db/accounts.ts';
import { plainLine } from '#shared/notify/subject.ts';

/** User text on one visible line (the Subject's and the body's cleaning rule), cut to `max` code points. */
const clip = (text: string, max: number) => {
  const clean = [...plainLine(text)];
  return clean.length > max ? `${clean.slice(0, max - 1).join('')}…` : clean.join('');
};

export function invitationEmail(input: { id: string; to: string; companyName: string; inviterName: string; role: Role; link: string }): PlainEmail {
  const company = clip(input.companyName, 60);
  return {
    to: input.to,
    subject: `[Burnrate] You're invited to ${company} on Burnrate`,
    tag: `invitation-${input.id}`,
    lines: [
      `${clip(input.inviterName, 100)} invited you to join ${company} on Burnrate as ${input.role === 'admin' ? 'an' : 'a'} ${input.role}.`,
      '',
      'Burnrate tracks what your team spends on AI API keys. To accept, open this link and choose a password:',
      '',
      input.link,
      '',
      'The link works once and expires in 7 days. If you did not expect this invitation, ignore this e-mail.',
      '',
      '-- Burnrate',
    ],
  };
}
