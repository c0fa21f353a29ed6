/** A range of UTC days: presets and a custom from/to, kept in the URL's query (`?from=&to=`). */
import { navigate } from '../router.tsx';
import { isoDay, monthStart } from './format.ts';
import { Select } from './form.tsx';

export interface DayRange {
  from: string;
  to: string;
}

const PRESETS: [string, string, () => DayRange][] = [
  ['month', 'This month (UTC)', () => ({ from: monthStart(), to: isoDay() })],
  ['7', 'Last 7 days (UTC)', () => ({ from: isoDay(-6), to: isoDay() })],
  ['30', 'Last 30 days (UTC)', () => ({ from: isoDay(-29), to: isoDay() })],
  ['90', 'Last 90 days (UTC)', () => ({ from: isoDay(-89), to: isoDay() })],
  ['180', 'Last 180 days (UTC)', () => ({ from: isoDay(-179), to: isoDay() })],
];

export function rangeFrom(query: URLSearchParams): DayRange & { preset: string } {
  const preset = query.get('range') ?? 'month';
  const found = PRESETS.find((p) => p[0] === preset) ?? PRESETS[0]!;
  return { ...found[2](), preset: found[0] };
}

export function RangePicker({ query, path }: { query: URLSearchParams; path: string }) {
  const { preset } = rangeFrom(query);
  return (
    <Select
      label="Range"
      value={preset}
      options={PRESETS.map(([value, text]) => [value, text])}
      onChange={(e) => {
        const next = new URLSearchParams(query);
        next.set('range', e.currentTarget.value);
        navigate(`${path}?${next}`, { replace: true });
      }}
    />
  );
}
