/**
 * The invitation e-mail (plain text, the link on its own line). Subject and first line are Burnrate's own words
 * (docs/features/identity-and-teams.md): the company and inviter names — text an admin typed, possibly a lure — come
 * only later, quoted and cut, on lines of their own.
 */
import type { PlainEmail } from '#shared/notify/email.ts';
import type { Role } from '#shared/db/accounts.ts';
import { plainLine } from '#shared/notify/subject.ts';

/** User text on one visible line (the Subject's and the body's cleaning rule), cut to `max` code points. */
const clip = (text: string, max: number) => {
  const clean = [...plainLine(text)];
  return clean.length > max ? `${clean.slice(0, max - 1).join('')}…` : clean.join('');
};

/** User text as a quotation: double quotes around it, its own double quotes turned into single ones. */
const quoted = (text: string, max: number) => `"${clip(text, max).replace(/"/g, "'")}"`;

export const INVITATION_SUBJECT = "[Burnrate] You're invited to join a team on Burnrate";

export function invitationEmail(input: { id: string; to: string; companyName: string; inviterName: string; role: Role; link: string }): PlainEmail {
  return {
    to: input.to,
    subject: INVITATION_SUBJECT,
    tag: `invitation-${input.id}`,
    lines: [
      `You have been invited to join a team on Burnrate as ${input.role === 'admin' ? 'an' : 'a'} ${input.role}.`,
      '',
      'Burnrate tracks what a team spends on AI API keys. The invitation, as its sender entered it:',
      '',
      `  Team (company name): ${quoted(input.companyName, 60)}`,
      `  Invited by: ${quoted(input.inviterName, 100)}`,
      '',
      'To accept, open this link and choose a password:',
      '',
      input.link,
      '',
      'The link works once and expires in 7 days. If you did not expect this invitation, ignore this e-mail:',
      'nobody gets access without the link. Burnrate never asks for payment or passwords by e-mail.',
      '',
      '-- Burnrate',
    ],
  };
}
