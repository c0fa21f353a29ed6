import { httpHandler, ok } from '#shared/http/handler.ts';
import { KeyParams } from '#shared/keys/schemas.ts';
import { releaseKey } from '#shared/anomaly/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /keys/{hash}/release → 200: the key's spend-anomaly holds let go (a member). Another account's key: 404; none held: 409. */
export const handler = httpHandler({ auth: jwtAuth, params: KeyParams }, async ({ auth, params }) => ok(await releaseKey(auth.accountId, params.hash, auth.userId)));
