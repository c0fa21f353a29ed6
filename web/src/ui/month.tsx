/**
 * Month views (docs/features/spend-and-exports.md "Closed months"): a month kept in the URL (`?month=YYYY-MM`, the
 * current month when absent), a picker of the last 24 months, and whether the month is closed (GET /months).
 */
import { api, ok } from '../api/client.ts';
import { navigate } from '../router.tsx';
import { Select } from './form.tsx';
import { isoDay, when } from './format.ts';
import { useLoad } from './load.ts';

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export const currentMonth = (): string => isoDay().slice(0, 7);

/** The month before `month` (YYYY-MM). */
export function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/** The month the URL asks for: `?month=YYYY-MM` (not in the future), else the current month. */
export function monthFrom(query: URLSearchParams): string {
  const m = query.get('month') ?? '';
  return MONTH.test(m) && m <= currentMonth() ? m : currentMonth();
}

/** A month's days as a range: its first day to its last (the current month: to today). */
export function monthRange(month: string): { from: string; to: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
  const today = isoDay();
  return { from: `${month}-01`, to: last < today ? last : today };
}

/** "October 2026". */
export const monthWords = (month: string): string => new Date(`${month}-01T00:00:00Z`).toLocaleDateString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });

/** This month, last month, and the 22 months before. */
function monthOptions(): [string, string][] {
  const out: [string, string][] = [];
  let m = currentMonth();
  for (let i = 0; i < 24; i++, m = previousMonth(m)) out.push([m, i === 0 ? `This month (${monthWords(m)})` : i === 1 ? `Last month (${monthWords(m)})` : monthWords(m)]);
  return out;
}

/** The month select; choosing one keeps the rest of the URL's query. */
export function MonthPicker({ query, path }: { query: URLSearchParams; path: string }) {
  const month = monthFrom(query);
  return (
    <Select
      label="Month"
      value={month}
      options={monthOptions()}
      onChange={(e) => {
        const next = new URLSearchParams(query);
        if (e.currentTarget.value === currentMonth()) next.delete('month');
        else next.set('month', e.currentTarget.value);
        next.delete('cursor');
        const text = next.toString();
        navigate(text ? `${path}?${text}` : path, { replace: true });
      }}
    />
  );
}

/** Whether the month is closed (its figures final; later bill revisions are corrections on the day they are found). */
export function MonthStatus({ month }: { month: string }) {
  const state = useLoad(() => ok(api.GET('/months', { params: { query: { from: month, to: month } } })), [month]);
  const m = state.data?.items[0];
  if (!m) return null;
  if (m.status === 'closed') {
    return (
      <p class="muted" data-testid="month-status" data-status="closed">
        <span class="badge">Closed</span> {monthWords(month)} was closed {when(m.closedAt)}
        {m.closedBy === 'burnrate' ? ' by Burnrate, once every provider had billed it' : ''}: its figures are final. Later bill revisions are booked as corrections on the day they are found.
      </p>
    );
  }
  return (
    <p class="muted" data-testid="month-status" data-status="open">
      {month === currentMonth()
        ? `${monthWords(month)} is open.`
        : `${monthWords(month)} is open: its figures can still change until every provider has billed it (it then closes by itself; an admin can close it sooner).`}
    </p>
  );
}
