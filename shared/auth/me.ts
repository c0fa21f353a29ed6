/** GET /auth/me: the caller's user and account, read in one BatchGetItem. */
import { NotFound } from '#shared/http/errors.ts';
import { getAccountAndUser } from '#shared/db/accounts.ts';
import type { AuthContext } from '#shared/http/auth-context.ts';

export async function me(auth: AuthContext) {
  const { account, user } = await getAccountAndUser(auth.accountId, auth.userId);
  if (!account || !user) throw new NotFound('The account or user does not exist.');
  return {
    user: { userId: user.userId, email: user.email, firstName: user.firstName, lastName: user.lastName, createdAt: user.createdAt },
    account: {
      accountId: account.accountId,
      companyName: account.companyName,
      plan: account.plan,
      billingStatus: account.billingStatus,
      createdAt: account.createdAt,
    },
  };
}
