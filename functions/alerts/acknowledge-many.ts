import { httpHandler, ok } from '#shared/http/handler.ts';
import { AcknowledgeBody } from '#shared/alerts/schemas.ts';
import { acknowledgeMany } from '#shared/alerts/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /alerts/acknowledge {ids} | {all: true, type?, keyHash?} → 200 {acknowledged}: each triggered alert once */
export const handler = httpHandler({ auth: jwtAuth, body: AcknowledgeBody }, async ({ auth, body }) => ok(await acknowledgeMany(auth, body)));
