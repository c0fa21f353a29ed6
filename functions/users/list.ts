import { httpHandler, ok } from '#shared/http/handler.ts';
import { ListUsersQuery } from '#shared/users/schemas.ts';
import { listUsersView } from '#shared/users/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /users?limit&cursor → 200 {items, nextCursor}: the account's users, oldest first. */
export const handler = httpHandler({ auth: jwtAuth, query: ListUsersQuery }, async ({ auth, query }) => ok(await listUsersView(auth.accountId, query)));
