/** A range of UTC days: presets and a custom from–to, kept in the URL's query (`?range=custom&from=&to=`). */
import { useState } from 'preact/hooks';
import { navigate } from '../router.tsx';
import { isoDay, monthStart } from './format.ts';
import { Field, Select } from './form.tsx';

export interface DayRange {
  from: string;
  to: string;
}

/** docs/features/spend-and-exports.md: a breakdown covers at most 366 days. */
export const MAX_RANGE_DAYS = 366;

/** Last month, its first day to its last. */
function lastMonth(): DayRange {
  const last = new Date(Date.parse(`${monthStart()}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  return { from: `${last.slice(0, 8)}01`, to: last };
}

const PRESETS: [string, string, () => DayRange][] = [
  ['month', 'This month', () => ({ from: monthStart(), to: isoDay() })],
  ['last-month', 'Last month', lastMonth],
  ['7', 'Last 7 days', () => ({ from: isoDay(-6), to: isoDay() })],
  ['30', 'Last 30 days', () => ({ from: isoDay(-29), to: isoDay() })],
  ['90', 'Last 90 days', () => ({ from: isoDay(-89), to: isoDay() })],
  ['180', 'Last 180 days', () => ({ from: isoDay(-179), to: isoDay() })],
];
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The range the URL asks for: a preset, or `custom` with valid `from` ≤ `to` (else this month). */
export function rangeFrom(query: URLSearchParams): DayRange & { preset: string } {
  const preset = query.get('range') ?? 'month';
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  if (preset === 'custom' && DAY.test(from) && DAY.test(to) && from <= to) return { from, to, preset };
  const found = PRESETS.find((p) => p[0] === preset) ?? PRESETS[0]!;
  return { ...found[2](), preset: found[0] };
}

export function RangePicker({ query, path }: { query: URLSearchParams; path: string }) {
  const range = rangeFrom(query);
  const [custom, setCustom] = useState<DayRange>({ from: range.from, to: range.to });
  const go = (next: URLSearchParams) => navigate(`${path}?${next}`, { replace: true });
  const choose = (value: string) => {
    const next = new URLSearchParams(query);
    next.set('range', value);
    if (value === 'custom') {
      next.set('from', custom.from);
      next.set('to', custom.to);
    } else {
      next.delete('from');
      next.delete('to');
    }
    go(next);
  };
  const setDay = (which: keyof DayRange, value: string) => {
    const want = { ...custom, [which]: value };
    setCustom(want);
    if (DAY.test(want.from) && DAY.test(want.to) && want.from <= want.to) {
      const next = new URLSearchParams(query);
      next.set('range', 'custom');
      next.set('from', want.from);
      next.set('to', want.to);
      go(next);
    }
  };
  return (
    <>
      <Select label="Range" value={range.preset} options={[...PRESETS.map(([value, text]) => [value, text] as const), ['custom', 'Custom dates']]} onChange={(e) => choose(e.currentTarget.value)} />
      {range.preset === 'custom' && (
        <>
          <Field label="From" type="date" min="2000-01-01" max={custom.to || isoDay()} value={custom.from} onInput={(e) => setDay('from', e.currentTarget.value)} />
          <Field label="To" type="date" min={custom.from || '2000-01-01'} max="2099-12-31" value={custom.to} onInput={(e) => setDay('to', e.currentTarget.value)} />
        </>
      )}
    </>
  );
}
