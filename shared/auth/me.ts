/** GET /auth/me: the caller's user and account, read in one BatchGetItem. */
import { NotFound } from '#shared/http/errors.ts';
import { getAccount, getAccountAndUser } from '#shared/db/accounts.ts';
import type { Account, User } from '#shared/db/accounts.ts';
import { updateProfile, type ProfileChanges } from '#shared/db/user-updates.ts';
import type { AuthContext } from '#shared/http/auth-context.ts';

/** A user as the API shows it (GET /auth/me, GET /users). */
export function userView(user: User) {
  return {
    userId: user.userId,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    role: user.role,
    emailVerified: user.emailVerified,
    alertEmails: user.alertEmails,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}

/** The body of GET /auth/me (and of PATCH /auth/me). */
export function meView(account: Account, user: User) {
  return {
    user: userView(user),
    account: {
      accountId: account.accountId,
      companyName: account.companyName,
      plan: account.plan,
      billingStatus: account.billingStatus,
      createdAt: account.createdAt,
    },
  };
}

export async function me(auth: AuthContext) {
  const { account, user } = await getAccountAndUser(auth.accountId, auth.userId);
  if (!account || !user) throw new NotFound('The account or user does not exist.');
  return meView(account, user);
}

/** PATCH /auth/me: the caller's names and alert e-mail switch (one UpdateItem), answered like GET /auth/me. */
export async function updateMe(auth: AuthContext, changes: ProfileChanges, now = new Date()) {
  const [user, account] = await Promise.all([updateProfile(auth.accountId, auth.userId, changes, now), getAccount(auth.accountId)]);
  if (!account || !user) throw new NotFound('The account or user does not exist.');
  return meView(account, user);
}
