/**
 * CSV of the spend export (pure): RFC 4180 (CRLF line ends; a field with a comma, quote, CR or LF is quoted, quotes
 * doubled) and neutralised against spreadsheet formula injection (OWASP "CSV injection"): a text field that starts
 * with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'`, so a spreadsheet shows it as text instead of running it.
 */
import type { Item } from '#shared/db/client.ts';
import { readInt } from '#shared/db/numbers.ts';

export const CSV_HEADER = 'date,key_hash,key_label,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd';

/** A text field as a spreadsheet may safely read it. */
export function csvText(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** Exact dollars with 6 decimals from µ$ (`1234567` → `1.234567`). */
export function csvUsd(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const magnitude = micros < 0n ? -micros : micros;
  return `${sign}${magnitude / 1_000_000n}.${(magnitude % 1_000_000n).toString().padStart(6, '0')}`;
}

/** One key × day × model item as a CSV line (without its line end). */
export function csvRow(item: Item, label: string | null): string {
  const int = (name: string) => readInt(item[name], name).toString();
  return [
    item.date as string,
    item.keyHash as string,
    csvText(label ?? ''),
    csvText(item.provider as string),
    csvText(item.model as string),
    int('requests'),
    int('inputTokens'),
    int('cachedInputTokens'),
    int('outputTokens'),
    csvUsd(readInt(item.costMicros, 'costMicros')),
  ].join(',');
}
