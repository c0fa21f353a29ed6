import { httpHandler, ok } from '#shared/http/handler.ts';
import { KeyParams, LabelBody } from '#shared/keys/schemas.ts';
import { labelKey } from '#shared/keys/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** PATCH /keys/{hash} {label} → 200 the key */
export const handler = httpHandler({ auth: jwtAuth, params: KeyParams, body: LabelBody }, async ({ auth, params, body }) =>
  ok(await labelKey(auth.accountId, params.hash, body)),
);
