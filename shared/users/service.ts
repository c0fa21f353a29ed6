/**
 * GET /users, PATCH /users/{userId}, DELETE /users/{userId}: a team's members. Who may call is the route table's
 * business (roles: shared/access/roles.ts); this is what happens.
 */
import { Conflict, NotFound } from '#shared/http/errors.ts';
import { encodeCursor, itemStartKey } from '#shared/http/cursor.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { logger } from '#shared/http/logger.ts';
import { isId } from '#shared/ids.ts';
import { keys } from '#shared/db/keys.ts';
import { getUser, type Role, type User } from '#shared/db/accounts.ts';
import { revokeInvitationsBy } from '#shared/db/invitations.ts';
import { changeRole, LastAdmin, listUsers, removeUser, UserChanged } from '#shared/db/users.ts';
import { userView } from '#shared/auth/me.ts';
import { identity, type Identity } from '#shared/auth/identity.ts';
import { forgetUser, type AuthContext } from '#shared/http/auth-context.ts';
import type { ListUsersQuery } from '#shared/users/schemas.ts';

const lastAdmin = () => new Conflict('An account keeps at least one admin: make another user admin first.', 'last-admin');
const LIST = 'users';

export async function listUsersView(accountId: string, query: ListUsersQuery) {
  const startKey = itemStartKey(query.cursor, accountId, LIST, 'USER#', (id) => isId('user', id), (id) => keys.user(accountId, id));
  const page = await listUsers(accountId, query.limit ?? DEFAULT_LIMIT, startKey);
  return { items: page.items.map(userView), nextCursor: page.lastKey ? encodeCursor(accountId, LIST, page.lastKey) : null };
}

async function userOf(accountId: string, userId: string) {
  const user = isId('user', userId) ? await getUser(accountId, userId, true) : undefined;
  if (!user) throw new NotFound('No such user.');
  return user;
}

/**
 * How often a change of a user is tried again after it lost a race with another change of the same user (re-reading
 * it each time). Every lost race means another change went through, so N concurrent changes settle within N tries;
 * past this bound the answer is a 409 `user-changed`, never a 500.
 */
export const USER_CHANGE_ATTEMPTS = 40;

const userChanged = () => new Conflict('The user was changed by another request at the same moment: read it and try again.', 'user-changed');

/** Runs `change` on a fresh read of the user until it no longer loses a race (UserChanged). */
async function onFreshUser<T>(accountId: string, userId: string, change: (user: User) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const user = await userOf(accountId, userId);
    try {
      return await change(user);
    } catch (error) {
      if (error instanceof LastAdmin) throw lastAdmin();
      if (!(error instanceof UserChanged)) throw error;
      if (attempt >= USER_CHANGE_ATTEMPTS) throw userChanged();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * Math.min(attempt, 5)));
    }
  }
}

/**
 * Changes a user's role; the last admin can't be demoted (409 last-admin). An admin who stops being one loses the
 * invitations it sent (docs/features/identity-and-teams.md): they are revoked after the change (the invitation
 * transaction checks that its inviter is an admin, so none lands after it).
 */
export async function setRole(auth: AuthContext, userId: string, role: Role, now = new Date()) {
  const { before, after } = await onFreshUser(auth.accountId, userId, async (user) => ({ before: user, after: await changeRole(user, role, now) }));
  forgetUser(auth.accountId, userId);
  if (before.role === 'admin' && after.role !== 'admin') await revokeInvitationsBy(auth.accountId, userId);
  return userView(after);
}

/**
 * Removes a user: its items go at once (its tokens are refused within the role cache's 30 s), the invitations it sent
 * are revoked, then its identity goes — which ends its refresh tokens at once. The last admin can't be removed (409
 * last-admin). Two removals at once: one 204, the other 404.
 */
export async function deleteUser(auth: AuthContext, userId: string, deps: { identity: Pick<Identity, 'deleteUser'> } = { identity }) {
  const removed = await onFreshUser(auth.accountId, userId, async (user) => {
    await removeUser(user);
    return user;
  });
  forgetUser(auth.accountId, userId);
  await revokeInvitationsBy(auth.accountId, userId);
  await deps.identity.deleteUser(removed.email).catch((error: unknown) => {
    // The items are gone (the user can't act; its address can register again, since register removes an orphaned
    // identity); an identity left behind is logged for an operator.
    logger.error('removed user: its identity could not be deleted', { userId, error: String(error) });
  });
}
