import { httpHandler, ok } from '#shared/http/handler.ts';
import { AlertParams } from '#shared/alerts/schemas.ts';
import { acknowledge } from '#shared/alerts/service.ts';

/** PATCH /alerts/{id}/acknowledge (no body) → 200 the alert; a second acknowledge keeps the first time */
export const handler = httpHandler({ auth: 'jwt', params: AlertParams }, async ({ auth, params }) => ok(await acknowledge(auth, params.id)));
