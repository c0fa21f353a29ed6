import { httpHandler, ok } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ExportParams } from '#shared/spend/schemas.ts';
import { spendExportStatus } from '#shared/spend/exports.ts';

/** GET /spend/exports/{id} → 200 the export's status; once ready, a download link valid 1 hour (another account's id: 404) */
export const handler = httpHandler({ auth: jwtAuth, params: ExportParams }, async ({ auth, params }) => ok(await spendExportStatus(auth.accountId, params.id)));
