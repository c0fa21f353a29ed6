/** The enforcement endpoints' request schemas, apart from their reads (api.ts): the OpenAPI document takes them without the data layer. */
import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';

export const ListActionsQuery = z.strictObject({ budgetId: z.optional(z.string()), limit: Limit, cursor: Cursor });
export type ListActionsQuery = z.infer<typeof ListActionsQuery>;
