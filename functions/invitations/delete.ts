import { httpHandler, noContent } from '#shared/http/handler.ts';
import { InvitationParams } from '#shared/invitations/schemas.ts';
import { revoke } from '#shared/invitations/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** DELETE /invitations/{id} → 204: its link stops working, its seat comes back. Not pending or unknown: 404. */
export const handler = httpHandler({ auth: jwtAuth, params: InvitationParams }, async ({ auth, params }) => {
  await revoke(auth, params.id);
  return noContent();
});
