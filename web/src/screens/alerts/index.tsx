import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { navigate } from '../../router.tsx';
import { Select, useSubmit } from '../../ui/form.tsx';
import { when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';

type Status = 'triggered' | 'acknowledged';
const PAGE = 20;

export function Alerts({ query, params }: { query: URLSearchParams; params: Record<string, string> }) {
  const canAck = useCan('member');
  const linked = params.id;
  const status = (query.get('status') ?? (linked ? 'all' : 'triggered')) as Status | 'all';
  // The cursors of the pages before this one: "Newer" goes back one.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const alerts = useLoad(
    () =>
      ok(
        api.GET('/alerts', {
          params: { query: { limit: PAGE, ...(status === 'all' ? {} : { status }), ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [status, cursor],
  );
  const ack = useSubmit();
  document.title = 'Alerts · Burnrate';
  return (
    <Screen title="Alerts">
      <Select
        label="Show"
        value={status}
        options={[
          ['triggered', 'Open'],
          ['acknowledged', 'Acknowledged'],
          ['all', 'All'],
        ]}
        onChange={(e) => {
          setCursors([]);
          navigate(`${linked ? `/alerts/${linked}` : '/alerts'}?status=${e.currentTarget.value}`, { replace: true });
        }}
      />
      <ErrorBox error={ack.error} />
      <Show state={alerts}>
        {({ items, nextCursor }) => (
          <>
            {items.length === 0 ? (
              <Empty>{status === 'triggered' ? 'No open alerts.' : 'No alerts.'}</Empty>
            ) : (
              <ul class="cards" aria-label="Alerts" style={{ gridTemplateColumns: '1fr', padding: 0 }}>
                {items.map((a) => (
                  <li
                    class={a.id === linked ? 'card linked' : 'card'}
                    key={a.id}
                    style={{ listStyle: 'none' }}
                    aria-current={a.id === linked ? 'true' : undefined}
                    ref={(el) => {
                      if (a.id === linked) el?.scrollIntoView({ block: 'center' });
                    }}
                  >
                    <h3 style={{ margin: 0 }}>
                      {a.title} <span class={`badge ${a.status}`}>{a.status === 'triggered' ? 'Open' : 'Acknowledged'}</span>
                    </h3>
                    <p style={{ margin: '4px 0' }}>{a.message}</p>
                    <p class="muted" style={{ margin: '4px 0' }}>
                      Triggered {when(a.triggeredAt)}
                      {a.acknowledgedAt ? ` · acknowledged ${when(a.acknowledgedAt)}` : ''}
                    </p>
                    {canAck && a.status === 'triggered' && (
                      <button
                        type="button"
                        disabled={ack.busy}
                        onClick={() => void ack.run(() => ok(api.PATCH('/alerts/{id}/acknowledge', { params: { path: { id: a.id } } }))).then(alerts.reload)}
                      >
                        Acknowledge {a.title}
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            )}
            <nav class="actions" aria-label="Pages">
              {cursors.length > 0 && (
                <button type="button" class="secondary" onClick={() => setCursors(cursors.slice(0, -1))}>
                  Newer alerts
                </button>
              )}
              {nextCursor && (
                <button type="button" class="secondary" onClick={() => setCursors([...cursors, nextCursor])}>
                  Older alerts
                </button>
              )}
            </nav>
          </>
        )}
      </Show>
    </Screen>
  );
}
