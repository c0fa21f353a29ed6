/**
 * A connection's reconciliation (GET /connections/:id/reconciliation): per UTC day, the token estimate of the
 * connection's keys, what the provider bills, and what Burnrate shows (the bill once settled); then the billed days by
 * line, each difference explained (Priority Tier, tools, an unpriced model, a plan cap). The chart stacks each day's
 * shown figure: billed, and estimated (days not billed yet, Priority Tier) — the table's "Shown" column. Days the
 * provider has not billed yet say so. By default the range runs from the first imported day to today (at most 92 days, the API's limit).
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
import { DIFFERENCE_MEANING, difference, lineReason, PROVIDER_NAMES } from './words.ts';

type Reconciliation = Schemas['Reconciliation'];
const MAX_DAYS = 92;

/** The range asked for in the URL, else the connection's imported days up to today (the last 92 at most). */
function defaultRange(query: URLSearchParams, importedFrom: string | undefined): { from: string; to: string } {
  if (query.has('range') || !importedFrom) return rangeFrom(query);
  const earliest = isoDay(-(MAX_DAYS - 1));
  return { from: importedFrom > earliest ? importedFrom : earliest, to: isoDay() };
}

function Amount({ value }: { value: number | null }) {
  return value === null ? <span class="muted">not billed yet</span> : <Money value={value} />;
}

type Line = Reconciliation['days'][number]['lines'][number];

/** The settled days' lines of the range, summed by line (most billed first). */
function linesOf(data: Reconciliation): Line[] {
  const byLine = new Map<string, { line: string; estimated: number; billed: number | null; reason: Line['reason'] }>();
  for (const d of data.days) {
    for (const l of d.lines) {
      const seen = byLine.get(l.line) ?? { line: l.line, estimated: 0, billed: null, reason: l.reason };
      seen.estimated += Math.round(l.estimatedUsd * 1e6);
      if (l.billedUsd !== null) seen.billed = (seen.billed ?? 0) + Math.round(l.billedUsd * 1e6);
      seen.reason ??= l.reason;
      byLine.set(l.line, seen);
    }
  }
  return [...byLine.values()]
    .map((l) => ({ line: l.line, estimatedUsd: l.estimated / 1e6, billedUsd: l.billed === null ? null : l.billed / 1e6, reason: l.reason }))
    .sort((a, b) => (b.billedUsd ?? b.estimatedUsd) - (a.billedUsd ?? a.estimatedUsd));
}

function LinesTable({ data, provider }: { data: Reconciliation; provider: string }) {
  const lines = linesOf(data);
  if (lines.length === 0) return <p class="muted">No day of this range is billed yet: every figure is an estimate.</p>;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="The bill by line">
      <table class="recon recon-lines" data-testid="recon-lines">
        <caption class="muted">The billed days by line: what the estimate from tokens said, what {provider} billed, and why they differ.</caption>
        <thead>
          <tr>
            <th scope="col">Line</th>
            <th scope="col" class="num">
              Estimate
            </th>
            <th scope="col" class="num">
              Billed by {provider}
            </th>
            <th scope="col" class="wide-only">
              Why
            </th>
          </tr>
        </thead>
        <tbody>
          {lines.map((l) => (
            <tr key={l.line}>
              <th scope="row">
                {l.line}
                {/* At 360 px the reason goes under the line's name, so the two figures keep their columns in view. */}
                <span class="narrow-only reason">{lineReason(l.reason, l.estimatedUsd, l.billedUsd)}</span>
              </th>
              <td class="num">
                <Money value={l.estimatedUsd} />
              </td>
              <td class="num">{l.billedUsd === null ? <span class="muted">not in the bill</span> : <Money value={l.billedUsd} />}</td>
              <td class="wide-only">{lineReason(l.reason, l.estimatedUsd, l.billedUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ReconciliationTable({ data, provider }: { data: Reconciliation; provider: string }) {
  const open = data.days.filter((d) => !d.settled).length;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Estimated, billed and shown per day">
      <table class="recon">
        <caption class="muted">
          Shown: what Burnrate counts for the day — the bill once {provider} has billed it
          {provider === 'Anthropic' ? " (plus Priority Tier, billed under its commitment and never in Anthropic's cost report: at the estimate)" : ''}, else the
          estimate.
        </caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col" class="num">
              Estimate from tokens
            </th>
            <th scope="col" class="num">
              Billed by {provider}
            </th>
            <th scope="col" class="num">
              Shown
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
                <Money value={d.estimatedUsd} />
              </td>
              <td class="num">
                <Amount value={d.billedUsd} />
              </td>
              <td class="num">
                <Money value={d.computedUsd} />
              </td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            <td class="num" data-testid="recon-estimated">
              <Money value={data.total.estimatedUsd} />
            </td>
            <td class="num" data-testid="recon-billed">
              <Money value={data.total.billedUsd} />
            </td>
            <td class="num" data-testid="recon-computed">
              <Money value={data.total.computedUsd} />
            </td>
          </tr>
        </tfoot>
      </table>
      {open > 0 && (
        <p class="muted">
          {open === 1 ? '1 day is' : `${open} days are`} not billed yet: {open === 1 ? 'it is' : 'they are'} shown at the estimate, and the billed total counts the billed days only.
        </p>
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
            // Stacked, the two make each day's "Shown" figure of the table.
            { name: 'Billed', values: recon.data.days.map((d) => (d.settled ? (d.billedUsd ?? 0) : 0)) },
            { name: 'Estimate (not billed yet, or Priority Tier)', values: recon.data.days.map((d) => (d.settled ? (difference(d.billedUsd ?? 0, d.computedUsd) ?? 0) : d.computedUsd)) },
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
            Per day, the estimate for the keys of this {provider} connection (their usage priced by your price table) next to what {provider} bills the
            organization. {DIFFERENCE_MEANING}
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
                  <DailyChart days={days} series={series} label={`${provider}: billed, and estimated where not billed`} />
                  <ReconciliationTable data={data} provider={provider} />
                  <LinesTable data={data} provider={provider} />
                </>
              )
            }
          </Show>
        </>
      )}
    </Screen>
  );
}
