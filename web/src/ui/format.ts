/** Money is US dollars through Intl.NumberFormat; days are UTC calendar days, and say so. */
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const usdFine = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
const count = new Intl.NumberFormat('en-US');
const dateTime = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const day = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });

/** $1,234.56; amounts under a dollar keep their micro-dollars ($0.000123). */
export function money(value: number): string {
  return value !== 0 && Math.abs(value) < 1 ? usdFine.format(value) : usd.format(value);
}

/** A price per million tokens, exact: at least 2 and up to 6 decimals ($1.875, $0.01875, $10.00). */
export function unitPrice(value: number): string {
  return usdFine.format(value);
}

export function number(value: number): string {
  return count.format(value);
}

export function when(iso: string | null | undefined): string {
  return iso ? `${dateTime.format(new Date(iso))} UTC` : '—';
}

/** `2026-11-23` → `Nov 23, 2026 (UTC)`. */
export function utcDay(date: string): string {
  return `${day.format(new Date(`${date}T00:00:00Z`))} (UTC)`;
}

/** Today's UTC date, YYYY-MM-DD, `offset` days away. */
export function isoDay(offset = 0): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

export function monthStart(): string {
  return `${isoDay().slice(0, 8)}01`;
}

export function percent(ratio: number): string {
  return `${Math.round(ratio)}%`;
}
