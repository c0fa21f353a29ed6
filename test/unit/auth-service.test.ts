import { describe, expect, it } from 'vitest';
import { register, login, ORPHAN_AGE_MS, type Deps } from '#shared/auth/service.ts';
import { BadCredentials, IdentityExists, PasswordRefused, type Identity } from '#shared/auth/identity.ts';
import { EmailTaken } from '#shared/db/accounts.ts';
import { RegisterBody } from '#shared/auth/schemas.ts';
import { TooManyRequests, type HttpError } from '#shared/http/errors.ts';
import type { PlainEmail } from '#shared/notify/email.ts';
import { refresh } from '#shared/auth/service.ts';
import { wrapRefreshToken } from '#shared/access/sessions.ts';
import { safeParse } from 'zod/mini';

const input = { email: 'ada@example.com', password: 'Passw0rdX', firstName: 'Ada', lastName: 'L', companyName: 'Analytical' };
const NOW = new Date('2026-11-21T22:00:00.000Z');

function token(claims: Record<string, unknown>): string {
  return `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;
}

/** In-memory fakes that record what happened (the integration suite runs the real Cognito and DynamoDB). */
function fakes(
  options: {
    txError?: Error;
    identities?: Map<string, Date>;
    emails?: Set<string>;
    createError?: Error;
    /** The user's session epoch (null: the user is gone). */
    epoch?: string | null;
    /** The epoch of each successive read of the user (a reset between two reads), before `epoch`. */
    epochs?: string[];
    /** The user's `sessionsValidAfter`. */
    validAfter?: string;
    /** The `iat` of the tokens the identity service issues. */
    iat?: number;
    /** admitToken's answer (its condition: the epoch is unchanged). */
    admits?: boolean;
    limited?: boolean;
    mailError?: Error;
  } = {},
) {
  const identities = options.identities ?? new Map<string, Date>();
  const emails = options.emails ?? new Set<string>();
  const calls: string[] = [];
  const claims = { 'custom:accountId': 'br_1', 'custom:userId': 'usr_1', jti: 'jti-1' };
  const epochs = [...(options.epochs ?? [])];
  const identity: Identity = {
    async createUser(user) {
      calls.push(`create ${user.email}`);
      if (options.createError) throw options.createError;
      if (identities.has(user.email)) throw new IdentityExists();
      identities.set(user.email, NOW);
    },
    async deleteUser(email) {
      calls.push(`delete ${email}`);
      identities.delete(email);
    },
    async createdAt(email) {
      return identities.get(email);
    },
    async signIn(email) {
      if (!identities.has(email)) throw new BadCredentials();
      return { token: token({ ...claims, iat: options.iat ?? NOW.getTime() / 1000 }), refreshToken: 'r', expiresIn: 3600 };
    },
    async refresh() {
      return { token: token({ ...claims, iat: options.iat ?? NOW.getTime() / 1000 }), refreshToken: 'r', expiresIn: 3600 };
    },
    async setPassword(email) {
      calls.push(`set password ${email}`);
    },
    async signOutEverywhere(email) {
      calls.push(`sign out ${email}`);
    },
  };
  const sent: PlainEmail[] = [];
  const deps: Deps = {
    identity,
    now: () => NOW,
    accounts: {
      async createAccountWithOwner(_account, user) {
        if (options.txError) throw options.txError;
        if (emails.has(user.email)) throw new EmailTaken();
        emails.add(user.email);
      },
      async emailRegistered(email) {
        return emails.has(email);
      },
      async getUser(accountId, userId) {
        const epoch = epochs.shift() ?? options.epoch;
        return epoch === null
          ? undefined
          : {
              accountId,
              userId,
              email: input.email,
              firstName: 'A',
              lastName: 'L',
              role: 'admin',
              emailVerified: false,
              alertEmails: true,
              createdAt: '',
              updatedAt: '',
              ...(epoch ? { sessionEpoch: epoch } : {}),
              ...(options.validAfter ? { sessionsValidAfter: options.validAfter } : {}),
            };
      },
    },
    sessions: {
      async emailOwner(email) {
        return email === input.email ? { accountId: 'br_1', userId: 'usr_1' } : undefined;
      },
      async admitToken(_accountId, _userId, epoch, tokenId) {
        calls.push(`admit ${tokenId} in ${epoch}`);
        return options.admits ?? true;
      },
    },
    limits: {
      async enforce(kind, subject) {
        calls.push(`limit ${kind}`);
        if (options.limited) throw new TooManyRequests('too many', 'too-many-requests', 42);
        return { kind, subject, windowEnd: 1 };
      },
      async giveBack(counted) {
        if (counted) calls.push(`give back ${counted.kind}`);
      },
    },
    mail: {
      async send(email) {
        if (options.mailError) throw options.mailError;
        sent.push(email);
      },
      appUrl: () => 'http://app.test',
    },
  };
  return { deps, identities, emails, calls, sent };
}

const statusOf = async (promise: Promise<unknown>) => promise.then(() => 0, (error: HttpError) => error.status);

describe('register', () => {
  it('creates identity then items, and signs in', async () => {
    const { deps, identities, emails } = fakes();
    const result = await register(input, deps);
    expect(result.accountId).toMatch(/^br_[0-9A-Z]{26}$/);
    expect(result.userId).toMatch(/^usr_[0-9A-Z]{26}$/);
    expect(result.expiresIn).toBe(3600);
    expect(identities.has(input.email) && emails.has(input.email)).toBe(true);
  });
  it('removes the identity when the transaction fails, and rethrows', async () => {
    const { deps, identities, calls } = fakes({ txError: new Error('ProvisionedThroughputExceededException') });
    await expect(register(input, deps)).rejects.toThrow('ProvisionedThroughputExceededException');
    expect(identities.size).toBe(0);
    expect(calls).toEqual(['limit register', `create ${input.email}`, `delete ${input.email}`]);
  });
  it('answers 409 when the e-mail item exists, leaving no identity behind', async () => {
    const { deps, identities } = fakes({ emails: new Set([input.email]) });
    expect(await statusOf(register(input, deps))).toBe(409);
    expect(identities.size).toBe(0);
  });
  it('answers 409 for an existing identity with an account', async () => {
    const { deps } = fakes({ identities: new Map([[input.email, NOW]]), emails: new Set([input.email]) });
    expect(await statusOf(register(input, deps))).toBe(409);
  });
  it('answers 409 for a fresh identity without account (a register in flight)', async () => {
    const recent = new Date(NOW.getTime() - 1000);
    const { deps, identities } = fakes({ identities: new Map([[input.email, recent]]) });
    expect(await statusOf(register(input, deps))).toBe(409);
    expect(identities.get(input.email)).toBe(recent);
  });
  it('replaces an orphaned identity (older than the orphan age, no account)', async () => {
    const old = new Date(NOW.getTime() - ORPHAN_AGE_MS - 1);
    const { deps, identities, emails } = fakes({ identities: new Map([[input.email, old]]) });
    const result = await register(input, deps);
    expect(result.accountId).toMatch(/^br_/);
    expect(identities.get(input.email)).toBe(NOW);
    expect(emails.has(input.email)).toBe(true);
  });
  it('turns a password the identity service refuses into a 400 on password', async () => {
    const { deps } = fakes({ createError: new PasswordRefused() });
    expect(await statusOf(register(input, deps))).toBe(400);
  });
});

describe('register: verification e-mail and the per-IP limit', () => {
  it('sends ONE verification e-mail with a link into appUrl, and wraps the refresh token in epoch 0', async () => {
    const { deps, sent } = fakes();
    const result = await register(input, deps, '203.0.113.9');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.to).toBe(input.email);
    expect(sent[0]!.subject).toBe('[Burnrate] Verify your e-mail address');
    expect(sent[0]!.lines).toContainEqual(expect.stringMatching(/^http:\/\/app\.test\/verify-email\?token=[A-Za-z0-9_-]{43}$/));
    expect(result.refreshToken).toBe(wrapRefreshToken('r', '0'));
  });
  it('a failed send does not fail the register', async () => {
    const { deps, emails } = fakes({ mailError: new Error('MessageRejected') });
    const result = await register(input, deps);
    expect(result.accountId).toMatch(/^br_/);
    expect(emails.has(input.email)).toBe(true);
  });
  it('past the limit: 429 with Retry-After, and nothing else happens (no identity, no items, no e-mail)', async () => {
    const { deps, identities, emails, calls, sent } = fakes({ limited: true });
    const error = await register(input, deps, '203.0.113.9').catch((e: HttpError) => e);
    expect(error).toMatchObject({ status: 429, headers: { 'retry-after': '42' } });
    expect(calls).toEqual(['limit register']);
    expect(identities.size + emails.size + sent.length).toBe(0);
  });
});

describe('refresh: the session epoch', () => {
  it('refreshes a token of the current epoch (0 for a user whose sessions never ended, wrapped or not)', async () => {
    expect(await statusOf(refresh({ refreshToken: wrapRefreshToken('r', '0') }, fakes().deps))).toBe(0);
    expect(await statusOf(refresh({ refreshToken: 'r' }, fakes().deps))).toBe(0);
    expect(await statusOf(refresh({ refreshToken: wrapRefreshToken('r', 'E2') }, fakes({ epoch: 'E2' }).deps))).toBe(0);
  });
  it('refuses one of an ended epoch (401), and one of a user that is gone', async () => {
    expect(await statusOf(refresh({ refreshToken: wrapRefreshToken('r', '0') }, fakes({ epoch: 'E2' }).deps))).toBe(401);
    expect(await statusOf(refresh({ refreshToken: 'r' }, fakes({ epoch: 'E2' }).deps))).toBe(401);
    expect(await statusOf(refresh({ refreshToken: wrapRefreshToken('r', 'E1') }, fakes({ epoch: 'E2' }).deps))).toBe(401);
    expect(await statusOf(refresh({ refreshToken: wrapRefreshToken('r', '0') }, fakes({ epoch: null }).deps))).toBe(401);
  });
});

describe('login', () => {
  it('counts the attempt before trying the password, gives it back on success, keeps it on failure', async () => {
    const ok = fakes({ identities: new Map([[input.email, NOW]]) });
    await login({ email: input.email, password: 'x' }, ok.deps, '198.51.100.1');
    expect(ok.calls).toEqual(['limit login', 'give back login']);
    const bad = fakes();
    expect(await statusOf(login({ email: input.email, password: 'x' }, bad.deps))).toBe(401);
    expect(bad.calls).toEqual(['limit login']);
  });
  it('locked (429): the password is not even tried', async () => {
    const { deps, calls } = fakes({ identities: new Map([[input.email, NOW]]), limited: true });
    expect(await statusOf(login({ email: input.email, password: 'x' }, deps))).toBe(429);
    expect(calls).toEqual(['limit login']);
  });
  it('hands out the refresh token in the user’s current epoch', async () => {
    const { deps } = fakes({ identities: new Map([[input.email, NOW]]), epoch: 'E7' });
    expect((await login({ email: input.email, password: 'x' }, deps)).refreshToken).toBe(wrapRefreshToken('r', 'E7'));
  });

  it('returns the ids from the token', async () => {
    const { deps } = fakes({ identities: new Map([[input.email, NOW]]) });
    expect(await login({ email: input.email, password: 'x' }, deps)).toMatchObject({ accountId: 'br_1', userId: 'usr_1' });
  });
  it('answers 401 for an unknown user', async () => {
    const { deps } = fakes();
    expect(await statusOf(login({ email: 'nobody@example.com', password: 'x' }, deps))).toBe(401);
  });
  it('a sign-in during which the sessions ended (the epoch changed between the reads around the password check): 401', async () => {
    const { deps } = fakes({ identities: new Map([[input.email, NOW]]), epochs: ['E1'], epoch: 'E2' });
    expect(await statusOf(login({ email: input.email, password: 'x' }, deps))).toBe(401);
  });
  it('a token of the second the sessions ended in is admitted by its jti in the epoch read first; not admitted: 401', async () => {
    const validAfter = new Date(NOW.getTime() + 300).toISOString();
    const ok = fakes({ identities: new Map([[input.email, NOW]]), epoch: 'E3', validAfter });
    expect((await login({ email: input.email, password: 'x' }, ok.deps)).refreshToken).toBe(wrapRefreshToken('r', 'E3'));
    expect(ok.calls).toContain('admit jti-1 in E3');
    const refused = fakes({ identities: new Map([[input.email, NOW]]), epoch: 'E3', validAfter, admits: false });
    expect(await statusOf(login({ email: input.email, password: 'x' }, refused.deps))).toBe(401);
    // A token of a later second needs no admission.
    const later = fakes({ identities: new Map([[input.email, NOW]]), epoch: 'E3', validAfter, iat: NOW.getTime() / 1000 + 3 });
    await login({ email: input.email, password: 'x' }, later.deps);
    expect(later.calls.filter((c) => c.startsWith('admit'))).toEqual([]);
  });
});

describe('RegisterBody', () => {
  const errorsOf = (body: unknown) => {
    const result = safeParse(RegisterBody, body);
    return result.success ? [] : result.error.issues.map((i) => i.path.join('.') || (i as { keys?: string[] }).keys?.join(','));
  };
  it('trims and lower-cases the e-mail', () => {
    const result = safeParse(RegisterBody, { ...input, email: '  Ada@Example.COM ' });
    expect(result.success && result.data.email).toBe('ada@example.com');
  });
  it.each(['short1A', 'alllowercase1', 'ALLUPPERCASE1', 'NoDigitsHere'])('refuses the password %s', (password) => {
    expect(errorsOf({ ...input, password })).toEqual(['password']);
  });
  it('refuses empty and over-long names, a bad e-mail and unknown fields', () => {
    expect(errorsOf({ ...input, firstName: '  ' })).toEqual(['firstName']);
    expect(errorsOf({ ...input, lastName: 'x'.repeat(101) })).toEqual(['lastName']);
    expect(errorsOf({ ...input, companyName: '' })).toEqual(['companyName']);
    expect(errorsOf({ ...input, email: 'not-an-email' })).toEqual(['email']);
    expect(errorsOf({ ...input, accountId: 'br_x' })).toEqual(['accountId']);
  });
});
