/**
 * Connections: an admin pastes an OpenAI or Anthropic admin key and Burnrate reads that organization's usage
 * (every API key, per day and model, no code). Each connection shows its status in words, its last sync and last
 * success, and (admins only) Sync now, Pause / Resume, Rotate key and Disconnect. While a sync is under way (a new
 * connection, a Sync now) the list reloads every few seconds until the sync has run.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { UTC_NOTE } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { CoverageNotes } from '../../ui/coverage.tsx';
import { useCan } from '../../ui/me.tsx';
import { Empty, Screen, Show } from '../../ui/states.tsx';
import { ConnectionCard } from './connection-card.tsx';
import { ConnectForm } from './connect-form.tsx';
import { PROVIDER_NAMES, type Provider } from './words.ts';

type Connection = Schemas['Connection'];
const PROVIDERS: Provider[] = ['openai', 'anthropic', 'openrouter'];
const POLL_MS = 3000;

/** A connection whose sync the screen waits for: never synced yet, or a sync asked for after its last one. */
const syncPending = (c: Connection, askedAt: string | undefined) =>
  c.status === 'active' && (c.lastSyncAt === null || (askedAt !== undefined && c.lastSyncAt < askedAt));

export function Connections() {
  const isAdmin = useCan('admin');
  const list = useLoad(() => ok(api.GET('/connections')), []);
  // What this month's figures miss because of the connections (a sync under way or failing, plan limits).
  const coverage = useLoad(() => ok(api.GET('/spend', { params: { query: { groupBy: 'provider' } } })), [list.data]);
  // When each connection's Sync now was asked for (by id): the screen reloads until its lastSyncAt passes it.
  const [asked, setAsked] = useState<Record<string, string>>({});
  const waiting = (list.data?.items ?? []).some((c) => syncPending(c, asked[c.id]));
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(list.reload, POLL_MS);
    return () => clearInterval(timer);
  }, [waiting, list.reload]);
  document.title = 'Connections · Burnrate';
  return (
    <Screen title="Connections">
      <p>
        Connect an OpenAI or Anthropic organization with its admin key, or an OpenRouter account with its management key: Burnrate reads the organization's usage from the provider every few minutes and
        finds every API key in it, with its spend per day and model. No proxy and no code. One connection per provider.
      </p>
      <p class="muted">
        While a provider is connected, its spend comes from the connection only: events of that provider sent to the ingest API are refused, so nothing
        is counted twice. {UTC_NOTE}
      </p>
      <CoverageNotes coverage={coverage.data?.coverage} />
      <Show state={list}>
        {({ items }) => {
          const free = PROVIDERS.filter((p) => !items.some((c) => c.provider === p));
          return (
            <>
              {items.length === 0 ? (
                <Empty>No provider connected yet.{isAdmin ? ' Connect one below.' : ' An admin of your account can connect one.'}</Empty>
              ) : (
                items.map((c) => (
                  <ConnectionCard
                    key={c.id}
                    c={c}
                    canAdmin={isAdmin}
                    syncing={syncPending(c, asked[c.id])}
                    onSyncAsked={(at) => setAsked((a) => ({ ...a, [c.id]: at }))}
                    onChanged={list.reload}
                  />
                ))
              )}
              {isAdmin && free.length > 0 && <ConnectForm providers={free} onConnected={list.reload} />}
              {!isAdmin && free.length > 0 && (
                <p class="muted">
                  Not connected: {free.map((p) => PROVIDER_NAMES[p]).join(', ')}. Only an admin can connect a provider; <Link href="/ingest-keys">events sent from code</Link> keep
                  working meanwhile.
                </p>
              )}
            </>
          );
        }}
      </Show>
    </Screen>
  );
}
