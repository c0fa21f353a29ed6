/**
 * GET /spend/export: the account's key × day × model rows of a range as CSV, days ascending, read page by page
 * from ONE Query (gsi1: shared/db/keys.ts `spendRows`), each page turned into lines as it arrives; the keys'
 * labels from ONE Query of the account's keys, run alongside. At most 92 days and 25,000 rows: the Query asks
 * for one row more, and finding it answers 400 `/problems/export-too-large` with how to narrow the range or, when one
 * day alone is past the limit, the asynchronous export (`POST /spend/exports`).
 */
import { HttpError } from '#shared/http/errors.ts';
import { breakdownRange, MAX_RANGE_DAYS } from '#shared/keys/service.ts';
import { listProviderKeys } from '#shared/db/discovered-keys.ts';
import { exportRows } from '#shared/db/spend.ts';
import { parseDate } from '#shared/time/periods.ts';
import { CSV_HEADER, csvRow } from '#shared/spend/csv.ts';
import { FOCUS_HEADER, focusRows } from '#shared/spend/focus.ts';
import { exportKeyOf, rowParts, type ExportContext, type ExportKey } from '#shared/spend/rows.ts';
import { accountWithConnections } from '#shared/db/connections.ts';
import { listOwnPrices } from '#shared/db/prices.ts';
import { priceId } from '#shared/pricing/pricing.ts';
import { isoDate } from '#shared/time/periods.ts';
import type { ExportFormat, ExportQuery } from '#shared/spend/schemas.ts';

export const MAX_EXPORT_DAYS = 92;
export const MAX_EXPORT_ROWS = 25_000;
/** Where an export too large for this one goes (docs/features/spend-and-exports.md): any number of rows, up to 366 days. */
const ASYNC_EXPORT = 'the asynchronous export, POST /spend/exports (any number of rows, up to 366 days)';
/** The asynchronous export's range limit (POST /spend/exports), the same as GET /spend's. */
export const MAX_ASYNC_EXPORT_DAYS = MAX_RANGE_DAYS;

export class ExportTooLarge extends HttpError {
  constructor(detail: string) {
    super(400, 'export-too-large', 'The export is too large.', detail);
  }
}

const spanDays = (from: string, to: string) => (parseDate(to)!.getTime() - parseDate(from)!.getTime()) / 86_400_000 + 1;

/**
 * The export's CSV as it is read: the header line first, then the lines of each Query page (every line ends with
 * CRLF), with the count of data rows so far. The ONE producer of export CSV: `GET /spend/export` joins it, the
 * asynchronous export's worker (shared/spend/exports.ts) streams it into a gzip file. Past `maxRows` rows it throws
 * `tooMany()`.
 */
export async function* csvChunks(
  accountId: string,
  from: string,
  to: string,
  maxRows = Infinity,
  tooMany?: () => Error,
  format: ExportFormat = 'csv',
  now = new Date(),
): AsyncGenerator<{ text: string; rows: number }> {
  // The keys (ONE Query), the account with its connections (ONE Query: settled days, billing accounts) and the
  // account's own prices (ONE Query), read alongside the first page.
  const contextRead = Promise.all([listProviderKeys(accountId), accountWithConnections(accountId), listOwnPrices(accountId)]).then(
    ([items, { account, connections }, prices]): ExportContext => ({
      today: isoDate(now),
      keys: new Map(items.map((k): [string, ExportKey] => [k.keyHash as string, exportKeyOf(k)])),
      connections,
      account: { id: accountId, name: (account?.companyName as string | undefined) ?? accountId },
      own: new Map(prices.map((p) => [priceId(p.provider, p.model), p])),
    }),
  );
  contextRead.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
  yield { text: `${format === 'focus' ? FOCUS_HEADER : CSV_HEADER}\r\n`, rows: 0 };
  let items = 0;
  let rows = 0;
  for await (const page of exportRows(accountId, from, to, maxRows + 1)) {
    items += page.length;
    if (items > maxRows) throw tooMany?.() ?? new Error(`more than ${maxRows} rows`);
    const ctx = await contextRead;
    const lines: string[] = [];
    for (const item of page) {
      const key = ctx.keys.get(item.keyHash as string) ?? null;
      for (const part of rowParts(item, key, ctx)) {
        if (format === 'focus') lines.push(...focusRows(item, part, key, ctx));
        else lines.push(csvRow(item, part, key));
      }
    }
    rows += lines.length;
    yield { text: lines.map((l) => `${l}\r\n`).join(''), rows };
  }
  await contextRead;
}

/** `maxRows`: MAX_EXPORT_ROWS (a test may pass less to reach the limit with few rows). */
export async function exportSpend(accountId: string, query: ExportQuery, now = new Date(), maxRows = MAX_EXPORT_ROWS): Promise<{ filename: string; csv: string }> {
  const { from, to } = breakdownRange(query, now);
  const days = spanDays(from, to);
  if (days > MAX_EXPORT_DAYS) {
    throw new ExportTooLarge(
      `The range spans ${days} days; an export covers at most ${MAX_EXPORT_DAYS}. Ask for a shorter range with from and to (e.g. one month at a time), or use ${ASYNC_EXPORT}.`,
    );
  }
  // One day alone past the limit: fewer days can't help, only the asynchronous export can.
  const tooMany = () =>
    new ExportTooLarge(
      from === to
        ? `The day ${from} alone has more than ${maxRows} rows (key × model); this export holds at most ${maxRows}. Use ${ASYNC_EXPORT}.`
        : `The range ${from} to ${to} has more than ${maxRows} rows (key × day × model); this export holds at most ${maxRows}. Ask for fewer days with from and to, or use ${ASYNC_EXPORT}.`,
    );
  let csv = '';
  for await (const chunk of csvChunks(accountId, from, to, maxRows, tooMany)) csv += chunk.text;
  return { filename: `burnrate-spend-${from}-to-${to}.csv`, csv };
}
