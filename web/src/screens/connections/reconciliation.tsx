/**
 * A connection's reconciliation (GET /connections/:id/reconciliation): per UTC day, what Burnrate computed for the
 * connection's keys next to what the provider bills the organization, and the difference named. The chart stacks
 * each day's bill: the part the keys explain, and on top what no key explains. Days the provider has not billed yet
 * say so. By default the range runs from the first imported day to today (at most 92 days, the API's limit).
 */
import { useMemo } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { DailyChart } from '../../ui/chart.tsx';
import { axisDay, isoDay, UTC_NOTE, utcDay } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { Money } from '../../ui/money.tsx';
import { RangePicker, rangeFrom } from '../../ui/range.tsx';
import { Empty, ErrorBox, Loading, Screen, Show } from '../../ui/states.tsx';
import { DIFFERENCE_MEANING, difference, PROVIDER_NAMES } from './words.ts';

type Reconciliation = Schemas['Reconciliation'];
const MAX_DAYS = 92;

/** The range asked for in the URL, else the connection's imported days up to today (the last 92 at most). */
function defaultRange(query: URLSearchParams, importedFrom: string | undefined): { from: string; to: string } {
  if (query.has('range') || !importedFrom) return rangeFrom(query);
  const earliest = isoDay(-(MAX_DAYS - 1));
  return { from: importedFrom > earliest ? importedFrom : earliest, to: isoDay() };
}

function Amount({ value }: { value: number | null }) {
  return value === null ? <span class="muted">not yet billed</span> : <Money value={value} />;
}

function ReconciliationTable({ data, provider }: { data: Reconciliation; provider: string }) {
  const billedDays = data.days.filter((d) => d.billedUsd !== null);
  const computedOfBilled = billedDays.reduce((sum, d) => sum + Math.round(d.computedUsd * 1e6), 0) / 1e6;
  const totalDifference = billedDays.length ? difference(computedOfBilled, data.total.billedUsd) : null;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Computed and billed per day">
      <table class="recon">
        <caption class="muted">
          Difference: what {provider} bills minus what the keys explain. {DIFFERENCE_MEANING}
        </caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col" class="num">
              Computed from keys
            </th>
            <th scope="col" class="num">
              Billed by {provider}
            </th>
            <th scope="col" class="num">
              Difference
            </th>
          </tr>
        </thead>
        <tbody>
          {data.days.map((d) => (
            <tr key={d.date}>
              <th scope="row">
                {/* The year is in the range above; at 360 px the day alone keeps all four columns in view. */}
                {axisDay(d.date)}
                <span class="wide-only">, {d.date.slice(0, 4)}</span>
              </th>
              <td class="num">
                <Money value={d.computedUsd} />
              </td>
              <td class="num">
                <Amount value={d.billedUsd} />
              </td>
              <td class="num">{d.billedUsd === null ? <span class="muted">—</span> : <Money value={difference(d.computedUsd, d.billedUsd)!} />}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            <td class="num" data-testid="recon-computed">
              <Money value={data.total.computedUsd} />
            </td>
            <td class="num" data-testid="recon-billed">
              <Money value={data.total.billedUsd} />
            </td>
            <td class="num" data-testid="recon-difference">
              {totalDifference === null ? <span class="muted">—</span> : <Money value={totalDifference} />}
            </td>
          </tr>
        </tfoot>
      </table>
      {billedDays.length < data.days.length && billedDays.length > 0 && (
        <p class="muted">The total difference counts the {billedDays.length} billed days only; days not yet billed are left out.</p>
      )}
    </div>
  );
}

export function ConnectionReconciliation({ params, query }: { params: Record<string, string>; query: URLSearchParams }) {
  const id = params.id!;
  const connection = useLoad(() => ok(api.GET('/connections/{id}', { params: { path: { id } } })), [id]);
  const range = defaultRange(query, connection.data?.importedFrom);
  const recon = useLoad(
    () => (connection.data ? ok(api.GET('/connections/{id}/reconciliation', { params: { path: { id }, query: { from: range.from, to: range.to } } })) : new Promise<never>(() => undefined)),
    [id, connection.data?.importedFrom, range.from, range.to],
  );
  const provider = connection.data ? PROVIDER_NAMES[connection.data.provider] : 'the provider';
  const days = useMemo(() => recon.data?.days.map((d) => d.date) ?? [], [recon.data]);
  const series = useMemo(
    () =>
      recon.data
        ? [
            { name: 'Explained by keys', values: recon.data.days.map((d) => d.computedUsd) },
            { name: 'Billed, not explained by any key', values: recon.data.days.map((d) => Math.max(0, difference(d.computedUsd, d.billedUsd) ?? 0)) },
          ]
        : [],
    [recon.data],
  );
  const title = connection.data ? `${connection.data.name}: computed vs billed` : 'Computed vs billed';
  document.title = `${title} · Burnrate`;
  return (
    <Screen title={title}>
      <p>
        <Link href="/connections">← Connections</Link> <span class="muted">{UTC_NOTE}</span>
      </p>
      {connection.error && <ErrorBox error={connection.error} />}
      {!connection.data && !connection.error && <Loading />}
      {connection.data && (
        <>
          <p>
            Per day, what Burnrate computed for the keys of this {provider} connection (their usage priced by your price table) next to what {provider} bills
            the organization. {DIFFERENCE_MEANING}
          </p>
          <div class="toolbar">
            <RangePicker query={query.has('range') ? query : new URLSearchParams({ range: 'custom', ...range })} path={`/connections/${id}`} />
          </div>
          {!query.has('range') && (
            <p class="muted">
              Every imported day{range.from > connection.data.importedFrom ? ` (the last ${MAX_DAYS})` : ''}, from {utcDay(range.from)} to today.
            </p>
          )}
          <Show state={recon}>
            {(data) =>
              data.days.length === 0 ? (
                <Empty>No days in this range.</Empty>
              ) : (
                <>
                  <DailyChart days={days} series={series} label={`${provider}: explained by keys and billed beyond them`} />
                  <ReconciliationTable data={data} provider={provider} />
                </>
              )
            }
          </Show>
        </>
      )}
    </Screen>
  );
}
