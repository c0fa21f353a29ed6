/**
 * A daily spend chart (uPlot): one bar per UTC day, stacked by series. Stacking is drawn as cumulative bars, the
 * tallest first. Before any hover the legend shows each series' total over the range; hovering a day shows that
 * day's values and its total. The x scale reaches half a day past the first and last day, so both edge bars are
 * drawn whole. A table of the same numbers follows for screen readers and the keyboard.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { axisDay, money, utcDay } from './format.ts';
import { legendValues, sum, type DailySeries } from './legend.ts';

export type { DailySeries };


const COLOURS = ['#c2410c', '#2563eb', '#059669', '#9333ea', '#ca8a04', '#db2777', '#0891b2', '#4b5563'];
const HALF_DAY = 43_200;

export function DailyChart({ days, series, label }: { days: string[]; series: DailySeries[]; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || days.length === 0) return;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    // cumulative[i] = sum of series i..n-1: drawn in order, each bar covers the part of the ones before it.
    const cumulative = series.map((_, i) => days.map((__, d) => series.slice(i).reduce((total, s) => total + (s.values[d] ?? 0), 0)));
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    const axis = { stroke: dark ? '#d4d4d8' : '#3f3f46', grid: { stroke: dark ? '#3f3f46' : '#e4e4e7' }, ticks: { show: false } };
    const bars = uPlot.paths.bars!({ size: [0.7, 48] });
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: {
          // Half a day either side: the first and last bars are whole.
          x: { time: true, range: (_u, min, max) => [min - HALF_DAY, max + HALF_DAY] },
          y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          { ...axis, values: (_u, ticks) => ticks.map((t) => axisDay(new Date(t * 1000).toISOString().slice(0, 10))) },
          { ...axis, size: 72, values: (_u, ticks) => ticks.map((t) => money(t)) },
        ],
        legend: { live: true },
        series: [
          { label: 'Day', value: (u) => legendValues(days, series, u.cursor.idx ?? null).day },
          ...series.map((s, i) => ({
            label: s.name,
            fill: COLOURS[i % COLOURS.length],
            stroke: COLOURS[i % COLOURS.length],
            paths: bars,
            points: { show: false },
            value: (u: uPlot) => legendValues(days, series, u.cursor.idx ?? null).values[i] ?? '',
          })),
        ],
      },
      [xs, ...cumulative],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 240 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, series]);

  return (
    <figure class="chart">
      <div ref={box} class="chart-box" role="img" aria-label={`${label}: ${legendValues(days, series, null).day}`} />
      <details>
        <summary>{label}: as a table</summary>
        <div class="table-wrap" tabIndex={0} role="region" aria-label={`${label} (table)`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {series.map((s) => (
                  <th scope="col" class="num" key={s.name}>
                    {s.name}
                  </th>
                ))}
                {series.length > 1 && (
                  <th scope="col" class="num">
                    Total
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {days.map((d, i) => (
                <tr key={d}>
                  <th scope="row">{utcDay(d)}</th>
                  {series.map((s) => (
                    <td class="num" key={s.name}>
                      {money(s.values[i] ?? 0)}
                    </td>
                  ))}
                  {series.length > 1 && <td class="num">{money(sum(series.map((s) => s.values[i] ?? 0)))}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** Every UTC day from `from` to `to`, inclusive. */
export function dayRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}
