/** GET /auth/me: the caller's user and account, read in one BatchGetItem. */
import { NotFound } from '#shared/http/errors.ts';
import { getAccountAndUser } from '#shared/db/accounts.ts';
import type { User } from '#shared/db/accounts.ts';
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

export async function me(auth: AuthContext) {
  const { account, user } = await getAccountAndUser(auth.accountId, auth.userId);
  if (!account || !user) throw new NotFound('The account or user does not exist.');
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
