/**
 * Abuse limits (docs/security.md): counted in DynamoDB (shared/db/rate-limits.ts),
 * never in memory — Lambda runs many containers. Past a limit: 429 problem+json with `Retry-After` (seconds), and
 * the request writes nothing else.
 *
 * The request limits (`request: true`) go off with `RATE_LIMITS=off` (local test suites, demo seeding); the
 * per-user and per-address caps on e-mail we send stay on always.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { config } from '#shared/config.ts';
import { TooManyRequests } from '#shared/http/errors.ts';
import { keys } from '#shared/db/keys.ts';
import { hit, release } from '#shared/db/rate-limits.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const LIMITS = {
  /** POST /auth/register per source IP. */
  register: { max: 10, windowMs: HOUR, request: true, what: 'sign-ups from your address' },
  /** POST /auth/forgot-password per source IP. */
  'forgot-password': { max: 10, windowMs: HOUR, request: true, what: 'password reset requests from your address' },
  /** Failed sign-ins (login, a wrong current password) per e-mail and source IP. */
  login: { max: 10, windowMs: 15 * MINUTE, request: true, what: 'failed sign-ins for this address from your address' },
  /** POST /auth/resend-verification per user: one a minute ... */
  'resend-minute': { max: 1, windowMs: MINUTE, request: false, what: 'verification e-mails a minute' },
  /** ... and five a day. */
  'resend-day': { max: 5, windowMs: 24 * HOUR, request: false, what: 'verification e-mails a day' },
  /** Invitation e-mails an account sends a day (revoking one gives nothing back). */
  'invitation-account': { max: 20, windowMs: 24 * HOUR, request: false, what: 'invitation e-mails from this account a day' },
  /** Invitation e-mails to one address a day, from every account together. */
  'invitation-address': { max: 3, windowMs: 24 * HOUR, request: false, what: 'invitation e-mails to this address a day' },
  /** Reset e-mails per address (quiet: the request still answers 202, no e-mail goes out). */
  'reset-email': { max: 5, windowMs: HOUR, request: false, what: 'password reset e-mails to this address an hour' },
} as const;

export type LimitKind = keyof typeof LIMITS;

/** A hit that was counted, to give back with `giveBack` (a login that succeeded). */
export interface Counted {
  kind: LimitKind;
  subject: string;
  windowEnd: number;
}

const isOn = (kind: LimitKind) => !LIMITS[kind].request || config().rateLimits;

/**
 * The address a limit counts: an IPv4 address as is; an IPv6 address by its /64 (a single host usually holds a
 * whole /64, so counting single addresses would not limit it).
 */
export function ipSubject(sourceIp: string): string {
  const ip = sourceIp.trim();
  if (isIP(ip) !== 6) return ip || 'unknown';
  const [head = '', tail = ''] = ip.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts] : ip.split(':');
  return `${groups.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}

/** The subject of a per-(e-mail, IP) limit: a hash, so no address a stranger typed is stored. */
export const emailIpSubject = (email: string, sourceIp: string) =>
  createHash('sha256').update(`${email.trim().toLowerCase()}|${ipSubject(sourceIp)}`).digest('hex');

export const emailSubject = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');

/** Counts one request against the limit, or throws 429 with Retry-After. Undefined when the limit is off. */
export async function enforce(kind: LimitKind, subject: string, now = new Date()): Promise<Counted | undefined> {
  if (!isOn(kind)) return undefined;
  const limit = LIMITS[kind];
  const result = await hit(keys.rateLimit(kind, subject), limit.max, limit.windowMs, now);
  if (!result.allowed) {
    throw new TooManyRequests(`Too many ${limit.what} (at most ${limit.max}). Try again in ${result.retryAfterSeconds} seconds.`, 'too-many-requests', result.retryAfterSeconds);
  }
  return { kind, subject, windowEnd: result.windowEnd };
}

/** Like `enforce`, but answers false instead of throwing (a cap that is kept quietly). */
export async function allowed(kind: LimitKind, subject: string, now = new Date()): Promise<boolean> {
  try {
    await enforce(kind, subject, now);
    return true;
  } catch (error) {
    if (error instanceof TooManyRequests) return false;
    throw error;
  }
}

/** Gives a counted hit back (it did not count as abuse after all). */
export async function giveBack(counted: Counted | undefined): Promise<void> {
  if (counted) await release(keys.rateLimit(counted.kind, counted.subject), counted.windowEnd);
}
