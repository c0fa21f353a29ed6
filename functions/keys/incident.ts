import { httpHandler, ok } from '#shared/http/handler.ts';
import { KeyParams } from '#shared/keys/schemas.ts';
import { keyIncident } from '#shared/anomaly/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** GET /keys/{hash}/incident → 200: the key's last 24 hours against its usual rate, and the spend-anomaly rules' holds of it. */
export const handler = httpHandler({ auth: jwtAuth, params: KeyParams }, async ({ auth, params }) => ok(await keyIncident(auth.accountId, params.hash)));
