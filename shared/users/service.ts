/**
 * GET /users, PATCH /users/{userId}, DELETE /users/{userId}: a team's members. Who may call is the route table's
 * business (roles: shared/auth/roles.ts); this is what happens.
 */
import { Conflict, NotFound } from '#shared/http/errors.ts';
import { encodeCursor, itemStartKey } from '#shared/http/cursor.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { logger } from '#shared/http/logger.ts';
import { isId } from '#shared/ids.ts';
import { keys } from '#shared/db/keys.ts';
import { getUser, type Role } from '#shared/db/accounts.ts';
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

/** Changes a user's role; the last admin can't be demoted (409 last-admin). */
export async function setRole(auth: AuthContext, userId: string, role: Role, now = new Date()) {
  for (let attempt = 0; ; attempt++) {
    const user = await userOf(auth.accountId, userId);
    try {
      const changed = await changeRole(user, role, now);
      forgetUser(auth.accountId, userId);
      return userView(changed);
    } catch (error) {
      if (error instanceof LastAdmin) throw lastAdmin();
      if (error instanceof UserChanged && attempt < 3) continue;
      throw error;
    }
  }
}

/**
 * Removes a user: its items go at once (its tokens are refused within the role cache's 30 s), then its identity —
 * which ends its refresh tokens at once. The last admin can't be removed (409 last-admin).
 */
export async function deleteUser(auth: AuthContext, userId: string, deps: { identity: Pick<Identity, 'deleteUser'> } = { identity }) {
  let email: string | undefined;
  for (let attempt = 0; email === undefined; attempt++) {
    const user = await userOf(auth.accountId, userId);
    try {
      await removeUser(user);
      email = user.email;
    } catch (error) {
      if (error instanceof LastAdmin) throw lastAdmin();
      if (error instanceof UserChanged && attempt < 3) continue;
      throw error;
    }
  }
  forgetUser(auth.accountId, userId);
  await deps.identity.deleteUser(email).catch((error: unknown) => {
    // The items are gone (the user can't act; its address can register again, since register removes an orphaned
    // identity); an identity left behind is logged for an operator.
    logger.error('removed user: its identity could not be deleted', { userId, error: String(error) });
  });
}
