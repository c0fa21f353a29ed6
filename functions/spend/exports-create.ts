import { httpHandler } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { CreateExportBody } from '#shared/spend/schemas.ts';
import { startSpendExport } from '#shared/spend/exports.ts';

/** POST /spend/exports {from?, to?} → 202 the export, `running` (≤ 366 days; at most 2 running per account, else 429) */
export const handler = httpHandler({ auth: jwtAuth, body: CreateExportBody, optionalBody: true }, async ({ auth, body }) => {
  const view = await startSpendExport(auth.accountId, auth.userId, body);
  return { status: 202, body: view, headers: { location: `/api/spend/exports/${view.id}` } };
});
