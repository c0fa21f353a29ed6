/**
 * Invitations: an admin invites an address with a role; the link in the e-mail makes a user of the account
 * (POST /auth/accept-invitation). Seats (users + pending invitations) stay within the plan's limit in force.
 */
import { config } from '#shared/config.ts';
import { Conflict, Forbidden, InvalidToken, NotFound, TooManyRequests } from '#shared/http/errors.ts';
import { encodeCursor, itemStartKey } from '#shared/http/cursor.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { logger } from '#shared/http/logger.ts';
import { isId, newId } from '#shared/ids.ts';
import { keys } from '#shared/db/keys.ts';
import { emailRegistered, getAccount, getUser, seatsInUse, type User } from '#shared/db/accounts.ts';
import * as repo from '#shared/db/invitations.ts';
import { claimLinkToken, getLinkToken, releaseLinkToken } from '#shared/db/link-tokens.ts';
import { emailSubject, enforce, giveBack } from '#shared/auth/limits.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { LINK_TOKEN_PATTERN, linkTokenHash, newLinkToken, TOKEN_TTL_MS } from '#shared/auth/tokens.ts';
import { createIdentity, type Deps as AuthDeps } from '#shared/auth/service.ts';
import { identity } from '#shared/auth/identity.ts';
import { sendPlainEmail } from '#shared/notify/email.ts';
import { invitationEmail } from '#shared/invitations/email.ts';
import type { AuthContext } from '#shared/http/auth-context.ts';
import type { AcceptInvitationBody, CreateInvitationBody, ListInvitationsQuery } from '#shared/invitations/schemas.ts';
import * as accounts from '#shared/db/accounts.ts';

// The list and the view live apart (list.ts): GET /invitations then loads none of accepting's or inviting's modules.
import { invitationView } from '#shared/invitations/list.ts';
export { invitationView, listInvitations } from '#shared/invitations/list.ts';

const invalidToken = () => new InvalidToken('The invitation link is unknown, used, revoked or expired: ask an admin for a new invitation.');
const emailTaken = () => new Conflict('This address already belongs to a Burnrate user.', 'email-taken');
const seatsFull = (seatLimit: number) =>
  new TooManyRequests(
    `The account's seats are taken: users plus pending invitations may not pass ${seatLimit}. Revoke an invitation, remove a user or upgrade the plan.`,
    'user-limit-reached',
  );

/**
 * POST /invitations (docs/features/identity-and-teams.md). The order of the checks is the contract's, so the answers
 * tell nothing about the address beyond what register tells:
 * 1. seats full → 429 user-limit-reached, before anything about the address is looked at;
 * 2. the e-mail caps — 20 invitation e-mails per account a day, 3 per invited address a day → 429 with Retry-After
 *    (a probe of a registered address counts like a sent invitation; only an invitation that fails for seats or a
 *    pending duplicate gives its counts back);
 * 3. the address has a user → 409 email-taken, whether seats were free or not;
 * 4. one transaction: the seat, the invitation, its link, and that the inviter is still an admin.
 */
export async function invite(auth: AuthContext, body: CreateInvitationBody, now = new Date()) {
  const [account, inviter] = await Promise.all([getAccount(auth.accountId, true), getUser(auth.accountId, auth.userId)]);
  if (!account) throw new NotFound('The account does not exist.');
  const seatLimit = limitsInForce(account, now).users;
  if (seatsInUse(account, now) >= seatLimit) throw seatsFull(seatLimit);
  const perAccount = await enforce('invitation-account', auth.accountId, now);
  const perAddress = await enforce('invitation-address', emailSubject(body.email), now).catch(async (error: unknown) => {
    await giveBack(perAccount);
    throw error;
  });
  if (await emailRegistered(body.email)) throw emailTaken();
  const token = newLinkToken();
  const invitation: repo.Invitation = {
    id: newId('invitation'),
    accountId: auth.accountId,
    email: body.email,
    role: body.role,
    status: 'pending',
    invitedBy: auth.userId,
    expiresAt: new Date(now.getTime() + TOKEN_TTL_MS.invitation).toISOString(),
    createdAt: now.toISOString(),
    tokenHash: linkTokenHash(token),
  };
  try {
    await repo.createInvitation(invitation, token, seatLimit, now);
  } catch (error) {
    if (error instanceof repo.EmailHasUser) throw emailTaken();
    await Promise.all([giveBack(perAccount), giveBack(perAddress)]);
    if (error instanceof repo.SeatsFull) throw seatsFull(seatLimit);
    if (error instanceof repo.AlreadyInvited) throw new Conflict('This address has a pending invitation to the account already.', 'invitation-pending');
    if (error instanceof repo.InviterNotAdmin) throw new Forbidden('Only an admin invites; your role changed.');
    throw error;
  }
  const inviterName = inviter ? `${inviter.firstName} ${inviter.lastName}` : 'An admin';
  await sendPlainEmail(
    invitationEmail({ to: invitation.email, companyName: account.companyName, inviterName, role: invitation.role, link: `${config().appUrl}/accept-invitation?token=${token}`, id: invitation.id }),
    now,
  ).catch((error: unknown) => logger.error('invitation e-mail failed: revoke and invite again', { invitationId: invitation.id, error: String(error) }));
  return invitationView(invitation);
}

/** Revokes a pending invitation (its link stops working). Not pending, unknown or another account's: 404. */
export async function revoke(auth: AuthContext, invitationId: string, now = new Date()): Promise<void> {
  const invitation = isId('invitation', invitationId) ? await repo.getInvitation(auth.accountId, invitationId, now) : undefined;
  if (!invitation || invitation.status !== 'pending' || !(await repo.revokeInvitation(invitation))) {
    throw new NotFound('No such pending invitation.');
  }
}

export interface AcceptDeps {
  identity: AuthDeps['identity'];
  accounts: AuthDeps['accounts'];
  now: () => Date;
}

const defaultDeps: AcceptDeps = { identity, accounts, now: () => new Date() };

/** The stored invitation link token (strongly consistent), or 400 invalid-token when it is bad, used or expired. */
async function invitationLink(token: string, now: Date): Promise<{ accountId: string; invitationId: string }> {
  if (!LINK_TOKEN_PATTERN.test(token)) throw invalidToken();
  const stored = await getLinkToken(token);
  if (!stored || stored.kind !== 'invitation' || stored.usedAt || stored.expiresAt * 1000 <= now.getTime() || !stored.invitationId) throw invalidToken();
  return { accountId: stored.accountId, invitationId: stored.invitationId };
}

/** The invitation, if it is pending and `token` is its link; else 400 invalid-token. */
function pendingOf(invitation: repo.Invitation | undefined, token: string): repo.Invitation {
  if (!invitation || invitation.status !== 'pending' || invitation.tokenHash !== linkTokenHash(token)) throw invalidToken();
  return invitation;
}

/**
 * GET /auth/invitation?token= (no auth): what the invitation page shows — the inviting company from our records,
 * never from the URL. A bad, used, revoked or expired token: 400 invalid-token. Two reads: the token, then the
 * invitation and the account in one BatchGetItem.
 */
export async function invitationPreview(token: string, now = new Date()) {
  const link = await invitationLink(token, now);
  const { invitation, account } = await repo.getInvitationAndAccount(link.accountId, link.invitationId, now);
  const pending = pendingOf(invitation, token);
  if (!account) throw invalidToken();
  return { company: account.companyName, email: pending.email, role: pending.role, expiresAt: pending.expiresAt };
}

/**
 * POST /auth/accept-invitation: a user of the inviting account, with the invited role and a verified address. The
 * link is claimed first (one request at a time: of concurrent accepts, the others get 400 invalid-token, never the
 * 409 email-taken the winner's new identity would give them); a failure gives the claim back.
 */
export async function acceptInvitation(body: AcceptInvitationBody, deps: AcceptDeps = defaultDeps) {
  const now = deps.now();
  const link = await invitationLink(body.token, now);
  const invitation = pendingOf(await repo.getInvitation(link.accountId, link.invitationId, now), body.token);
  const claimId = newLinkToken();
  if (!(await claimLinkToken(body.token, 'invitation', claimId, now))) throw invalidToken();
  try {
    return await createInvitedUser(invitation, body, now, deps);
  } catch (error) {
    await releaseLinkToken(body.token, claimId).catch((release: unknown) => logger.error('invitation claim not released', { release: String(release) }));
    throw error;
  }
}

async function createInvitedUser(invitation: repo.Invitation, body: AcceptInvitationBody, now: Date, deps: AcceptDeps) {
  if (await deps.accounts.emailRegistered(invitation.email)) throw emailTaken();
  const at = now.toISOString();
  const user: User = {
    userId: newId('user'),
    accountId: invitation.accountId,
    email: invitation.email,
    firstName: body.firstName,
    lastName: body.lastName,
    role: invitation.role,
    emailVerified: true,
    alertEmails: true,
    createdAt: at,
    updatedAt: at,
  };
  await createIdentity({ email: user.email, password: body.password, accountId: user.accountId, userId: user.userId }, deps);
  try {
    await repo.acceptInvitation(invitation, body.token, user, now);
  } catch (error) {
    await deps.identity.deleteUser(user.email).catch((cleanup: unknown) => logger.error('accept rollback failed', { cleanup: String(cleanup) }));
    if (error instanceof repo.InvitationUnusable) throw invalidToken();
    if (error instanceof repo.EmailHasUser) throw emailTaken();
    throw error;
  }
  const session = await deps.identity.signIn(user.email, body.password);
  return { accountId: user.accountId, userId: user.userId, ...session };
}
