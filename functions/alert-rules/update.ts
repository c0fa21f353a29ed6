import { httpHandler, ok } from '#shared/http/handler.ts';
import { PatchRuleBody, RuleParams } from '#shared/rules/schemas.ts';
import { updateRule } from '#shared/rules/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** PATCH /alert-rules/{id} {fields to update} → 200 the rule (config checked against the merged type). 404 / 409 as budgets. */
export const handler = httpHandler({ auth: jwtAuth, params: RuleParams, body: PatchRuleBody }, async ({ auth, params, body }) =>
  ok(await updateRule(auth.accountId, params.id, body)),
);
