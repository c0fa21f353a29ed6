/**
 * Keys: every key of the account, searched, filtered, sorted and paged by the server (GET /keys with q, provider,
 * source, sort, order): any of 1,000 keys is a few keystrokes away, and "N keys" is the count of all that match.
 * The search and the sort live in the URL, so a link or a reload keeps them. At 360 px the rows are cards with the
 * money first.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link, navigate } from '../../router.tsx';
import { Field, Select } from '../../ui/form.tsx';
import { KNOWN_PROVIDERS, number, providerWords, UTC_NOTE, when } from '../../ui/format.ts';
import { lastSeenWords } from '../../ui/last-seen.ts';
import { keyName, projectWords, providerStatusWords, sourceWords } from '../../ui/key-name.ts';
import { LabelEditor } from '../../ui/label-editor.tsx';
import { useLoad } from '../../ui/load.ts';
import { CoverageNotes } from '../../ui/coverage.tsx';
import { useCan } from '../../ui/me.tsx';
import { Money } from '../../ui/money.tsx';
import { Empty, Screen, Show } from '../../ui/states.tsx';
import { StoppedLine } from '../../ui/stopped-by.tsx';
import { currentMonth, MonthPicker, MonthStatus, monthFrom, monthWords } from '../../ui/month.tsx';

type Key = Schemas['Key'];
type Sort = 'name' | 'today' | 'monthToDate' | 'month' | 'forecastMonthEnd' | 'total' | 'lastSeenAt';
type Order = 'asc' | 'desc';

const PAGE = 25;
const SORTS: { id: Sort; title: string; num?: boolean }[] = [
  { id: 'name', title: 'Key' },
  { id: 'monthToDate', title: 'Month to date', num: true },
  { id: 'today', title: 'Today', num: true },
  { id: 'forecastMonthEnd', title: 'Forecast', num: true },
  { id: 'total', title: 'All time', num: true },
  { id: 'lastSeenAt', title: 'Last seen' },
];
/** The columns of a past month's view (`?month=`): that month's spend first (GET /keys?month=). */
const sortsFor = (month: string) => (month ? SORTS.map((s) => (s.id === 'monthToDate' ? { id: 'month' as Sort, title: monthWords(month), num: true } : s)) : SORTS);

const SOURCES: [string, string][] = [
  ['', 'Any source'],
  ['ingest', 'Sent in events'],
  ['connection', 'From a provider connection'],
];

interface Filters {
  q: string;
  provider: string;
  source: string;
  sort: Sort;
  order: Order;
  /** A past month (YYYY-MM) whose spend the list shows and sorts by; '' for the current month. */
  month: string;
}

const defaultSort = (month: string): Sort => (month ? 'month' : 'monthToDate');

function filtersFrom(query: URLSearchParams): Filters {
  const m = monthFrom(query);
  const month = m === currentMonth() ? '' : m;
  const sort = (sortsFor(month).find((s) => s.id === query.get('sort'))?.id ?? defaultSort(month)) as Sort;
  const order = query.get('order') === 'asc' || query.get('order') === 'desc' ? (query.get('order') as Order) : sort === 'name' ? 'asc' : 'desc';
  return { q: query.get('q') ?? '', provider: query.get('provider') ?? '', source: query.get('source') ?? '', sort, order, month };
}

function toQuery(f: Filters): string {
  const q = new URLSearchParams();
  if (f.q) q.set('q', f.q);
  if (f.provider) q.set('provider', f.provider);
  if (f.source) q.set('source', f.source);
  if (f.month) q.set('month', f.month);
  if (f.sort !== defaultSort(f.month)) q.set('sort', f.sort);
  if (f.order !== (f.sort === 'name' ? 'asc' : 'desc')) q.set('order', f.order);
  const text = q.toString();
  return text ? `/keys?${text}` : '/keys';
}

/** Under the label: the provider's name of the key and its project, the provider, the hint, where it comes from. */
export function KeyFacts({ k }: { k: Key }) {
  const status = providerStatusWords(k);
  return (
    <div class="muted">
      {k.name && k.label && <span>{k.name} · </span>}
      {providerWords(k.provider)}
      {k.project ? ` · ${projectWords(k)}` : ''}
      {k.hint ? ` · ${k.hint}` : ''} · <span class="mono">{k.hash.slice(0, 12)}</span>
      {/* Keys sent in events are the default and say nothing more (the Source filter finds either kind). */}
      {k.source === 'connection' && (
        <>
          {' '}
          <span class="badge source connection">{sourceWords(k)}</span>
        </>
      )}
      {status && <span class="badge warning">{status}</span>}
      {!k.tracked && (
        <span class="badge warning" title="Past the plan's key limit: listed without spend until the plan has room for it.">
          not tracked on your plan
        </span>
      )}
    </div>
  );
}

function KeyRow({ k, canLabel, onSaved, month }: { k: Key; canLabel: boolean; onSaved: () => void; month: string }) {
  return (
    <tr>
      <td class="key-cell" data-label="Key">
        <LabelEditor item={k} canEdit={canLabel} onSaved={onSaved} />
        <KeyFacts k={k} />
        <StoppedLine stops={k.stoppedBy} keyHash={k.hash} />
      </td>
      <td class="num" data-label={month ? monthWords(month) : 'Month to date'}>
        <Money value={month ? (k.spend.month ?? 0) : k.spend.monthToDate} />
      </td>
      <td class="num" data-label="Today">
        <Money value={k.spend.today} />
      </td>
      <td class="num" data-label="Forecast">
        <Money value={k.spend.forecastMonthEnd} />
      </td>
      <td class="num" data-label="All time">
        <Money value={k.spend.total} />
      </td>
      <td data-label="Last seen">{lastSeenWords(k)}</td>
      <td data-label="">
        <Link href={`/keys/${k.hash}`} aria-label={`Details of ${keyName(k)}`}>
          Details
        </Link>
      </td>
    </tr>
  );
}

/** "Any provider", then the providers Burnrate knows by name (and one from the address that it doesn't, as sent). */
const providerOptions = (current: string): [string, string][] => [
  ['', 'Any provider'],
  ...KNOWN_PROVIDERS.map((p): [string, string] => [p, providerWords(p)]),
  ...(current && !KNOWN_PROVIDERS.includes(current) ? [[current, current] as [string, string]] : []),
];

export function Keys({ query }: { query: URLSearchParams }) {
  const canLabel = useCan('member');
  const f = filtersFrom(query);
  const [typed, setTyped] = useState(f.q);
  // The cursors of the pages before this one ("Previous" goes back one); a new search starts at the first page.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const key = toQuery(f);
  useEffect(() => setCursors([]), [key]);
  // Typing searches after a short pause (each keystroke does not cost a request).
  useEffect(() => {
    if (typed === f.q) return;
    const timer = setTimeout(() => navigate(toQuery({ ...f, q: typed.trim() }), { replace: true }), 250);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [typed]);
  const keys = useLoad(
    () =>
      ok(
        api.GET('/keys', {
          params: {
            query: {
              limit: PAGE,
              sort: f.sort,
              order: f.order,
              ...(f.q ? { q: f.q.slice(0, 100) } : {}),
              ...(f.provider ? { provider: f.provider } : {}),
              ...(f.source ? { source: f.source as 'ingest' | 'connection' } : {}),
              ...(f.month ? { month: f.month } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [key, cursor],
  );
  // What the month's figures miss (untracked keys, a sync under way, …): one call, the month to date.
  const coverage = useLoad(() => ok(api.GET('/spend', { params: { query: { groupBy: 'provider' } } })), []);
  const sorts = sortsFor(f.month);
  const sortBy = (s: (typeof SORTS)[number]) =>
    navigate(toQuery({ ...f, sort: s.id, order: f.sort === s.id ? (f.order === 'asc' ? 'desc' : 'asc') : s.num || s.id === 'lastSeenAt' ? 'desc' : 'asc' }), { replace: true });
  const filtered = Boolean(f.q || f.provider || f.source);
  document.title = 'Keys · Burnrate';
  return (
    <Screen title="Keys">
      <p class="muted">Provider keys seen in your events and connections, with their spend. {UTC_NOTE}</p>
      <CoverageNotes coverage={coverage.data?.coverage} quiet />
      <form class="toolbar" role="search" aria-label="Find keys" onSubmit={(e) => e.preventDefault()}>
        <Field label="Search keys" type="search" hint="Part of the label, the provider or the hint, or the start of the hash." value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        <Select
          label="Provider"
          value={f.provider}
          options={providerOptions(f.provider)}
          onChange={(e) => navigate(toQuery({ ...f, provider: e.currentTarget.value }), { replace: true })}
        />
        <Select label="Source" value={f.source} options={SOURCES} onChange={(e) => navigate(toQuery({ ...f, source: e.currentTarget.value }), { replace: true })} />
        <MonthPicker query={new URLSearchParams(toQuery(f).split('?')[1] ?? '')} path="/keys" />
      </form>
      {f.month && <MonthStatus month={f.month} />}
      <Show state={keys}>
        {({ items, total, nextCursor }) => {
          const first = cursors.length * PAGE + 1;
          return (
            <>
              <p aria-live="polite" data-testid="keys-total">
                <strong>{number(total)}</strong> {total === 1 ? 'key' : 'keys'}
                {filtered ? ' match' : ''}
                {total > 0 && items.length < total ? ` · showing ${number(first)}–${number(first + items.length - 1)}` : ''}
              </p>
              {items.length === 0 ? (
                <Empty>
                  {filtered ? (
                    'No key matches: change the search or the filters.'
                  ) : (
                    <>
                      No keys yet: <Link href="/connections">connect OpenAI or Anthropic</Link> and every key of the organization appears here, or{' '}
                      <Link href="/get-started">send events from your code</Link>.
                    </>
                  )}
                </Empty>
              ) : (
                <div class="table-wrap" tabIndex={0} role="region" aria-label="Keys">
                  <table class="keys">
                    <caption class="muted">
                      Sorted by {sorts.find((s) => s.id === f.sort)!.title.toLowerCase()}, {f.order === 'desc' ? 'descending' : 'ascending'}, across all keys
                    </caption>
                    <thead>
                      <tr>
                        {sorts.map((s) => (
                          <th scope="col" class={s.num ? 'num' : undefined} key={s.id} aria-sort={f.sort === s.id ? (f.order === 'desc' ? 'descending' : 'ascending') : undefined}>
                            <button type="button" class="sort" onClick={() => sortBy(s)}>
                              {s.title}
                              {f.sort === s.id ? (f.order === 'desc' ? ' ↓' : ' ↑') : ''}
                            </button>
                          </th>
                        ))}
                        <th scope="col">
                          <span class="sr-only">Details</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((k) => (
                        <KeyRow key={k.hash} k={k} canLabel={canLabel} onSaved={keys.reload} month={f.month} />
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              <nav class="actions" aria-label="Pages of keys">
                {cursors.length > 0 && (
                  <button type="button" class="secondary" onClick={() => setCursors(cursors.slice(0, -1))}>
                    Previous {PAGE}
                  </button>
                )}
                {nextCursor && (
                  <button type="button" class="secondary" onClick={() => setCursors([...cursors, nextCursor])}>
                    Next {PAGE}
                  </button>
                )}
              </nav>
            </>
          );
        }}
      </Show>
    </Screen>
  );
}
