import { created, httpHandler } from '#shared/http/handler.ts';
import { AcceptInvitationBody } from '#shared/invitations/schemas.ts';
import { acceptInvitation } from '#shared/invitations/service.ts';

/** POST /auth/accept-invitation {token, password, firstName, lastName} → 201 {accountId, userId, token, refreshToken, expiresIn} */
export const handler = httpHandler({ auth: 'none', body: AcceptInvitationBody }, async ({ body }) => created(await acceptInvitation(body)));
