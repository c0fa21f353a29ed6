import { useMemo, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { DailyChart } from '../../ui/chart.tsx';
import { number, providerWords, UTC_NOTE, when } from '../../ui/format.ts';
import { Money } from '../../ui/money.tsx';
import { lastSeenWords } from '../../ui/last-seen.ts';
import { keyName, providerStatusWords, REQUESTS_UNKNOWN_NOTE, requestsUnknown, sourceWords } from '../../ui/key-name.ts';
import { LabelEditor } from '../../ui/label-editor.tsx';
import { TagChips, TagEditor } from '../../ui/tag-editor.tsx';
import { useLoad } from '../../ui/load.ts';
import { CoverageNotes } from '../../ui/coverage.tsx';
import { useCan } from '../../ui/me.tsx';
import { RangePicker, rangeFrom } from '../../ui/range.tsx';
import { Empty, ErrorBox, Loading, Screen } from '../../ui/states.tsx';
import { useSubmit } from '../../ui/form.tsx';
import { HolderLink, leverWords } from '../../ui/stopped-by.tsx';

type KeyRelease = Schemas['KeyRelease'];

const RELEASE_WORDS: Record<KeyRelease['released'][number]['status'], string> = {
  released: 'its calls go through again',
  releasing: 'the next sync switches it back on at the provider',
  held_by_budget: 'a stop budget still keeps it stopped',
};

/**
 * What stops the key now (its `stoppedBy`): each holder linked (a budget's card, where it is released; a rule's
 * incident), the lever and since when. A spend-anomaly rule's hold is released here ("Release the key", members);
 * the answer changes the notice at once, before the key is read again.
 */
function StoppedNotice({ k, canRelease, onReleased }: { k: Schemas['KeyDetail']; canRelease: boolean; onReleased: () => void }) {
  const release = useSubmit();
  const [released, setReleased] = useState<KeyRelease | undefined>();
  const gone = new Set(released?.released.filter((r) => r.status !== 'held_by_budget').map((r) => r.ruleId) ?? []);
  const stops = k.stoppedBy.filter((s) => !(s.kind === 'anomaly' && gone.has(s.id)));
  if (stops.length === 0 && !released) return null;
  const anomaly = stops.some((s) => s.kind === 'anomaly');
  return (
    <section class={stops.length > 0 ? 'notice warn stopped-notice' : 'notice stopped-notice'} aria-labelledby="stopped-title" data-testid="key-stopped">
      <h2 id="stopped-title">{stops.length > 0 ? 'Stopped: this key can’t spend' : 'Released'}</h2>
      {stops.length > 0 && (
        <ul>
          {stops.map((s) => (
            <li key={`${s.kind}:${s.id}:${s.lever}`}>
              By <HolderLink stop={s} keyHash={k.hash} />: {leverWords(s.lever)}, since {when(s.since)}
              {s.kind === 'budget' ? <> · released on the budget’s card</> : null}
            </li>
          ))}
        </ul>
      )}
      {released && (
        <p data-testid="key-released">
          Released: {[...new Set(released.released.map((r) => RELEASE_WORDS[r.status]))].join('; ') || 'nothing held it any more'}.
        </p>
      )}
      {canRelease && anomaly && (
        <button
          type="button"
          disabled={release.busy}
          onClick={() => {
            if (!confirm('Release the key? Its calls go through again, and the rule will not stop it again today.')) return;
            void release.run(async () => {
              setReleased(await ok(api.POST('/keys/{hash}/release', { params: { path: { hash: k.hash } } })));
              onReleased();
            });
          }}
        >
          Release the key
        </button>
      )}
      <ErrorBox error={release.error} />
    </section>
  );
}

/** Where the key comes from: a connection (the provider's name, id, project and status of the key) or events. */
function KeyOrigin({ k }: { k: Schemas['KeyDetail'] }) {
  const status = providerStatusWords(k);
  if (k.source !== 'connection') return <div class="muted">Source: sent in events</div>;
  return (
    <dl class="facts" aria-label="At the provider">
      <div>
        <dt>Source</dt>
        <dd>
          <Link href="/connections">{sourceWords(k)}</Link>
        </dd>
      </div>
      <div>
        <dt>Name at {providerWords(k.provider)}</dt>
        <dd>{k.name ?? '—'}</dd>
      </div>
      {k.provider !== 'openrouter' && (
        <div>
          <dt>{k.provider === 'anthropic' ? 'Workspace' : 'Project'}</dt>
          <dd>{k.project ? <Link href={`/projects?projectId=${encodeURIComponent(k.project.id)}`}>{k.project.name}</Link> : '—'}</dd>
        </div>
      )}
      {k.provider === 'openrouter' && k.source === 'connection' && (
        <div>
          <dt>Credit limit at OpenRouter</dt>
          <dd>{k.providerLimitUsd === null ? 'None' : <Money value={k.providerLimitUsd} />}</dd>
        </div>
      )}
      {k.providerKeyId && (
        <div>
          <dt>Key id</dt>
          <dd class="mono" style={{ overflowWrap: 'anywhere' }}>
            {k.providerKeyId}
          </dd>
        </div>
      )}
      {status && (
        <div>
          <dt>Status</dt>
          <dd>{status}</dd>
        </div>
      )}
    </dl>
  );
}

export function KeyDetail({ params, query }: { params: Record<string, string>; query: URLSearchParams }) {
  const hash = params.hash!;
  const range = rangeFrom(query);
  const canLabel = useCan('member');
  const key = useLoad(
    () => ok(api.GET('/keys/{hash}', { params: { path: { hash }, query: { from: range.from, to: range.to } } })),
    [hash, range.from, range.to],
  );
  const series = useMemo(
    () => (key.data ? [{ name: 'Spend', values: key.data.breakdown.daily.map((d) => d.costUsd) }] : []),
    [key.data],
  );
  const days = useMemo(() => key.data?.breakdown.daily.map((d) => d.date) ?? [], [key.data]);
  // The notes that qualify this key's figures: its provider's, over the range shown.
  const provider = key.data?.provider;
  const coverage = useLoad(
    () => (provider ? ok(api.GET('/spend', { params: { query: { from: range.from, to: range.to, groupBy: 'provider', provider } } })) : new Promise<never>(() => undefined)),
    [provider, range.from, range.to],
  );
  const title = key.data ? `Key ${keyName(key.data)}` : 'Key';
  const noRequests = key.data ? requestsUnknown(key.data) : false;
  document.title = `${title} · Burnrate`;
  return (
    <Screen title={title}>
      <p>
        <Link href="/keys">← All keys</Link> <span class="muted">{UTC_NOTE}</span>
      </p>
      {key.error && <ErrorBox error={key.error} />}
      {!key.data && !key.error && <Loading />}
      {key.data && (
        <>
          {!key.data.tracked && (
            <p class="notice warn" role="status" data-testid="untracked">
              This key is past your plan's key limit: it is listed, but its spend is not imported. <Link href="/billing">Upgrade</Link> to track it; its
              history is imported with the next sync.
            </p>
          )}
          <StoppedNotice key={key.data.hash} k={key.data} canRelease={canLabel} onReleased={key.reload} />
          <CoverageNotes coverage={coverage.data?.coverage} />
          <div class="cards">
            <div class="card stat">
              <div class="muted">Month to date</div>
              <div class="value"><Money value={key.data.spend.monthToDate} /></div>
            </div>
            <div class="card stat">
              <div class="muted">Today</div>
              <div class="value"><Money value={key.data.spend.today} /></div>
            </div>
            <div class="card stat">
              <div class="muted">Forecast, month end</div>
              <div class="value"><Money value={key.data.spend.forecastMonthEnd} testId="key-forecast" /></div>
            </div>
            <div class="card stat">
              <div class="muted">All time</div>
              <div class="value"><Money value={key.data.spend.total} testId="key-total" /></div>
            </div>
            <div class="card">
              <div>
                Label: <LabelEditor item={key.data} canEdit={canLabel} onSaved={key.reload} />
              </div>
              <div data-testid="key-tags">
                Tags:{' '}
                <TagEditor
                  label={keyName(key.data)}
                  tags={key.data.tags}
                  canEdit={canLabel}
                  save={(tags) => ok(api.PATCH('/keys/{hash}', { params: { path: { hash } }, body: { tags } }))}
                  onSaved={key.reload}
                />
              </div>
              {Object.keys(key.data.effectiveTags).some((n) => !(n in key.data!.tags)) && (
                <div class="muted" data-testid="key-effective-tags">
                  With its project’s:{' '}
                  <TagChips tags={key.data.effectiveTags} inherited={new Set(Object.keys(key.data.effectiveTags).filter((n) => !(n in key.data!.tags)))} />
                </div>
              )}
              <div class="muted">
                {providerWords(key.data.provider)} · hint {key.data.hint ?? '—'} · last seen {lastSeenWords(key.data)}
              </div>
              <KeyOrigin k={key.data} />
            </div>
          </div>
          <h2>Daily spend</h2>
          <div class="toolbar">
            <RangePicker query={query} path={`/keys/${hash}`} />
          </div>
          <DailyChart days={days} series={series} label={`Daily spend of ${keyName(key.data)}`} />
          <h2>By model</h2>
          {key.data.breakdown.byModel.length === 0 && key.data.breakdown.notByModelUsd > 0 ? (
            <p class="muted">
              <Money value={key.data.breakdown.notByModelUsd} /> of today, not broken down by model yet: {providerWords(key.data.provider)} reports models once the day is complete.
            </p>
          ) : key.data.breakdown.byModel.length === 0 ? (
            <Empty>No spend in this range.</Empty>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Spend by model">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col" class="num">Requests{noRequests ? ' *' : ''}</th>
                    <th scope="col" class="num">Input tokens</th>
                    <th scope="col" class="num">Output tokens</th>
                    <th scope="col" class="num">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {key.data.breakdown.byModel.map((m) => (
                    <tr key={`${m.provider}/${m.model}`}>
                      <td>
                        {m.provider}/{m.model}
                        {m.unit !== undefined && <span class="muted"> · {quantityText(m.quantity ?? 0, m.unit)}</span>}
                      </td>
                      <td class="num">{noRequests ? <abbr title="not available">n/a</abbr> : number(m.requests)}</td>
                      <td class="num">{m.unit !== undefined ? '–' : number(m.inputTokens)}</td>
                      <td class="num">{m.unit !== undefined ? '–' : number(m.outputTokens)}</td>
                      <td class="num"><Money value={m.costUsd} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {noRequests && <p class="muted">* {REQUESTS_UNKNOWN_NOTE}</p>}
              {key.data.breakdown.notByModelUsd > 0 && (
                <p class="muted">
                  <Money value={key.data.breakdown.notByModelUsd} /> of today is not broken down by model yet: {providerWords(key.data.provider)} reports models once the day is complete.
                </p>
              )}
            </div>
          )}
        </>
      )}
    </Screen>
  );
}

/** Usage counted in units other than tokens (images, characters, …), as a person reads it: `60 images`, `1 call`. */
const UNIT_NAMES: Record<string, [string, string]> = {
  image: ['image', 'images'],
  character: ['character', 'characters'],
  second: ['second', 'seconds'],
  request: ['request', 'requests'],
  byte_day: ['byte-day of storage', 'byte-days of storage'],
  session: ['session', 'sessions'],
  call: ['call', 'calls'],
};
function quantityText(quantity: number, unit: string): string {
  const [one, many] = UNIT_NAMES[unit] ?? [unit, unit];
  return `${number(quantity)} ${quantity === 1 ? one : many}`;
}
