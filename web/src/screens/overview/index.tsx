
import { api, ok } from '../../api/client.ts';
import { Link, navigate } from '../../router.tsx';
import { DailyChart } from '../../ui/chart.tsx';
import { change, isoDay, providerWords, utcDay, UTC_NOTE, when } from '../../ui/format.ts';
import { Select } from '../../ui/form.tsx';
import { keyName } from '../../ui/key-name.ts';
import { useLoad } from '../../ui/load.ts';
import { CoverageNotes } from '../../ui/coverage.tsx';
import { Money } from '../../ui/money.tsx';
import { RangePicker, rangeFrom } from '../../ui/range.tsx';
import { MonthStatus, monthRange, monthWords } from '../../ui/month.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';
import { SpendTable } from '../../ui/spend-table.tsx';
import { dayGroups, keyGroups, loadOverview, loadSeries, providerGroups, type ChartView, type OverviewData } from './data.ts';
import { ExportButton } from './export.tsx';

const TOP_KEYS_SHOWN = 10;

function Stat({ label, value, testId, note }: { label: string; value: number | null; testId: string; note?: string | null }) {
  return (
    <div class="card stat">
      <div class="muted">{label}</div>
      <div class="value">{value === null ? '—' : <Money value={value} testId={testId} />}</div>
      {note && <div class="muted">{note}</div>}
    </div>
  );
}

/** "+12% vs the same days last month" (a month to date) or "vs the N days before" (any other range). */
function comparison(data: OverviewData, preset: string): string | null {
  const previous = data.days.previous;
  if (!previous) return null;
  // Days of the previous range a connection could not import (OpenRouter keeps 30 days): unknown, never "nothing spent".
  const missing = previous.notes[0];
  if (missing) return `No comparison: ${providerWords(missing.provider)}'s spend ${missing.from === missing.to ? `of ${utcDay(missing.from)}` : `from ${utcDay(missing.from)} to ${utcDay(missing.to)}`} could not be imported.`;
  const delta = change(data.days.total.costUsd, previous.total.costUsd);
  if (delta === null) return `Nothing spent ${preset === 'month' ? 'in the same days last month' : 'in the days before'}.`;
  const what = preset === 'month' ? 'the same days last month' : `${utcDay(previous.from)} – ${utcDay(previous.to)}`;
  // Figures with something missing (see the notes below them) compare like with unlike: say so.
  return `${delta} vs ${what}${data.days.coverage.complete ? '' : ' (the figures are not complete: see below)'}`;
}

/** The calendar month a range is, whole (this month: to today), if it is one. */
export function monthOfRange(range: { from: string; to: string }): string | null {
  const month = range.from.slice(0, 7);
  const whole = monthRange(month);
  return range.from === whole.from && range.to === whole.to ? month : null;
}

function Figures({ data, preset }: { data: OverviewData; preset: string }) {
  const days = dayGroups(data.days);
  const today = days.find((d) => d.date === isoDay());
  const month = preset !== 'month' ? monthOfRange(data.days) : null;
  return (
    <div class="cards">
      <Stat label={preset === 'month' ? 'Month to date' : month ? `Spend in ${monthWords(month)}` : 'Spend in the range'} value={data.days.total.costUsd} testId="range-total" note={comparison(data, preset)} />
      <Stat label="Forecast, month end" value={data.days.forecast?.monthEnd ?? null} testId="forecast" />
      {today && <Stat label="Today" value={today.costUsd} testId="today" />}
    </div>
  );
}

/**
 * A range without spend. An account that has a connection or keys is told so (each connection's last sync, or that its
 * first sync is running) and offered only what it lacks; "No spend yet" and the two ways in are for an account with
 * neither. Loaded only here: two small calls, made only when the range is empty.
 */
function NoSpend() {
  const state = useLoad(async () => {
    const [connections, keys] = await Promise.all([ok(api.GET('/connections')), ok(api.GET('/keys', { params: { query: { limit: 1 } } }))]);
    return { connections: connections.items, hasKeys: keys.items.length > 0 };
  }, []);
  return (
    <Show state={state}>
      {({ connections, hasKeys }) =>
        connections.length === 0 && !hasKeys ? (
          <div class="empty">
            <p style={{ marginTop: 0 }}>No spend yet. Two ways to bring it in:</p>
            <ol class="ways">
              <li>
                <Link href="/connections">
                  <strong>Connect OpenAI / Anthropic</strong>
                </Link>
                : paste an organization admin key and every API key of the organization appears with its spend, within a minute. No code.
              </li>
              <li>
                <Link href="/get-started">Send events from your code</Link>: a sending key and a quick start (the reporter library, curl or Python) on Get
                started; any provider, from your proxy or SDK.
              </li>
            </ol>
          </div>
        ) : (
          <div class="empty" data-testid="no-spend-in-range">
            <p style={{ margin: 0 }}>No spend in this range{hasKeys ? '; choose a longer one above to see earlier spend' : ''}.</p>
            {connections.length > 0 && (
              <ul>
                {connections.map((c) => (
                  <li key={c.id}>
                    {providerWords(c.provider)} is connected:{' '}
                    {c.lastSuccessAt
                      ? `last synced ${when(c.lastSuccessAt)}; its usage shows here for the days the provider reports it.`
                      : c.lastSyncAt
                        ? 'its last sync could not finish (see Connections).'
                        : 'its first sync is running; its spend appears within a minute.'}
                  </li>
                ))}
              </ul>
            )}
            {connections.length > 0 && (
              <p style={{ marginBottom: 0 }}>
                <Link href="/connections">Connections</Link>
              </p>
            )}
          </div>
        )
      }
    </Show>
  );
}

const VIEWS: [ChartView, string][] = [
  ['total', 'All spend'],
  ['provider', 'Stacked by provider'],
  ['model', 'Stacked by model'],
];

export function Overview({ query }: { query: URLSearchParams }) {
  const range = rangeFrom(query);
  const view = (VIEWS.find((v) => v[0] === query.get('view'))?.[0] ?? 'total') as ChartView;
  const data = useLoad(() => loadOverview(range.from, range.to), [range.from, range.to]);
  const alerts = useLoad(() => ok(api.GET('/alerts', { params: { query: { status: 'triggered', limit: 5 } } })), []);
  // The total is drawn from the answer at hand (no second render, no shift); a stacked view asks for its stacks.
  const stacked = useLoad(async () => (data.data && view !== 'total' ? loadSeries(view, data.data, range.from, range.to) : undefined), [data.data, view]);
  const days = data.data ? dayGroups(data.data.days) : [];
  const chart = {
    days: days.map((d) => d.date),
    series: view === 'total' ? [{ name: 'All spend', values: days.map((d) => d.costUsd) }] : stacked.data,
    error: stacked.error,
  };
  document.title = 'Overview · Burnrate';
  return (
    <Screen title="Overview">
      <p class="muted">{UTC_NOTE}</p>
      <div class="toolbar">
        <RangePicker query={query} path="/" />
        <ExportButton from={range.from} to={range.to} />
      </div>
      <Show state={data}>
        {(d) => {
          const providers = providerGroups(d.providers);
          const keys = keyGroups(d.keys);
          return (
            <>
              <Figures data={d} preset={range.preset} />
              {monthOfRange(range) && <MonthStatus month={monthOfRange(range)!} />}
              <CoverageNotes coverage={d.days.coverage} />
              <h2>Daily spend</h2>
              {d.days.total.costUsd === 0 && keys.length === 0 && d.days.coverage.notes.some((n) => n.code === 'history_unavailable') ? (
                // Days a connection could not import are unknown, not "no spend" (the note above says which).
                <Empty>Nothing could be imported for this range: see the note above.</Empty>
              ) : d.days.total.costUsd === 0 && keys.length === 0 ? (
                <NoSpend />
              ) : (
                <>
                  <div class="toolbar">
                    <Select
                      label="Chart"
                      value={view}
                      options={VIEWS}
                      onChange={(e) => {
                        const next = new URLSearchParams(query);
                        next.set('view', e.currentTarget.value);
                        navigate(`/?${next}`, { replace: true });
                      }}
                    />
                  </div>
                  {chart.series ? <DailyChart days={chart.days} series={chart.series} label="Daily spend" /> : <div class="chart-placeholder" />}
                  {chart.error && <ErrorBox error={chart.error} />}
                </>
              )}
              <h2>By provider</h2>
              {providers.length === 0 ? (
                <Empty>No spend in this range.</Empty>
              ) : (
                <div class="table-wrap" tabIndex={0} role="region" aria-label="Spend by provider">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Provider</th>
                        <th scope="col" class="num">
                          Spend
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {providers.map((p) => (
                        <tr key={p.provider} data-provider={p.provider}>
                          <td>{providerWords(p.provider)}</td>
                          <td class="num">
                            <Money value={p.costUsd} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              <h2>Top keys in the range</h2>
              {keys.length === 0 ? (
                <Empty>No key spent in this range.</Empty>
              ) : (
                <SpendTable
                  label="Top keys"
                  nameHeading="Key"
                  rows={keys.slice(0, TOP_KEYS_SHOWN).map((k) => ({ key: k.hash, name: keyName(k), href: `/keys/${k.hash}`, provider: k.provider ?? null, costUsd: k.costUsd }))}
                />
              )}
              {/* The open alerts render with the rest (below it): nothing already shown moves when they arrive. */}
              <h2>Open alerts</h2>
              <Show state={alerts}>
                {({ items }) =>
                  items.length === 0 ? (
                    <Empty>No open alerts.</Empty>
                  ) : (
                    <ul>
                      {items.map((a) => (
                        <li key={a.id}>
                          <Link href={`/alerts/${a.id}`}>{a.title}</Link> <span class="muted">{when(a.triggeredAt)}</span>
                        </li>
                      ))}
                    </ul>
                  )
                }
              </Show>
            </>
          );
        }}
      </Show>
    </Screen>
  );
}
