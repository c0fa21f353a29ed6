/**
 * Amounts and dates in the texts people read (alert titles and messages, hence e-mail subjects, webhook and Slack
 * texts), written as the dashboard writes them (web/src/ui/format.ts; test/unit/alert-words.test.ts holds them
 * equal): `$602.60`, `$0.0012` only where 2 decimals would read `$0.00`; `Nov 24, 2026`, `November 2026`,
 * `Nov 24, 2026, 3:04 PM` (UTC). The exact amounts stay in the alert's own fields (`thresholdUsd`, `observedUsd`)
 * and in the e-mail's and Slack's amount rows.
 */
/** The formatters, made on first use: building them costs a function that never writes an alert text at its start. */
let formats:
  | { usd: Intl.NumberFormat; usdTiny: Intl.NumberFormat; dateTime: Intl.DateTimeFormat; day: Intl.DateTimeFormat; month: Intl.DateTimeFormat }
  | undefined;
const f = () =>
  (formats ??= {
    usd: new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 }),
    usdTiny: new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 }),
    dateTime: new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
    day: new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' }),
    month: new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }),
  });

/** Integer micro-dollars → `$1,234.57`; `$0.0012` only where 2 decimals would read `$0.00` for an amount that is not zero. */
export function moneyWords(micros: number | bigint): string {
  const value = Number(micros) / 1_000_000;
  if (value !== 0 && Math.abs(value) < 0.005) return f().usdTiny.format(value);
  return f().usd.format(value);
}

/** `2026-11-24` → `Nov 24, 2026`. */
export function dayWords(date: string): string {
  return f().day.format(new Date(`${date}T00:00:00Z`));
}

/** `2026-11` → `November 2026`. */
export function monthWords(value: string): string {
  return f().month.format(new Date(`${value}-01T00:00:00Z`));
}

/** An instant → `Nov 24, 2026, 3:04 PM` (UTC). */
export function momentWords(at: Date): string {
  return f().dateTime.format(at);
}
