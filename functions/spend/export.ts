import { httpHandler } from '#shared/http/handler.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';
import { ExportQuery } from '#shared/spend/schemas.ts';
import { exportSpend } from '#shared/spend/export.ts';

/** GET /spend/export?from&to → 200 text/csv, one row per key × day × model with activity (≤ 92 days, ≤ 25,000 rows: else 400) */
export const handler = httpHandler({ auth: jwtAuth, query: ExportQuery }, async ({ auth, query }) => {
  const { filename, csv } = await exportSpend(auth.accountId, query);
  return { status: 200, text: csv, headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${filename}"` } };
});
