/**
 * Alerts: counts by status (the API's exact counters), filters by type and key, alerts by the hundred acknowledged
 * in bulk (the ones ticked, or every open alert that matches), each alert linked to its key. After an Acknowledge,
 * focus moves to the next alert's button and a polite message says what happened.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link, navigate } from '../../router.tsx';
import { Select, useSubmit } from '../../ui/form.tsx';
import { EmailWithheld } from '../../ui/email-withheld.tsx';
import { number, period, UTC_NOTE, when } from '../../ui/format.ts';
import { KeyPicker } from '../../ui/key-picker.tsx';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';
import { IncidentView } from './incident.tsx';

type Alert = Schemas['Alert'];
type Status = Alert['status'];
type AlertType = Alert['type'];
const PAGE = 20;

export const TYPE_NAMES: Record<AlertType, string> = {
  cost_threshold: 'Spend passed an amount',
  spend_spike: 'Spend spike',
  new_key: 'New key',
  budget_threshold: 'Budget threshold',
  budget_exceeded: 'Budget exceeded',
  budget_forecast: 'Budget forecast',
  plan_limit: 'Plan limit',
  connection_error: 'Connection needs attention',
  unpriced_model: 'A model has no price',
  budget_stopped: 'Budget stopped spend',
  budget_released: 'Budget released',
  enforcement_failed: 'Budget could not stop spend',
  spend_anomaly: 'Key spending far more than usual',
};

function AlertItem({ a, linked, canAck, busy, checked, onCheck, onAck }: { a: Alert; linked: boolean; canAck: boolean; busy: boolean; checked: boolean; onCheck: (on: boolean) => void; onAck: () => void }) {
  const titleId = `title-${a.id}`;
  const open = a.status === 'triggered';
  const [incident, setIncident] = useState(false);
  return (
    <li class={linked ? 'card linked alert' : 'card alert'} aria-current={linked ? 'true' : undefined} ref={(el) => {
        if (linked) el?.scrollIntoView({ block: 'center' });
      }}>
      {canAck && open && (
        <input type="checkbox" class="pick" checked={checked} aria-describedby={titleId} aria-label="Select" onChange={(e) => onCheck(e.currentTarget.checked)} />
      )}
      <div>
        <h3 id={titleId} style={{ margin: 0 }}>
          {a.title} <span class={`badge ${a.status}`}>{open ? 'Open' : 'Acknowledged'}</span>
        </h3>
        <p style={{ margin: '4px 0' }}>{a.message}</p>
        {a.type === 'spend_anomaly' && a.keyHash && (
          // The incident (its GET) only once someone opens it; open by itself when the alert is the one linked.
          <details class="incident-toggle" open={linked} onToggle={(e) => setIncident(e.currentTarget.open)}>
            <summary>Incident: the key's last 24 hours</summary>
            {(incident || linked) && <IncidentView keyHash={a.keyHash} canRelease={canAck} titleId={titleId} />}
          </details>
        )}
        <p class="muted" style={{ margin: '4px 0' }}>
          {TYPE_NAMES[a.type]} · {period(a.period)} · triggered {when(a.triggeredAt)}
          {a.acknowledgedAt ? ` · acknowledged ${when(a.acknowledgedAt)}` : ''}
        </p>
        <p class="actions" style={{ margin: 0 }}>
          {a.keyHash && (
            <Link href={`/keys/${a.keyHash}`} aria-describedby={titleId}>
              The key
            </Link>
          )}
          {a.connectionId && (
            <Link href={`/connections/${a.connectionId}`} aria-describedby={titleId}>
              The connection
            </Link>
          )}
          {canAck && open && (
            <button type="button" id={`ack-${a.id}`} disabled={busy} aria-describedby={titleId} onClick={onAck}>
              Acknowledge
            </button>
          )}
        </p>
      </div>
    </li>
  );
}

export function Alerts({ query, params }: { query: URLSearchParams; params: Record<string, string> }) {
  const canAck = useCan('member');
  const linked = params.id;
  const status = (query.get('status') ?? (linked ? 'all' : 'triggered')) as Status | 'all';
  const type = (query.get('type') ?? '') as AlertType | '';
  const keyHash = query.get('keyHash') ?? '';
  // The cursors of the pages before this one: "Newer" goes back one.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [said, setSaid] = useState('');
  const [pickKey, setPickKey] = useState(Boolean(keyHash));
  const [focusNext, setFocusNext] = useState<string | undefined>();
  const filterKey = `${status}|${type}|${keyHash}`;
  useEffect(() => {
    setCursors([]);
    setSelected(new Set());
  }, [filterKey]);
  const alerts = useLoad(
    () =>
      ok(
        api.GET('/alerts', {
          params: {
            query: {
              limit: PAGE,
              ...(status === 'all' ? {} : { status }),
              ...(type ? { type } : {}),
              ...(keyHash ? { keyHash } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [filterKey, cursor],
  );
  const ack = useSubmit();
  // After a reload, focus the alert that came after the one acknowledged (or the heading when none is left).
  useEffect(() => {
    // (Not while the buttons are disabled by the request: a disabled button takes no focus.)
    if (!focusNext || alerts.loading || ack.busy) return;
    const next = document.getElementById(`ack-${focusNext}`) ?? document.getElementById('screen-title');
    next?.focus();
    setFocusNext(undefined);
  }, [alerts.data, alerts.loading, ack.busy, focusNext]);

  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(query);
    if (value) next.set(name, value);
    else next.delete(name);
    navigate(`${linked ? `/alerts/${linked}` : '/alerts'}?${next}`, { replace: true });
  };
  const acknowledge = (body: { ids: string[] } | { all: true; type?: AlertType; keyHash?: string }, then: (n: number) => void) =>
    void ack.run(async () => then((await ok(api.POST('/alerts/acknowledge', { body }))).acknowledged)).then(alerts.reload);

  document.title = 'Alerts · Burnrate';
  return (
    <Screen title="Alerts">
      <p class="muted">{UTC_NOTE}</p>
      <EmailWithheld />
      <div class="toolbar">
        <Select
          label="Show"
          value={status}
          options={[
            ['triggered', `Open${alerts.data ? ` (${number(alerts.data.counts.triggered)})` : ''}`],
            ['acknowledged', `Acknowledged${alerts.data ? ` (${number(alerts.data.counts.acknowledged)})` : ''}`],
            ['all', 'All'],
          ]}
          onChange={(e) => setFilter('status', e.currentTarget.value)}
        />
        <Select label="Type" value={type} options={[['', 'Any type'], ...Object.entries(TYPE_NAMES)]} onChange={(e) => setFilter('type', e.currentTarget.value)} />
      </div>
      {/* The picker (and its GET /keys) only once the user opens it. */}
      <details class="key-filter" open={pickKey} onToggle={(e) => setPickKey(e.currentTarget.open)}>
        <summary>{keyHash ? 'Alerts of one key' : 'Filter by key'}</summary>
        {pickKey && <KeyPicker label="Key" allowNone="All keys" value={keyHash} onChange={(hash) => setFilter('keyHash', hash)} />}
      </details>
      <div aria-live="polite" class="said">
        {said}
      </div>
      <ErrorBox error={ack.error} />
      <Show state={alerts}>
        {({ items, nextCursor, counts }) => {
          const open = items.filter((a) => a.status === 'triggered');
          return (
            <>
              <p data-testid="alert-counts">
                <strong>{number(counts.triggered)}</strong> open · <strong>{number(counts.acknowledged)}</strong> acknowledged
              </p>
              {canAck && status !== 'acknowledged' && counts.triggered > 0 && (
                <div class="actions bulk">
                  <button
                    type="button"
                    class="secondary"
                    disabled={ack.busy || open.length === 0}
                    onClick={() => setSelected(selected.size === open.length ? new Set() : new Set(open.map((a) => a.id)))}
                  >
                    {selected.size === open.length && open.length > 0 ? 'Clear the selection' : 'Select this page'}
                  </button>
                  <button
                    type="button"
                    disabled={ack.busy || selected.size === 0}
                    onClick={() =>
                      acknowledge({ ids: [...selected] }, (n) => {
                        setSelected(new Set());
                        setSaid(`${number(n)} ${n === 1 ? 'alert' : 'alerts'} acknowledged.`);
                      })
                    }
                  >
                    Acknowledge selected ({selected.size})
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    disabled={ack.busy}
                    title={type || keyHash ? 'Every open alert of this type and key, on every page' : 'Every open alert, on every page'}
                    onClick={() => {
                      if (!confirm(`Acknowledge every open alert that matches${type || keyHash ? ' these filters' : ''}?`)) return;
                      acknowledge({ all: true, ...(type ? { type } : {}), ...(keyHash ? { keyHash } : {}) }, (n) => {
                        setSelected(new Set());
                        setSaid(`${number(n)} ${n === 1 ? 'alert' : 'alerts'} acknowledged.`);
                      });
                    }}
                  >
                    Acknowledge all matching
                  </button>
                </div>
              )}
              {items.length === 0 ? (
                <Empty>{status === 'triggered' ? 'No open alerts.' : 'No alerts.'}</Empty>
              ) : (
                <ul class="alerts" aria-label="Alerts">
                  {items.map((a, i) => (
                    <AlertItem
                      key={a.id}
                      a={a}
                      linked={a.id === linked}
                      canAck={canAck}
                      busy={ack.busy}
                      checked={selected.has(a.id)}
                      onCheck={(on) => {
                        const next = new Set(selected);
                        if (on) next.add(a.id);
                        else next.delete(a.id);
                        setSelected(next);
                      }}
                      onAck={() => {
                        const after = items.slice(i + 1).find((x) => x.status === 'triggered') ?? items.slice(0, i).reverse().find((x) => x.status === 'triggered');
                        acknowledge({ ids: [a.id] }, () => {
                          setSaid(`Acknowledged: ${a.title}`);
                          setFocusNext(after?.id ?? 'none');
                        });
                      }}
                    />
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
          );
        }}
      </Show>
    </Screen>
  );
}
