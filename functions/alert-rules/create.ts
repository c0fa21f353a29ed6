import { created, httpHandler } from '#shared/http/handler.ts';
import { CreateRuleBody } from '#shared/rules/schemas.ts';
import { createRule } from '#shared/rules/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** POST /alert-rules {type, name, config, channels, isActive?} → 201 the rule (100 per account: 409 past it). */
export const handler = httpHandler({ auth: jwtAuth, body: CreateRuleBody }, async ({ auth, body }) =>
  created(await createRule(auth.accountId, body)),
);
