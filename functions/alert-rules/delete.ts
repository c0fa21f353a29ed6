import { httpHandler, noContent } from '#shared/http/handler.ts';
import { RuleParams } from '#shared/rules/schemas.ts';
import { deleteRule } from '#shared/rules/service.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** DELETE /alert-rules/{id} → 204. Unknown or another account's id: 404. */
export const handler = httpHandler({ auth: jwtAuth, params: RuleParams }, async ({ auth, params }) => {
  await deleteRule(auth.accountId, params.id);
  return noContent();
});
