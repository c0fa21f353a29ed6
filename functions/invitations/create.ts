import { created, httpHandler } from '#shared/http/handler.ts';
import { CreateInvitationBody } from '#shared/invitations/schemas.ts';
import { invite } from '#shared/invitations/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /invitations {email, role} → 201 the invitation; the address gets the link. 409 email-taken / pending; 429 user-limit-reached. */
export const handler = httpHandler({ auth: jwtAuth, body: CreateInvitationBody }, async ({ auth, body }) => created(await invite(auth, body)));
