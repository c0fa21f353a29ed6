/**
 * The pending invitations of an account as the API shows them (GET /invitations). Apart from service.ts, so the list
 * function loads only what listing needs (not the identity provider, e-mail or sign-up modules of accepting).
 */
import { encodeCursor, itemStartKey } from '#shared/http/cursor.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { isId } from '#shared/ids.ts';
import { keys } from '#shared/db/keys.ts';
import * as repo from '#shared/db/invitations.ts';
import type { ListInvitationsQuery } from '#shared/invitations/schemas.ts';

/** An invitation as the API shows it. */
export function invitationView(invitation: repo.Invitation) {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    status: invitation.status,
    invitedBy: invitation.invitedBy,
    expiresAt: invitation.expiresAt,
    createdAt: invitation.createdAt,
  };
}

const LIST = 'invitations';

export async function listInvitations(accountId: string, query: ListInvitationsQuery, now = new Date()) {
  const startKey = itemStartKey(query.cursor, accountId, LIST, 'INVITATION#', (id) => isId('invitation', id), (id) => keys.invitation(accountId, id));
  const page = await repo.listPendingInvitations(accountId, query.limit ?? DEFAULT_LIMIT, now, startKey);
  return { items: page.items.map(invitationView), nextCursor: page.lastKey ? encodeCursor(accountId, LIST, page.lastKey) : null };
}
