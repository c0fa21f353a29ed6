/**
 * GET /spend/export: the account's key × day × model rows of a range as CSV, days ascending, read page by page
 * from ONE Query (gsi1: shared/db/keys.ts `spendRows`), each page turned into lines as it arrives; the keys'
 * labels from ONE Query of the account's keys, run alongside. At most 92 days and 25,000 rows: the Query asks
 * for one row more, and finding it answers 400 `/problems/export-too-large` with how to narrow the range.
 */
import { HttpError } from '#shared/http/errors.ts';
import { breakdownRange } from '#shared/keys/service.ts';
import { listProviderKeys } from '#shared/db/discovered-keys.ts';
import { exportRows } from '#shared/db/spend.ts';
import { parseDate } from '#shared/time/periods.ts';
import { CSV_HEADER, csvRow } from '#shared/spend/csv.ts';
import type { ExportQuery } from '#shared/spend/schemas.ts';

export const MAX_EXPORT_DAYS = 92;
export const MAX_EXPORT_ROWS = 25_000;

export class ExportTooLarge extends HttpError {
  constructor(detail: string) {
    super(400, 'export-too-large', 'The export is too large.', detail);
  }
}

const spanDays = (from: string, to: string) => (parseDate(to)!.getTime() - parseDate(from)!.getTime()) / 86_400_000 + 1;

/** `maxRows`: MAX_EXPORT_ROWS (a test may pass less to reach the limit with few rows). */
export async function exportSpend(accountId: string, query: ExportQuery, now = new Date(), maxRows = MAX_EXPORT_ROWS): Promise<{ filename: string; csv: string }> {
  const { from, to } = breakdownRange(query, now);
  const days = spanDays(from, to);
  if (days > MAX_EXPORT_DAYS) {
    throw new ExportTooLarge(`The range spans ${days} days; an export covers at most ${MAX_EXPORT_DAYS}. Ask for a shorter range with from and to (e.g. one month at a time).`);
  }
  const labels = listProviderKeys(accountId).then((items) => new Map(items.map((k) => [k.keyHash as string, (k.label as string | null | undefined) ?? null])));
  labels.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
  const lines = [CSV_HEADER];
  let rows = 0;
  for await (const page of exportRows(accountId, from, to, maxRows + 1)) {
    rows += page.length;
    if (rows > maxRows) {
      throw new ExportTooLarge(
        `The range ${from} to ${to} has more than ${maxRows} rows (key × day × model); an export holds at most ${maxRows}. Ask for fewer days with from and to.`,
      );
    }
    const byHash = await labels;
    for (const item of page) lines.push(csvRow(item, byHash.get(item.keyHash as string) ?? null));
  }
  return { filename: `burnrate-spend-${from}-to-${to}.csv`, csv: `${lines.join('\r\n')}\r\n` };
}
