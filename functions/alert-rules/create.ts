import { created, httpHandler } from '#shared/http/handler.ts';
import { CreateRuleBody } from '#shared/rules/schemas.ts';
import { createRule } from '#shared/rules/service.ts';

/** POST /alert-rules {type, name, config, channels, isActive?} → 201 the rule (100 per account: 409 past it). */
export const handler = httpHandler({ auth: 'jwt', body: CreateRuleBody }, async ({ auth, body }) =>
  created(await createRule(auth.accountId, body)),
);
