import { httpHandler, ok } from '#shared/http/handler.ts';
import { ListInvitationsQuery } from '#shared/invitations/schemas.ts';
import { listInvitations } from '#shared/invitations/list.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /invitations?limit&cursor → 200 {items, nextCursor}: the pending invitations, newest first. */
export const handler = httpHandler({ auth: jwtAuth, query: ListInvitationsQuery }, async ({ auth, query }) =>
  ok(await listInvitations(auth.accountId, query)),
);
