/** Request schemas of /users (zod/mini: they validate requests and feed OpenAPI). */
import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';

export const RoleValue = z.enum(['admin', 'member', 'viewer'], 'role must be one of admin, member, viewer.');

export const ListUsersQuery = z.strictObject({ limit: Limit, cursor: Cursor });
export type ListUsersQuery = z.infer<typeof ListUsersQuery>;

export const UserParams = z.strictObject({ userId: z.string().check(z.maxLength(64, 'userId is too long.')) });

export const PatchUserBody = z.strictObject({ role: RoleValue });
export type PatchUserBody = z.infer<typeof PatchUserBody>;
