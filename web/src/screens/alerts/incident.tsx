/**
 * The incident view of a `spend_anomaly` alert: the key's spend hour by hour over the last 24 hours against its usual
 * hourly spend (the average of its last 14 complete days), what the rule did, and "Release the key" while a rule holds
 * it (members and admins). A bar chart drawn as SVG (one bar an hour, the usual rate a dashed line), then the same
 * numbers as a table for screen readers and the keyboard.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { useSubmit } from '../../ui/form.tsx';
import { money, when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { ErrorBox, Show } from '../../ui/states.tsx';

type Incident = Schemas['KeyIncident'];

/** The chart is drawn at its box's own width in CSS pixels (text stays 11 px on a phone); its height is fixed. */
const H = 180;
const PAD = { left: 52, right: 8, top: 12, bottom: 24 };

const hourWords = (iso: string) => `${iso.slice(11, 13)}:00`;

/** The width of an element in CSS pixels, followed as it changes (600 until measured). */
function useWidth<T extends Element>() {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(600);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(200, Math.round(el.getBoundingClientRect().width)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

function HourChart({ incident }: { incident: Incident }) {
  const [ref, W] = useWidth<HTMLDivElement>();
  const max = Math.max(incident.baselinePerHour * 1.2, ...incident.hours.map((h) => h.cost), 0.01);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const bar = plotW / incident.hours.length;
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const usualY = y(incident.baselinePerHour);
  const ticks = [0, max / 2, max];
  // An hour label every 6 hours where there is room, every 12 on a phone.
  const every = W < 420 ? 12 : 6;
  return (
    <div ref={ref} class="incident-chart-box">
      <svg class="incident-chart" width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Spend of the last 24 hours by hour against the usual ${money(incident.baselinePerHour)} an hour`}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} class="grid" />
            <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end" class="axis">
              {money(t)}
            </text>
          </g>
        ))}
        {incident.hours.map((h, i) => {
          const top = y(h.cost);
          const over = h.cost > incident.baselinePerHour * 2 && h.cost > 0;
          return (
            <rect key={h.hour} x={PAD.left + i * bar + bar * 0.15} y={top} width={Math.max(1, bar * 0.7)} height={Math.max(0, PAD.top + plotH - top)} class={over ? 'hour-bar over' : 'hour-bar'}>
              <title>{`${hourWords(h.hour)} UTC: ${money(h.cost)}`}</title>
            </rect>
          );
        })}
        <line x1={PAD.left} x2={W - PAD.right} y1={usualY} y2={usualY} class="usual" />
        {incident.hours.map((h, i) => {
          const last = i === incident.hours.length - 1;
          return i % every === 0 || last ? (
            <text key={h.hour} x={PAD.left + i * bar + bar / 2} y={H - 6} text-anchor={last ? 'end' : 'middle'} class="axis">
              {last ? 'now' : hourWords(h.hour)}
            </text>
          ) : null;
        })}
      </svg>
    </div>
  );
}

const HOLD_WORDS: Record<Incident['holds'][number]['status'], string> = {
  stopped: 'Stopped',
  stopping: 'Being stopped',
  releasing: 'Released; the next sync switches it back on',
  released: 'Released',
  failed: 'Could not be stopped',
};

export function IncidentView({ keyHash, canRelease, titleId }: { keyHash: string; canRelease: boolean; titleId: string }) {
  const incident = useLoad(() => ok(api.GET('/keys/{hash}/incident', { params: { path: { hash: keyHash } } })), [keyHash]);
  const release = useSubmit();
  return (
    <div class="incident" data-testid="incident">
      <ErrorBox error={release.error} />
      <Show state={incident}>
        {(i) => (
          <>
            <p style={{ margin: '4px 0' }}>
              Last hour: <strong>{money(i.ratePerHour)}</strong> · usual: <strong>{money(i.baselinePerHour)}</strong> an hour
              {i.baselineDays === 0 ? ' (a new key: no usual spend yet)' : ` (average of the last ${i.baselineDays} complete day${i.baselineDays === 1 ? '' : 's'})`}
            </p>
            <figure class="chart">
              <HourChart incident={i} />
              <figcaption class="muted">
                <span class="legend-item">
                  <span class="swatch hour-bar" aria-hidden="true" /> Spend an hour (UTC)
                </span>{' '}
                <span class="legend-item">
                  <span class="swatch usual" aria-hidden="true" /> Usual hour ({money(i.baselinePerHour)})
                </span>
              </figcaption>
              <details>
                <summary>The last 24 hours as a table</summary>
                <div class="table-wrap" tabIndex={0} role="region" aria-label="Spend by hour (table)">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Hour (UTC)</th>
                        <th scope="col" class="num">
                          Spend
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {i.hours.map((h) => (
                        <tr key={h.hour}>
                          <th scope="row">{`${h.hour.slice(0, 10)} ${hourWords(h.hour)}`}</th>
                          <td class="num">{money(h.cost)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </details>
            </figure>
            {i.holds.length > 0 && (
              <ul class="holds">
                {i.holds.map((h) => (
                  <li key={`${h.ruleId}-${h.since}`}>
                    <strong>{HOLD_WORDS[h.status]}</strong> by {h.ruleName ? `the rule "${h.ruleName}"` : 'a spend-anomaly rule'} ({h.lever === 'reporter' ? 'the reporter refuses its calls' : 'switched off at the provider'}) since {when(h.since)}
                  </li>
                ))}
              </ul>
            )}
            {canRelease && i.stopped && (
              <button
                type="button"
                aria-describedby={titleId}
                disabled={release.busy}
                onClick={() => {
                  if (!confirm('Release the key? Its calls go through again, and the rule will not stop it again today.')) return;
                  void release.run(() => ok(api.POST('/keys/{hash}/release', { params: { path: { hash: keyHash } } }))).then(incident.reload);
                }}
              >
                Release the key
              </button>
            )}
          </>
        )}
      </Show>
    </div>
  );
}
