/**
 * Who spent it: a month's chargeback by a tag (GET /spend?groupBy=tag&tag=&shared=allocate: each value's own spend,
 * its share of the untagged spend, their sum), downloadable as CSV, and the month's top customers and features
 * (GET /spend?groupBy=customer|feature). The month and the tag live in the URL.
 */
import { api, ok } from '../../api/client.ts';
import { Link, navigate } from '../../router.tsx';
import { number, UTC_NOTE } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { Money } from '../../ui/money.tsx';
import { CoverageNotes } from '../../ui/coverage.tsx';
import { Empty, Screen, Show } from '../../ui/states.tsx';

const MONTHS_BACK = 12;

/** The month's range: its 1st to its last day, or to today for the current month. */
function monthRange(month: string): { from: string; to: string } {
  const today = new Date().toISOString().slice(0, 10);
  const [y, m] = month.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
  return { from: `${month}-01`, to: last < today ? last : today };
}

function recentMonths(): string[] {
  const now = new Date();
  return Array.from({ length: MONTHS_BACK }, (_, i) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1)).toISOString().slice(0, 7));
}

const monthWords = (month: string) => new Date(`${month}-01T00:00:00Z`).toLocaleDateString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });

/** A CSV cell: quoted when it must be, formula-like text neutralised (a spreadsheet opens it). */
const cell = (text: string) => {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

type TagGroup = { value: string | null; directUsd?: number; sharedUsd?: number; costUsd: number; requests: number };

function download(name: string, rows: string[][]) {
  const blob = new Blob([rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n'], { type: 'text/csv' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  URL.revokeObjectURL(a.href);
}

function Chargeback({ month, tag }: { month: string; tag: string }) {
  const range = monthRange(month);
  const state = useLoad(() => ok(api.GET('/spend', { params: { query: { ...range, groupBy: 'tag', tag, shared: 'allocate' } } })), [range.from, range.to, tag]);
  return (
    <Show state={state}>
      {(data) => {
        const groups = data.groups as TagGroup[];
        if (groups.length === 0) return <Empty>No spend in {monthWords(month)}.</Empty>;
        const rows = groups.map((g) => [g.value ?? '(untagged)', String(g.directUsd ?? g.costUsd), String(g.sharedUsd ?? 0), String(g.costUsd)]);
        return (
          <>
            <CoverageNotes coverage={data.coverage} />
            <div class="table-wrap" tabIndex={0} role="region" aria-label={`Chargeback by ${tag}`}>
              <table data-testid="chargeback">
                <caption class="muted">
                  {monthWords(month)} by <strong>{tag}</strong>: <Money value={data.total.costUsd} /> in all. Untagged keys and usage without a key are shared in proportion to each
                  value’s own spend.
                </caption>
                <thead>
                  <tr>
                    <th scope="col">{tag}</th>
                    <th scope="col" class="num">Own spend</th>
                    <th scope="col" class="num">Shared</th>
                    <th scope="col" class="num">Charged</th>
                  </tr>
                </thead>
                <tbody>
                  {groups.map((g) => (
                    <tr key={g.value ?? '\u0000'}>
                      <td data-label={tag}>{g.value ?? <span class="muted">untagged (nothing to share it with)</span>}</td>
                      <td class="num" data-label="Own spend">
                        <Money value={g.directUsd ?? g.costUsd} />
                      </td>
                      <td class="num" data-label="Shared">
                        <Money value={g.sharedUsd ?? 0} />
                      </td>
                      <td class="num" data-label="Charged">
                        <Money value={g.costUsd} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p>
              <button type="button" class="secondary" onClick={() => download(`burnrate-chargeback-${tag.replace(/[^a-z0-9_.-]/g, '_')}-${month}.csv`, [[tag, 'direct_usd', 'shared_usd', 'cost_usd'], ...rows])}>
                Download CSV
              </button>
            </p>
          </>
        );
      }}
    </Show>
  );
}

type NamedGroup = { customer?: string | null; feature?: string | null; count?: number; costUsd: number; requests: number };

function Top({ month, by }: { month: string; by: 'customer' | 'feature' }) {
  const range = monthRange(month);
  const state = useLoad(() => ok(api.GET('/spend', { params: { query: { ...range, groupBy: by } } })), [range.from, range.to, by]);
  const title = by === 'customer' ? 'Top customers' : 'Top features';
  return (
    <section aria-labelledby={`top-${by}`}>
      <h2 id={`top-${by}`}>{title}</h2>
      <Show state={state}>
        {(data) => {
          const groups = (data.groups as NamedGroup[]).filter((g) => g[by] !== null).slice(0, 10);
          if (groups.length === 0) {
            return (
              <Empty>
                No {by === 'customer' ? 'customers' : 'features'} in {monthWords(month)}: the reporter sends them from the <code>x-burnrate-{by}</code> header of a call.
              </Empty>
            );
          }
          return (
            <div class="table-wrap" tabIndex={0} role="region" aria-label={title}>
              <table data-testid={`top-${by}`}>
                <thead>
                  <tr>
                    <th scope="col">{by === 'customer' ? 'Customer' : 'Feature'}</th>
                    <th scope="col" class="num">Requests</th>
                    <th scope="col" class="num">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {groups.map((g) => (
                    <tr key={g[by]}>
                      <td data-label={by === 'customer' ? 'Customer' : 'Feature'} style={{ overflowWrap: 'anywhere' }}>
                        {g[by] === 'others' ? `${number(g.count ?? 0)} others` : g[by]}
                      </td>
                      <td class="num" data-label="Requests">
                        {number(g.requests)}
                      </td>
                      <td class="num" data-label="Cost">
                        <Money value={g.costUsd} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          );
        }}
      </Show>
    </section>
  );
}

export function WhoSpentIt({ query }: { query: URLSearchParams }) {
  const months = recentMonths();
  const month = months.includes(query.get('month') ?? '') ? query.get('month')! : months[0]!;
  const tag = (query.get('tag') ?? 'team').trim() || 'team';
  const go = (next: { month?: string; tag?: string }) => navigate(`/chargeback?${new URLSearchParams({ month: next.month ?? month, tag: next.tag ?? tag })}`);
  document.title = 'Chargeback · Burnrate';
  return (
    <Screen title="Chargeback">
      <p class="muted">
        Who spent it: a month’s spend by a tag of the keys (set on a <Link href="/projects">project</Link> or a key), and the customers and features your code marks. {UTC_NOTE}
      </p>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          go({ month: String(data.get('month')), tag: String(data.get('tag')) });
        }}
      >
        <label>
          Month{' '}
          <select name="month" value={month} onChange={(e) => go({ month: e.currentTarget.value })}>
            {months.map((m) => (
              <option key={m} value={m}>
                {monthWords(m)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tag <input name="tag" value={tag} size={16} aria-describedby="tag-hint" />
        </label>
        <button type="submit" class="secondary">
          Show
        </button>
        <small id="tag-hint" class="muted">
          a tag name, e.g. team
        </small>
      </form>
      <Chargeback month={month} tag={tag} />
      <div class="cards">
        <div class="card">
          <Top month={month} by="customer" />
        </div>
        <div class="card">
          <Top month={month} by="feature" />
        </div>
      </div>
    </Screen>
  );
}
