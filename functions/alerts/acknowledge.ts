import { httpHandler, ok } from '#shared/http/handler.ts';
import { AlertParams } from '#shared/alerts/schemas.ts';
import { acknowledge } from '#shared/alerts/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** PATCH /alerts/{id}/acknowledge (no body) → 200 the alert; a second acknowledge keeps the first time */
export const handler = httpHandler({ auth: jwtAuth, params: AlertParams }, async ({ auth, params }) => ok(await acknowledge(auth, params.id)));
