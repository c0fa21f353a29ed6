import { httpHandler, ok } from '#shared/http/handler.ts';
import { CustomersQuery } from '#shared/spend/schemas.ts';
import { getCustomers } from '#shared/spend/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /customers?from&to&sort&limit&cursor → 200 {items: [{customerId, costUsd, requests, …}], nextCursor} */
export const handler = httpHandler({ auth: jwtAuth, query: CustomersQuery }, async ({ auth, query }) => ok(await getCustomers(auth.accountId, query)));
