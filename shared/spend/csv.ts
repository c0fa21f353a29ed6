/**
 * CSV of the spend export (pure): RFC 4180 (CRLF line ends; quoted fields, quotes doubled) and neutralised against
 * spreadsheet formula injection (OWASP "CSV injection"), for spreadsheets that split on `,` and on `;` alike
 * (docs/security.md): a text field that starts with `=`, `+`, `-`, `@`, a tab or a CR, or contains
 * `;`, `,`, `"`, CR or LF, is quoted; a `'` goes before a leading `=`, `+`, `-`, `@`, tab or CR and before each
 * `=`, `+`, `-`, `@` that follows a `;` or `,` (blanks between allowed: a spreadsheet may trim them), where a
 * spreadsheet that splits there would start a cell. A spreadsheet shows such text instead of running it.
 */
import type { Item } from '#shared/db/client.ts';
import type { RowKey, RowPart } from '#shared/spend/rows.ts';

export const CSV_HEADER =
  'date,key_hash,key_label,key_name,project_id,project_name,settled,correction,tags,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd';

export type { RowKey } from '#shared/spend/rows.ts';

const FORMULA_START = /^[=+\-@\t\r]/;
const FORMULA_AFTER_SEPARATOR = /([;,][ \t]*)([=+\-@])/g;
const NEEDS_QUOTES = /^[=+\-@\t\r]|[;,"\r\n]/;

/** A text field as a spreadsheet may safely read it. */
export function csvText(value: string): string {
  if (!NEEDS_QUOTES.test(value)) return value;
  const safe = (FORMULA_START.test(value) ? `'${value}` : value).replace(FORMULA_AFTER_SEPARATOR, "$1'$2");
  return `"${safe.replaceAll('"', '""')}"`;
}

/** Exact dollars with 6 decimals from µ$ (`1234567` → `1.234567`). */
export function csvUsd(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const magnitude = micros < 0n ? -micros : micros;
  return `${sign}${magnitude / 1_000_000n}.${(magnitude % 1_000_000n).toString().padStart(6, '0')}`;
}

/**
 * One part of a key × day × model item (shared/spend/rows.ts: the row, or its Priority Tier usage) as a CSV line
 * (without its line end). Every text column is neutralised the same way (`csvText`); `tags` is the key's effective
 * tags as a JSON object.
 */
export function csvRow(item: Item, part: Pick<RowPart, 'model' | 'settled' | 'correction' | 'requests' | 'inputTokens' | 'cachedInputTokens' | 'outputTokens' | 'costMicros'>, key: (RowKey & { tags?: Record<string, string> }) | null): string {
  return [
    item.date as string,
    item.keyHash as string,
    csvText(key?.label ?? ''),
    csvText(key?.name ?? ''),
    csvText(key?.project?.id ?? ''),
    csvText(key?.project?.name ?? ''),
    String(part.settled),
    String(part.correction),
    csvText(JSON.stringify(key?.tags ?? {})),
    csvText(item.provider as string),
    csvText(part.model),
    part.requests.toString(),
    part.inputTokens.toString(),
    part.cachedInputTokens.toString(),
    part.outputTokens.toString(),
    csvUsd(part.costMicros),
  ].join(',');
}
