/**
 * CSV of the spend export (pure): RFC 4180 (CRLF line ends; quoted fields, quotes doubled) and neutralised against
 * spreadsheet formula injection (OWASP "CSV injection"), for spreadsheets that split on `,` and on `;` alike
 * (docs/security.md): a text field that starts with `=`, `+`, `-`, `@`, a tab or a CR, or contains
 * `;`, `,`, `"`, CR or LF, is quoted; a `'` goes before a leading `=`, `+`, `-`, `@`, tab or CR and before each
 * `=`, `+`, `-`, `@` that follows a `;` or `,` (blanks between allowed: a spreadsheet may trim them), where a
 * spreadsheet that splits there would start a cell. A spreadsheet shows such text instead of running it.
 */
import type { Item } from '#shared/db/client.ts';
import { readInt } from '#shared/db/numbers.ts';
import { shownModel } from '#shared/usage/names.ts';

export const CSV_HEADER =
  'date,key_hash,key_label,key_name,project_id,project_name,settled,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd';

/** What a row says of its key, from the key index: its label, the provider's name, its project. */
export interface RowKey {
  label: string | null;
  name: string | null;
  project: { id: string; name: string } | null;
}

/** The key of a key index item (shared/db/discovered-keys.ts). */
export function rowKeyOf(item: Item): RowKey {
  const p = item.project as { id?: unknown; name?: unknown } | null | undefined;
  return {
    label: (item.label as string | null | undefined) ?? null,
    name: typeof item.name === 'string' ? item.name : null,
    project: p && typeof p.id === 'string' ? { id: p.id, name: typeof p.name === 'string' ? p.name : p.id } : null,
  };
}

/**
 * Whether a row's day is settled (the provider's bill), read from the row's `settled` flag where the aggregates carry
 * one; rows without it are estimates (`false`).
 */
export const rowSettled = (item: Item): boolean => item.settled === true;

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

/** One key × day × model item as a CSV line (without its line end). */
export function csvRow(item: Item, key: RowKey | null): string {
  const int = (name: string) => readInt(item[name], name).toString();
  return [
    item.date as string,
    item.keyHash as string,
    csvText(key?.label ?? ''),
    csvText(key?.name ?? ''),
    csvText(key?.project?.id ?? ''),
    csvText(key?.project?.name ?? ''),
    String(rowSettled(item)),
    csvText(item.provider as string),
    csvText(shownModel(item.model as string) ?? ''),
    int('requests'),
    int('inputTokens'),
    int('cachedInputTokens'),
    int('outputTokens'),
    csvUsd(readInt(item.costMicros, 'costMicros')),
  ].join(',');
}
