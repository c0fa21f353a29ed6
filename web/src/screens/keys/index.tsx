import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { money, when } from '../../ui/format.ts';
import { keyName } from '../../ui/key-name.ts';
import { LabelEditor } from '../../ui/label-editor.tsx';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, Screen, Show } from '../../ui/states.tsx';

type Key = Schemas['Key'];
type Column = { id: string; title: string; value: (k: Key) => string | number; num?: boolean };

const COLUMNS: Column[] = [
  { id: 'label', title: 'Label', value: (k) => keyName(k).toLowerCase() },
  { id: 'hint', title: 'Hint', value: (k) => k.hint ?? '' },
  { id: 'provider', title: 'Provider', value: (k) => k.provider },
  { id: 'today', title: 'Today (UTC)', value: (k) => k.spend.today, num: true },
  { id: 'mtd', title: 'Month to date', value: (k) => k.spend.monthToDate, num: true },
  { id: 'forecast', title: 'Forecast', value: (k) => k.spend.forecastMonthEnd, num: true },
  { id: 'lastSeen', title: 'Last seen', value: (k) => k.lastSeenAt },
];

export function Keys() {
  const canLabel = useCan('member');
  const [sort, setSort] = useState<{ by: string; desc: boolean }>({ by: 'mtd', desc: true });
  const keys = useLoad(() => ok(api.GET('/keys', { params: { query: { limit: 100 } } })), []);
  document.title = 'Keys · Burnrate';
  return (
    <Screen title="Keys">
      <p class="muted">Provider keys seen in your events, with their spend. Days are UTC.</p>
      <Show state={keys}>
        {({ items }) => {
          if (items.length === 0) return <Empty>No keys yet: they appear when events name them.</Empty>;
          const column = COLUMNS.find((c) => c.id === sort.by) ?? COLUMNS[4]!;
          const sorted = [...items].sort((a, b) => {
            const x = column.value(a);
            const y = column.value(b);
            const order = x < y ? -1 : x > y ? 1 : 0;
            return sort.desc ? -order : order;
          });
          return (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Keys">
              <table>
                <caption class="muted">Sorted by {column.title.toLowerCase()}, {sort.desc ? 'descending' : 'ascending'}</caption>
                <thead>
                  <tr>
                    {COLUMNS.map((c) => (
                      <th
                        scope="col"
                        class={c.num ? 'num' : undefined}
                        key={c.id}
                        aria-sort={sort.by === c.id ? (sort.desc ? 'descending' : 'ascending') : undefined}
                      >
                        <button type="button" class="sort" onClick={() => setSort({ by: c.id, desc: sort.by === c.id ? !sort.desc : Boolean(c.num) })}>
                          {c.title}
                          {sort.by === c.id ? (sort.desc ? ' ↓' : ' ↑') : ''}
                        </button>
                      </th>
                    ))}
                    <th scope="col">Details</th>
                  </tr>
                </thead>
                <tbody>
                  {sorted.map((k) => (
                    <tr key={k.hash}>
                      <td>
                        <LabelEditor item={k} canEdit={canLabel} onSaved={keys.reload} />
                      </td>
                      <td>{k.hint ?? '—'}</td>
                      <td>{k.provider}</td>
                      <td class="num">{money(k.spend.today)}</td>
                      <td class="num">{money(k.spend.monthToDate)}</td>
                      <td class="num">{money(k.spend.forecastMonthEnd)}</td>
                      <td>{when(k.lastSeenAt)}</td>
                      <td>
                        <Link href={`/keys/${k.hash}`} aria-label={`Details of ${keyName(k)}`}>
                          Details
                        </Link>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          );
        }}
      </Show>
    </Screen>
  );
}
