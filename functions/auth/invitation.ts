import { httpHandler, ok } from '#shared/http/handler.ts';
import { InvitationQuery } from '#shared/invitations/schemas.ts';
import { invitationPreview } from '#shared/invitations/service.ts';

/** GET /auth/invitation?token= → 200 {company, email, role, expiresAt} (no auth); a bad, used, revoked or expired token: 400 */
export const handler = httpHandler({ auth: 'none', query: InvitationQuery }, async ({ query }) => ok(await invitationPreview(query.token)));
