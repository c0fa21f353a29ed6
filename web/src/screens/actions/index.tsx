/**
 * Actions: every act of enforcement of the account (GET /enforcement-actions), newest first: what Burnrate did at a
 * provider or in the reporter, for which budget or spend-anomaly rule, to which key or project, why, by whom, and
 * whether the provider took it (a failed act with the provider's answer). Filtered by budget, provider and result (in
 * the URL, so a link keeps them); "Load more" follows the cursor. A filtered page may hold fewer acts than asked
 * while more follow (the API reads a bounded number a request): the screen says so instead of "none".
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link, navigate } from '../../router.tsx';
import { Select, useSubmit } from '../../ui/form.tsx';
import { KNOWN_PROVIDERS, providerWords, UTC_NOTE, when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';

type Action = Schemas['EnforcementAction'];
const PAGE = 50;

/** What happened, in words, around the target's name (`key`: the key's link, `project`: the project's name). */
const WHAT: Record<Action['kind'], (target: ComponentChildren, provider: string) => ComponentChildren> = {
  key_deactivated: (t, p) => <>Key {t} set inactive at {p}</>,
  key_reactivated: (t, p) => <>Key {t} set active again at {p}</>,
  key_disabled: (t, p) => <>Key {t} disabled at {p}</>,
  key_enabled: (t, p) => <>Key {t} enabled again at {p}</>,
  project_limit_set: (t, p) => <>Hard spend limit set on project {t} at {p}</>,
  project_limit_removed: (t, p) => <>Burnrate’s limit taken off project {t} at {p}</>,
  reporter_blocked: (t) => <>The reporter refuses calls of key {t}</>,
  reporter_unblocked: (t) => <>The reporter lets calls of key {t} through again</>,
  key_limit_set: (t, p) => <>Credit limit set on key {t} at {p}</>,
  key_limit_removed: (t, p) => <>Burnrate’s credit limit taken off key {t} at {p}</>,
  workspace_limit_set: (t, p) => <>Spend limit set on workspace {t} at {p}</>,
  workspace_limit_removed: (t, p) => <>Burnrate’s spend limit taken off workspace {t} at {p}</>,
};

export const REASON_WORDS: Record<Action['reason'], string> = {
  limit_reached: 'the limit was reached',
  period_start: 'a new month began',
  released: 'released by hand',
  budget_changed: 'the budget was changed',
  budget_deleted: 'the budget was deleted',
  connection_changed: 'the connection was paused, deleted or stopped letting budgets act',
  anomaly: 'the key spent far more than usual',
};

const RESULTS: [string, string][] = [
  ['', 'Any result'],
  ['ok', 'Done'],
  ['failed', 'Failed'],
];

interface Filters {
  budgetId: string;
  provider: string;
  result: '' | 'ok' | 'failed';
}

function filtersFrom(query: URLSearchParams): Filters {
  const result = query.get('result');
  return { budgetId: query.get('budgetId') ?? '', provider: query.get('provider') ?? '', result: result === 'ok' || result === 'failed' ? result : '' };
}

function toPath(f: Filters): string {
  const q = new URLSearchParams();
  if (f.budgetId) q.set('budgetId', f.budgetId);
  if (f.provider) q.set('provider', f.provider);
  if (f.result) q.set('result', f.result);
  const text = q.toString();
  return text ? `/actions?${text}` : '/actions';
}

/** The names the record points at: budgets (also the filter's choices), anomaly rules, the team (who released). */
async function loadNames() {
  const [budgets, rules, users] = await Promise.all([
    ok(api.GET('/budgets')),
    ok(api.GET('/alert-rules')),
    ok(api.GET('/users', { params: { query: { limit: 100 } } })),
  ]);
  return {
    budgets: budgets.items.map((b) => ({ id: b.id, name: b.name ?? (b.scope === 'ACCOUNT' ? 'Whole account' : b.scope === 'PROJECT' ? 'Project budget' : 'Key budget') })).sort((a, b) => a.name.localeCompare(b.name)),
    rules: new Map(rules.items.map((r) => [r.id, r.name])),
    users: new Map(users.items.map((u) => [u.userId, `${u.firstName} ${u.lastName}`.trim()])),
  };
}
type Names = Awaited<ReturnType<typeof loadNames>>;

function Holder({ a, names }: { a: Action; names: Names | undefined }) {
  if (a.holder.kind === 'anomaly') {
    const name = a.holderName ?? names?.rules.get(a.holder.id) ?? null;
    const rule = name ? `Spend-anomaly rule “${name}”` : 'A spend-anomaly rule';
    // The key's incident: its spend_anomaly alerts, where the last 24 hours and "Release the key" are.
    return a.keyHash ? <Link href={`/alerts?status=all&type=spend_anomaly&keyHash=${a.keyHash}`}>{rule}</Link> : <>{rule}</>;
  }
  const live = names?.budgets.find((b) => b.id === a.holder.id);
  const name = live?.name ?? a.holderName;
  const text = name ? `Budget “${name}”` : 'A budget';
  if (names && !live) return <>{text} (deleted)</>;
  return <Link href={`/budgets?budget=${a.holder.id}`}>{text}</Link>;
}

function Target({ a }: { a: Action }) {
  if (a.keyHash) return <Link href={`/keys/${a.keyHash}`}>{a.targetName ?? a.keyHash.slice(0, 12)}</Link>;
  const name = a.targetName ?? a.projectId ?? '';
  return a.projectId ? <Link href={`/projects?projectId=${encodeURIComponent(a.projectId)}`}>{name}</Link> : <>{name}</>;
}

function ActionRow({ a, names }: { a: Action; names: Names | undefined }) {
  const actor = a.actor === 'burnrate' ? 'Burnrate' : (names?.users.get(a.actor) ?? 'a former team member');
  return (
    <li class={a.result === 'failed' ? 'act failed' : 'act'} data-result={a.result}>
      <div class="act-when muted">{when(a.at)}</div>
      <div class="act-body">
        <p class="act-what">
          {WHAT[a.kind](<Target a={a} />, providerWords(a.provider))}{' '}
          {a.result === 'failed' ? <span class="badge exceeded">Failed</span> : <span class="badge ok">Done</span>}
        </p>
        <p class="muted">
          For <Holder a={a} names={names} /> · because {REASON_WORDS[a.reason]} · by {actor}
        </p>
        {a.result === 'failed' ? (
          <p class="error act-detail">
            {a.detail || 'The provider refused the act.'} Burnrate tries again at the next sync.
          </p>
        ) : (
          a.detail && <p class="muted act-detail">{a.detail}</p>
        )}
      </div>
    </li>
  );
}

const providerOptions = (current: string): [string, string][] => [
  ['', 'Any provider'],
  ...KNOWN_PROVIDERS.map((p): [string, string] => [p, providerWords(p)]),
  ...(current && !KNOWN_PROVIDERS.includes(current) ? [[current, current] as [string, string]] : []),
];

export function Actions({ query }: { query: URLSearchParams }) {
  const f = filtersFrom(query);
  const key = toPath(f);
  const names = useLoad(loadNames, []);
  // The pages read so far ("Load more" appends the next); a new filter starts again.
  const [more, setMore] = useState<{ items: Action[]; nextCursor: string | null }[]>([]);
  const loadMore = useSubmit();
  useEffect(() => setMore([]), [key]);
  const first = useLoad(
    () =>
      ok(
        api.GET('/enforcement-actions', {
          params: { query: { limit: PAGE, ...(f.budgetId ? { budgetId: f.budgetId } : {}), ...(f.provider ? { provider: f.provider } : {}), ...(f.result ? { result: f.result } : {}) } },
        }),
      ),
    [key],
  );
  const set = (patch: Partial<Filters>) => navigate(toPath({ ...f, ...patch }), { replace: true });
  const filtered = Boolean(f.budgetId || f.provider || f.result);
  document.title = 'Actions · Burnrate';
  const budgetOptions: [string, string][] = [
    ['', 'Any budget'],
    ...(names.data?.budgets.map((b): [string, string] => [b.id, b.name]) ?? []),
    ...(f.budgetId && !names.data?.budgets.some((b) => b.id === f.budgetId) ? [[f.budgetId, 'A deleted budget'] as [string, string]] : []),
  ];
  return (
    <Screen title="Actions">
      <p class="muted">
        Everything Burnrate did to stop spend or let it through again: keys switched off and on at the provider, limits set and taken off, keys the
        reporter refuses. Newest first. {UTC_NOTE}
      </p>
      <form class="toolbar" role="search" aria-label="Filter actions" onSubmit={(e) => e.preventDefault()}>
        <Select label="Budget" value={f.budgetId} options={budgetOptions} onChange={(e) => set({ budgetId: e.currentTarget.value })} />
        <Select label="Provider" value={f.provider} options={providerOptions(f.provider)} onChange={(e) => set({ provider: e.currentTarget.value })} />
        <Select label="Result" value={f.result} options={RESULTS} onChange={(e) => set({ result: e.currentTarget.value as Filters['result'] })} />
      </form>
      <Show state={first}>
        {(page) => {
          const pages = [page, ...more];
          const items = pages.flatMap((p) => p.items);
          const next = pages.at(-1)!.nextCursor;
          return (
            <>
              {items.length === 0 && !next ? (
                <Empty>
                  {filtered ? (
                    'No act matches these filters.'
                  ) : (
                    <>
                      Nothing done yet. When a <Link href="/budgets">stop budget</Link> reaches its limit, or a <Link href="/alert-rules">spend-anomaly rule</Link> stops
                      a key, each act appears here — a key set inactive at Anthropic or disabled at OpenRouter, a project’s hard limit at OpenAI, a key the reporter
                      refuses — and so does each release: when, for which budget or rule, why, by whom, and whether the provider took it.
                    </>
                  )}
                </Empty>
              ) : items.length === 0 ? (
                <p class="muted">None among the latest acts read: load more to look further back.</p>
              ) : (
                <ol class="acts" aria-label="Actions">
                  {items.map((a) => (
                    <ActionRow key={a.id} a={a} names={names.data} />
                  ))}
                </ol>
              )}
              <ErrorBox error={loadMore.error} />
              {next && (
                <p class="actions">
                  <button
                    type="button"
                    class="secondary"
                    disabled={loadMore.busy}
                    onClick={() =>
                      void loadMore.run(async () => {
                        const got = await ok(
                          api.GET('/enforcement-actions', {
                            params: {
                              query: {
                                limit: PAGE,
                                cursor: next,
                                ...(f.budgetId ? { budgetId: f.budgetId } : {}),
                                ...(f.provider ? { provider: f.provider } : {}),
                                ...(f.result ? { result: f.result } : {}),
                              },
                            },
                          }),
                        );
                        setMore((was) => [...was, got]);
                      })
                    }
                  >
                    Load more
                  </button>
                </p>
              )}
            </>
          );
        }}
      </Show>
    </Screen>
  );
}
