import { httpHandler } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ConnectionParams } from '#shared/connections/schemas.ts';
import { syncNow } from '#shared/connections/service.ts';

/** POST /connections/{id}/sync → 202 {queuedAt}; at most once a minute per connection (429 with Retry-After). */
export const handler = httpHandler({ auth: jwtAuth, params: ConnectionParams }, async ({ auth, params }) => ({
  status: 202,
  body: await syncNow(auth.accountId, params.id),
}));
