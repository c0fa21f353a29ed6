import { useEffect, useState } from 'preact/hooks';
import { useEditor } from '../../ui/focus.ts';
import { when } from '../../ui/format.ts';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link, useRoute } from '../../router.tsx';
import { useSubmit } from '../../ui/form.tsx';
import { percent, UTC_NOTE } from '../../ui/format.ts';
import { keyNames } from '../../ui/key-names.ts';
import { useLoad } from '../../ui/load.ts';
import { CoverageNotes } from '../../ui/coverage.tsx';
import { useCan } from '../../ui/me.tsx';
import { Money } from '../../ui/money.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';
import { BudgetForm, presetFrom } from './budget-form.tsx';

const STATUS_TEXT = { ok: 'On track', warning: 'Warning', exceeded: 'Exceeded' } as const;
type Budget = Schemas['Budget'];
type Action = Schemas['EnforcementAction'];

const ENFORCEMENT_TEXT = { armed: 'Stops spend at the limit', stopped: 'Spend stopped', released: 'Released for this month', failed: 'Could not stop spend' } as const;
const ACTION_TEXT: Record<Action['kind'], string> = {
  key_deactivated: 'Key set inactive',
  key_reactivated: 'Key set active',
  key_disabled: 'Key disabled',
  key_enabled: 'Key enabled',
  project_limit_set: 'Project limit set',
  project_limit_removed: 'Project limit removed',
  reporter_blocked: 'Reporter refuses the key',
  reporter_unblocked: 'Reporter lets the key through',
  key_limit_set: 'Key limit set',
  key_limit_removed: 'Key limit removed',
  workspace_limit_set: 'Workspace limit set',
  workspace_limit_removed: 'Workspace limit removed',
};
const REASON_TEXT: Record<Action['reason'], string> = {
  limit_reached: 'limit reached',
  period_start: 'new month',
  released: 'released',
  budget_changed: 'budget changed',
  budget_deleted: 'budget deleted',
  connection_changed: 'connection changed',
  anomaly: 'spend anomaly',
};

/** The budget's acts, newest first, read when opened. */
function Actions({ budgetId }: { budgetId: string }) {
  const [items, setItems] = useState<Action[] | undefined>();
  return (
    <details
      onToggle={(e) => {
        if ((e.currentTarget as HTMLDetailsElement).open && !items) {
          void ok(api.GET('/enforcement-actions', { params: { query: { budgetId } } })).then((page) => setItems(page.items));
        }
      }}
    >
      <summary>Actions</summary>
      {!items ? (
        <p class="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted">Nothing done yet.</p>
      ) : (
        <ul aria-label="Actions of this budget">
          {items.map((a) => (
            <li key={a.id}>
              {when(a.at)}: {ACTION_TEXT[a.kind]} ({REASON_TEXT[a.reason]}
              {a.actor === 'burnrate' ? '' : ', by a person'}) {a.result === 'failed' ? <span class="badge exceeded">failed</span> : null} <span class="muted">{a.detail}</span>
            </li>
          ))}
        </ul>
      )}
      <p style={{ margin: '4px 0' }}>
        <Link href={`/actions?budgetId=${budgetId}`}>All of this budget’s actions</Link>
      </p>
    </details>
  );
}

/** The names of the projects PROJECT budgets cover (one GET /spend?groupBy=project over the last 3 months, only when there are any). */
async function projectNames(items: Budget[]): Promise<Map<string, string>> {
  if (!items.some((b) => b.scope === 'PROJECT')) return new Map();
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1)).toISOString().slice(0, 10);
  const { data } = await api.GET('/spend', { params: { query: { groupBy: 'project', from, to: now.toISOString().slice(0, 10) } } });
  const groups = (data?.groups ?? []) as { project?: { id: string; name: string } | null }[];
  return new Map(groups.filter((g) => g.project).map((g) => [g.project!.id, g.project!.name]));
}

async function loadBudgets() {
  const { items } = await ok(api.GET('/budgets'));
  const [names, projects] = await Promise.all([keyNames(items.map((b) => b.keyHash)), projectNames(items)]);
  return { items, names, projects };
}

function BudgetCard({ b: listed, name, projectName, canEdit, linked, onChanged }: { b: Budget; name: string | undefined; projectName?: string | undefined; canEdit: boolean; linked: boolean; onChanged: () => void }) {
  const editor = useEditor();
  const remove = useSubmit();
  const release = useSubmit();
  // The release's answer is the budget as it is now: the card shows it at once, until the list is read again.
  const [answer, setAnswer] = useState<Budget | undefined>();
  useEffect(() => setAnswer(undefined), [listed]);
  const b = answer ?? listed;
  const title = b.name ?? (b.scope === 'ACCOUNT' ? 'Whole account' : b.scope === 'PROJECT' ? 'Project budget' : 'Key budget');
  return (
    <li
      class={linked ? 'card linked' : 'card'}
      style={{ listStyle: 'none' }}
      id={`budget-${b.id}`}
      aria-current={linked ? 'true' : undefined}
      ref={(el) => {
        if (linked) el?.scrollIntoView({ block: 'center' });
      }}
    >
      <h3 style={{ margin: 0 }}>{title}</h3>
      <p class="muted" style={{ margin: '4px 0' }}>
        {b.scope === 'ACCOUNT' ? 'All keys' : b.scope === 'PROJECT' ? <span style={{ overflowWrap: 'anywhere' }}>Project {projectName ?? b.projectId}</span> : <>Key <Link href={`/keys/${b.keyHash}`}>{name ?? b.keyHash?.slice(0, 12)}</Link></>} · alert at {b.alertThreshold}%
      </p>
      <p style={{ margin: '4px 0' }}>
        <Money value={b.spend.monthToDate} /> of <Money value={b.monthlyLimit} /> ({percent(b.percentUsed)}) <span class={`badge ${b.status}`}>{STATUS_TEXT[b.status]}</span>
      </p>
      <p class="muted" style={{ margin: '4px 0' }}>
        Forecast for the month end: <Money value={b.forecast.monthEnd} /> ({percent(b.forecast.percentOfLimit)} of the limit)
      </p>
      <div
        class={`bar ${b.status}`}
        role="progressbar"
        aria-label={`Spend of ${title}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.min(100, Math.round(b.percentUsed))}
      >
        <span style={{ width: `${Math.min(100, b.percentUsed)}%` }} />
      </div>
      {b.enforcement && (
        <div class={b.enforcement.status === 'stopped' || b.enforcement.status === 'failed' ? 'notice warn' : 'muted'}>
          <p style={{ margin: '4px 0' }}>
            <span class={`badge ${b.enforcement.status === 'stopped' || b.enforcement.status === 'failed' ? 'exceeded' : 'ok'}`}>{ENFORCEMENT_TEXT[b.enforcement.status]}</span>
            {b.enforcement.status !== 'armed' && <> since {when(b.enforcement.since)}</>}
          </p>
          <p style={{ margin: '4px 0' }}>{b.enforcement.detail}</p>
          {canEdit && b.enforcement.status === 'stopped' && (
            <button
              type="button"
              aria-label={`Release budget ${title} for this month`}
              disabled={release.busy}
              onClick={() =>
                void release
                  .run(async () => setAnswer(await ok(api.POST('/budgets/{id}/release', { params: { path: { id: b.id } } }))))
                  .then(onChanged)
              }
            >
              Release
            </button>
          )}
          {canEdit && b.enforcement.status === 'stopped' && <span class="muted"> Lets spend through until the month ends.</span>}
          <ErrorBox error={release.error} />
          <Actions budgetId={b.id} />
        </div>
      )}
      {canEdit && editor.editing && (
        <BudgetForm
          budget={b}
          keyLabel={name}
          onCancel={editor.close}
          onDone={() => {
            editor.close();
            onChanged();
          }}
        />
      )}
      {canEdit && !editor.editing && (
        <p class="actions">
          <button type="button" class="secondary" ref={editor.opener} aria-label={`Edit budget ${title}`} onClick={editor.open}>
            Edit
          </button>
          <button
            type="button"
            class="secondary"
            aria-label={`Delete budget ${title}`}
            disabled={remove.busy}
            onClick={() => {
              if (!confirm(`Delete the budget ${title}?`)) return;
              void remove.run(() => ok(api.DELETE('/budgets/{id}', { params: { path: { id: b.id } } }))).then(onChanged);
            }}
          >
            Delete
          </button>
        </p>
      )}
      <ErrorBox error={remove.error} />
    </li>
  );
}

export function Budgets() {
  const canEdit = useCan('member');
  const route = useRoute();
  const budgets = useLoad(loadBudgets, []);
  // `?budget=<id>`: the budget a link named (a stopped key's holder, an act's budget), marked and scrolled to.
  const linked = route.query.get('budget');
  // Budgets compare the month's spend: what that spend misses is said here too.
  const coverage = useLoad(() => ok(api.GET('/spend', { params: { query: { groupBy: 'provider' } } })), []);
  document.title = 'Budgets · Burnrate';
  return (
    <Screen title="Budgets">
      <p class="muted">Monthly limits on spend (calendar months). {UTC_NOTE}</p>
      <CoverageNotes coverage={coverage.data?.coverage} quiet />
      <Show state={budgets}>
        {({ items, names, projects }) =>
          items.length === 0 ? (
            <Empty>No budgets yet.</Empty>
          ) : (
            <ul class="cards" aria-label="Budgets">
              {items.map((b) => (
                <BudgetCard
                  key={b.id}
                  b={b}
                  name={b.keyHash ? names.get(b.keyHash) : undefined}
                  projectName={b.projectId ? projects.get(b.projectId) : undefined}
                  canEdit={canEdit}
                  linked={b.id === linked}
                  onChanged={budgets.reload}
                />
              ))}
            </ul>
          )
        }
      </Show>
      {canEdit && (
        <>
          <h2>New budget</h2>
          <BudgetForm key={route.query.toString()} preset={presetFrom(route.query)} onDone={budgets.reload} />
        </>
      )}
    </Screen>
  );
}
