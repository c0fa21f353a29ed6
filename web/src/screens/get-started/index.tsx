/**
 * Get started (`/get-started`, where sign-up lands): the two ways spend flows in. "Connect OpenAI / Anthropic" (no
 * code: the Connections screen) and "Send from your code" (a sending key in one click, the quick start, and a live
 * panel that turns green when the first event is counted).
 */
import { useEffect, useState } from 'preact/hooks';
import { useLoad } from '../../ui/load.ts';
import { api, ok } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { useSubmit } from '../../ui/form.tsx';
import { keyName } from '../../ui/key-name.ts';
import { useCan } from '../../ui/me.tsx';
import { Money } from '../../ui/money.tsx';
import { ErrorBox, Screen } from '../../ui/states.tsx';
import { QuickStart, SecretCard } from '../ingest-keys/quick-start.tsx';
import { arrivalOf, baselineOf, type Arrival } from './first-event.ts';

/** How often the panel asks whether an event arrived (README "Onboarding"). */
export const POLL_MS = 2_000;
/** How many of the most recently seen keys the baseline remembers (the API's page limit). */
const BASELINE_KEYS = 100;
/** What the quick start shows to someone who may not create a sending key. */
const PLACEHOLDER_KEY = 'YOUR_SENDING_KEY';

/**
 * The keys whose events ingestion ACCEPTED (`source=ingest`), most recently seen first: a connection's keys (their
 * `lastSeenAt` moves with a sync) and refused events (they change no key) never turn the panel green.
 */
const latestKeys = async (limit: number) => (await ok(api.GET('/keys', { params: { query: { sort: 'lastSeenAt', source: 'ingest', limit } } }))).items;

type Watch = { phase: 'starting' } | { phase: 'waiting'; hadKeys: boolean; failed?: Error } | { phase: 'received'; arrival: Arrival };

/**
 * Watches for a new event from the moment the screen opens: the baseline once, then the most recently seen key every
 * POLL_MS (skipped while the tab is hidden). Stops after the first arrival and when the screen unmounts.
 */
function useFirstEvent(): Watch {
  const [watch, setWatch] = useState<Watch>({ phase: 'starting' });
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const later = (run: () => Promise<void>) => {
      if (!stopped) timer = setTimeout(() => void run(), POLL_MS);
    };
    const start = async (): Promise<void> => {
      let baseline;
      try {
        baseline = baselineOf(await latestKeys(BASELINE_KEYS));
      } catch (error) {
        if (stopped) return;
        setWatch({ phase: 'waiting', hadKeys: false, failed: error as Error });
        return later(start);
      }
      const hadKeys = baseline.latest !== null;
      if (stopped) return;
      setWatch({ phase: 'waiting', hadKeys });
      const poll = async (): Promise<void> => {
        if (document.hidden) return later(poll);
        try {
          const arrival = arrivalOf(baseline, (await latestKeys(1))[0]);
          if (stopped) return;
          if (arrival) return setWatch({ phase: 'received', arrival });
          setWatch({ phase: 'waiting', hadKeys });
        } catch (error) {
          if (stopped) return;
          setWatch({ phase: 'waiting', hadKeys, failed: error as Error });
        }
        later(poll);
      };
      later(poll);
    };
    void start();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  return watch;
}

/** The live panel: "Waiting for your first event…", then "First event received: $0.00015 from key …x7Qa". */
function EventPanel() {
  const watch = useFirstEvent();
  const received = watch.phase === 'received' ? watch.arrival : undefined;
  const first = received ? received.first : watch.phase !== 'waiting' || !watch.hadKeys;
  return (
    <div class="event-panel">
      <p role="status" class={received ? 'waiting received' : 'waiting'} data-testid="first-event">
        {received ? (
          <>
            <span class="dot" aria-hidden="true" />
            <span>
              {first ? 'First event received' : 'New event received'}
              {received.costUsd === null ? (
                ' '
              ) : (
                <>
                  : <Money value={received.costUsd} testId="first-event-amount" />{' '}
                </>
              )}
              from key {keyName(received.key)}
              {received.requests !== null && received.requests > 1 ? ` (${received.requests} requests)` : ''}.
            </span>
          </>
        ) : (
          <>
            <span class="dot pulse" aria-hidden="true" />
            <span>{first ? 'Waiting for your first event…' : 'Waiting for a new event…'}</span>
          </>
        )}
      </p>
      {received ? (
        <p>
          <Link href="/">See it on the Overview</Link> · <Link href={`/keys/${received.key.hash}`}>the key’s spend</Link>
        </p>
      ) : (
        <p class="muted">
          Checked every {POLL_MS / 1000} seconds: it turns green as soon as Burnrate counts an event.
          {watch.phase === 'waiting' && watch.failed ? ` The last check failed (${watch.failed.message}); trying again.` : ''}
        </p>
      )}
    </div>
  );
}

function SendFromCode() {
  const isAdmin = useCan('admin');
  // Which providers are connected: their events are refused, so the quick start reports another one.
  const connections = useLoad(() => ok(api.GET('/connections')), []);
  const connected = connections.data?.items.map((c) => c.provider);
  const [created, setCreated] = useState<string | undefined>();
  const create = useSubmit();
  return (
    <section class="card way" aria-labelledby="way-code">
      <h2 id="way-code">Send from your code</h2>
      <p>
        Your code reports each call’s tokens as it makes it: the key’s SHA-256 and last 4 characters leave your process, never the key. For Node, the
        reporter wraps the official OpenAI and Anthropic SDKs; curl and Python send an event themselves.
      </p>
      <h3>1. A sending key</h3>
      {created ? (
        <SecretCard secret={created} level={3} />
      ) : isAdmin ? (
        <>
          <p>The secret your code sends its events with.</p>
          <ErrorBox error={create.error} />
          <p class="actions">
            <button
              type="button"
              disabled={create.busy}
              onClick={() => void create.run(async () => setCreated((await ok(api.POST('/ingest-keys', { body: { name: 'Get started' } }))).key))}
            >
              {create.busy ? 'Creating…' : 'Create a sending key'}
            </button>
          </p>
        </>
      ) : (
        <p>
          An admin of your account creates sending keys (<Link href="/ingest-keys">Sending keys</Link>); put yours in place of <code>{PLACEHOLDER_KEY}</code> below.
        </p>
      )}
      <h3>2. The quick start</h3>
      {created || !isAdmin ? <QuickStart ingestKey={created ?? PLACEHOLDER_KEY} connected={connected} /> : <p class="muted">It appears here with your new key in place.</p>}
      <h3>3. Your first event</h3>
      <EventPanel />
    </section>
  );
}

export function GetStarted() {
  const isAdmin = useCan('admin');
  document.title = 'Get started · Burnrate';
  return (
    <Screen title="Get started">
      <p>Two ways to see what each of your OpenAI and Anthropic API keys spends. Either takes a couple of minutes.</p>
      <section class="card way" aria-labelledby="way-connect">
        <h2 id="way-connect">Connect OpenAI / Anthropic</h2>
        <p>
          No code. Give Burnrate an organization admin key: it checks the key with the provider, imports your organization’s usage since the first day of
          last month, and keeps it up to date — every API key in it, with its spend per day and model.
        </p>
        <p class="actions">
          <Link class="button" href="/connections">
            Connect OpenAI / Anthropic
          </Link>
          {!isAdmin && <span class="muted">An admin of your account connects a provider.</span>}
        </p>
      </section>
      <SendFromCode />
      <p class="muted">
        One way per provider: while a provider is connected, events about its keys sent from code are refused, so nothing counts twice.
      </p>
    </Screen>
  );
}
