/** Request schemas of /invitations and POST /auth/accept-invitation. */
import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';
import { Email, name, Password } from '#shared/auth/schemas.ts';
import { RoleValue } from '#shared/users/schemas.ts';

export const CreateInvitationBody = z.strictObject({ email: Email, role: RoleValue });
export type CreateInvitationBody = z.infer<typeof CreateInvitationBody>;

export const ListInvitationsQuery = z.strictObject({ limit: Limit, cursor: Cursor });
export type ListInvitationsQuery = z.infer<typeof ListInvitationsQuery>;

export const InvitationParams = z.strictObject({ id: z.string().check(z.maxLength(64, 'id is too long.')) });

/** GET /auth/invitation?token=: the link's token (its exact shape is checked by the domain: an invalid-token 400). */
export const InvitationQuery = z.strictObject({
  token: z.string().check(z.minLength(1, 'token is required.'), z.maxLength(512, 'token is too long.')),
});
export type InvitationQuery = z.infer<typeof InvitationQuery>;

export const AcceptInvitationBody = z.strictObject({
  token: z.string().check(z.minLength(1, 'token is required.'), z.maxLength(512, 'token is too long.')),
  password: Password,
  firstName: name('firstName'),
  lastName: name('lastName'),
});
export type AcceptInvitationBody = z.infer<typeof AcceptInvitationBody>;
