/**
 * Pure parts of trusted identities: the link e-mails (templates), the session epoch on refresh tokens, the subjects
 * the abuse limits count, the RATE_LIMITS switch, and the forgot-password floor. The flows themselves run against
 * the real stack in test/integration/identity*.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readConfig, resetConfig } from '#shared/config.ts';
import { renderPlainEmail } from '#shared/notify/email.ts';
import { linkTo, resetPasswordEmail, SUBJECTS, verificationEmail } from '#shared/notify/templates.ts';
import { invitationEmail } from '#shared/invitations/email.ts';
import { epochOf, INITIAL_EPOCH, newEpoch, unwrapRefreshToken, wrapRefreshToken } from '#shared/access/sessions.ts';
import { emailIpSubject, emailSubject, enforce, ipSubject } from '#shared/auth/limits.ts';

const TOKEN = 'AbC_-123456789012345678901234567890123456789';
const settings = { from: 'alerts@burnrate.test' };
const DATE = new Date('2026-11-21T22:34:24.000Z');

describe('link e-mails', () => {
  it.each([
    ['verification', verificationEmail, '/verify-email', SUBJECTS.verifyEmail],
    ['reset', resetPasswordEmail, '/reset-password', SUBJECTS.resetPassword],
  ] as const)('%s: fixed [Burnrate] Subject, plain text, the link alone on its line, the product named', (_name, template, path, subject) => {
    const link = linkTo('http://localhost:3000/', path, TOKEN);
    expect(link).toBe(`http://localhost:3000${path}?token=${TOKEN}`);
    const mail = template({ to: 'ada@example.com', link });
    expect(mail.subject).toBe(subject);
    expect(mail.subject.startsWith('[Burnrate] ')).toBe(true);
    expect(mail.lines.filter((line) => line.includes(link))).toEqual([link]);
    expect(mail.lines.join('\n')).toContain('Burnrate');
    const raw = renderPlainEmail(mail, settings, DATE);
    expect(raw).toMatch(/^Content-Type: text\/plain; charset=UTF-8\r$/m);
    expect(raw).toMatch(new RegExp(`^Subject: ${subject.replace(/[[\]]/g, '\\$&')}\r$`, 'm'));
    // The link stays whole in the message (7bit, no soft line breaks).
    expect(raw.split('\r\n')).toContain(link);
  });

  it('the invitation: Subject and first line are Burnrate’s words; the company name comes later, quoted, cut, CR/LF removed', () => {
    const mail = invitationEmail({
      id: 'inv_1',
      to: 'grace@example.com',
      companyName: `Evil\r\nBcc: victim@example.com ${'x'.repeat(200)}`,
      inviterName: 'Ada',
      role: 'member',
      link: `http://localhost:3000/accept-invitation?token=${TOKEN}`,
    });
    expect(mail.subject).toBe("[Burnrate] You're invited to join a team on Burnrate");
    expect(mail.lines[0]).toBe('You have been invited to join a team on Burnrate as a member.');
    const company = mail.lines.find((line) => line.includes('Evil'))!;
    expect(company).toMatch(/^ {2}Team \(company name\): "Evil Bcc: victim@example\.com x+…"$/);
    expect([...company].length).toBeLessThan(100);
    expect(mail.lines.indexOf(company)).toBeGreaterThan(1);
    expect(mail.lines).toContain('  Invited by: "Ada"');
    const raw = renderPlainEmail(mail, settings, DATE);
    expect(raw).not.toMatch(/^Bcc:/m);
  });
});

describe('session epoch on refresh tokens', () => {
  it('wraps and unwraps; a token without the envelope is of epoch 0', () => {
    const epoch = newEpoch();
    expect(epoch).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(newEpoch()).not.toBe(epoch);
    const cognito = 'eyJhbGciOi.JIUzI1.NiJ9.x.y';
    expect(unwrapRefreshToken(wrapRefreshToken(cognito, epoch))).toEqual({ epoch, cognitoRefreshToken: cognito });
    expect(unwrapRefreshToken(cognito)).toEqual({ epoch: INITIAL_EPOCH, cognitoRefreshToken: cognito });
    expect(epochOf({})).toBe('0');
    expect(epochOf({ sessionEpoch: epoch })).toBe(epoch);
  });
});

describe('what the limits count', () => {
  it('an IPv4 address as is; IPv6 by its /64, however it is written', () => {
    expect(ipSubject('203.0.113.7')).toBe('203.0.113.7');
    expect(ipSubject('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(ipSubject('2001:0db8:0001:0002:ffff:0:0:9')).toBe('2001:db8:1:2::/64');
    expect(ipSubject('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(ipSubject('::1')).toBe('0:0:0:0::/64');
    expect(ipSubject('')).toBe('unknown');
  });

  it('e-mail subjects are hashes (no address a stranger typed is stored), normalized', () => {
    expect(emailSubject(' Ada@Example.com')).toBe(emailSubject('ada@example.com'));
    expect(emailSubject('ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
    expect(emailIpSubject('ada@example.com', '203.0.113.7')).not.toBe(emailIpSubject('ada@example.com', '203.0.113.8'));
  });
});

describe('RATE_LIMITS', () => {
  afterEach(() => {
    delete process.env.RATE_LIMITS;
    resetConfig();
  });

  it('on by default; off only with RATE_LIMITS=off', () => {
    expect(readConfig({}).rateLimits).toBe(true);
    expect(readConfig({ RATE_LIMITS: 'on' }).rateLimits).toBe(true);
    expect(readConfig({ RATE_LIMITS: 'off' }).rateLimits).toBe(false);
  });

  it('off: the request limits count nothing (no table is touched)', async () => {
    process.env.RATE_LIMITS = 'off';
    resetConfig();
    expect(await enforce('register', '203.0.113.7')).toBeUndefined();
    expect(await enforce('login', 'x')).toBeUndefined();
    expect(await enforce('forgot-password', 'x')).toBeUndefined();
  });
});
