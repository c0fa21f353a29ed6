import { api, ok, type Schemas } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { dayRange, DailyChart, type DailySeries } from '../../ui/chart.tsx';
import { money, when } from '../../ui/format.ts';
import { keyName } from '../../ui/key-name.ts';
import { useLoad } from '../../ui/load.ts';
import { RangePicker, rangeFrom } from '../../ui/range.tsx';
import { Empty, Screen, Show } from '../../ui/states.tsx';
import { ExportButton } from './export.tsx';

/** Keys whose breakdowns make the chart: the ones that spent most this month. */
const CHART_KEYS = 10;

interface OverviewData {
  keys: Schemas['Key'][];
  days: string[];
  series: DailySeries[];
}

async function loadOverview(from: string, to: string): Promise<OverviewData> {
  const keys = (await ok(api.GET('/keys', { params: { query: { limit: 100 } } }))).items;
  const details = await Promise.all(
    keys.slice(0, CHART_KEYS).map((key) => ok(api.GET('/keys/{hash}', { params: { path: { hash: key.hash }, query: { from, to } } }))),
  );
  const days = dayRange(from, to);
  const byProvider = new Map<string, number[]>();
  for (const detail of details) {
    const values = byProvider.get(detail.provider) ?? days.map(() => 0);
    detail.breakdown.daily.forEach((d) => {
      const i = days.indexOf(d.date);
      if (i >= 0) values[i] = (values[i] ?? 0) + d.costUsd;
    });
    byProvider.set(detail.provider, values);
  }
  const series = [...byProvider].map(([name, values]) => ({ name, values }));
  return { keys, days, series };
}

export function Overview({ query }: { query: URLSearchParams }) {
  const range = rangeFrom(query);
  const data = useLoad(() => loadOverview(range.from, range.to), [range.from, range.to]);
  const spend = useLoad(() => ok(api.GET('/spend')), []);
  const alerts = useLoad(() => ok(api.GET('/alerts', { params: { query: { status: 'triggered', limit: 5 } } })), []);
  document.title = 'Overview · Burnrate';
  // The open alerts appear with the rest (below it): nothing already shown moves when they arrive.
  return (
    <Screen title="Overview">
      <Show state={data}>
        {({ keys, days, series }) => {
          const monthToDate = keys.reduce((sum, k) => sum + k.spend.monthToDate, 0);
          const today = keys.reduce((sum, k) => sum + k.spend.today, 0);
          return (
            <>
              <div class="cards">
                <div class="card stat">
                  <div class="muted">Month to date (UTC)</div>
                  <div class="value" data-testid="month-to-date">
                    {money(monthToDate)}
                  </div>
                </div>
                <div class="card stat">
                  <div class="muted">Forecast, month end (UTC)</div>
                  <div class="value" data-testid="forecast">
                    {spend.data?.forecast ? money(spend.data.forecast.monthEnd) : '—'}
                  </div>
                </div>
                <div class="card stat">
                  <div class="muted">Today (UTC)</div>
                  <div class="value">{money(today)}</div>
                </div>
                <div class="card stat">
                  <div class="muted">Keys seen</div>
                  <div class="value">{keys.length}</div>
                </div>
              </div>
              <h2>Daily spend by provider</h2>
              <div class="toolbar">
                <RangePicker query={query} path="/" />
                <ExportButton from={range.from} to={range.to} />
              </div>
              {series.length === 0 ? (
                <Empty>
                  No spend yet. <Link href="/ingest-keys">Create an ingest key</Link> and send events to see it here.
                </Empty>
              ) : (
                <DailyChart days={days} series={series} label="Daily spend by provider" />
              )}
              <h2>Top keys this month</h2>
              {keys.length === 0 ? (
                <Empty>No keys discovered yet.</Empty>
              ) : (
                <div class="table-wrap" tabIndex={0} role="region" aria-label="Top keys">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Key</th>
                        <th scope="col">Provider</th>
                        <th scope="col" class="num">
                          Month to date
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {keys.slice(0, 5).map((k) => (
                        <tr key={k.hash}>
                          <td>
                            <Link href={`/keys/${k.hash}`}>{keyName(k)}</Link>
                          </td>
                          <td>{k.provider}</td>
                          <td class="num">{money(k.spend.monthToDate)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
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
