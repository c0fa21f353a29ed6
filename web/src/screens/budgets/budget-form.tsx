/** The budget form, for a new budget (POST) and for editing one in place (PATCH): the same fields, the same words. */
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, FormActions, Select, useSubmit } from '../../ui/form.tsx';
import { KeyPicker } from '../../ui/key-picker.tsx';

type Budget = Schemas['Budget'];
type Scope = 'ACCOUNT' | 'KEY' | 'PROJECT' | 'TAG';

/**
 * What "Stop spend at the limit" does for this scope (or why it can't): the key's source and provider decide for a
 * key; the connection's provider for a project. The API checks again (a 400 says why, under the checkbox).
 */
function useLever(scope: Scope, keyHash: string, connection: Schemas['Connection'] | undefined): { offered: boolean; words: string } {
  const [key, setKey] = useState<Schemas['KeyDetail'] | undefined>();
  useEffect(() => {
    setKey(undefined);
    if (scope !== 'KEY' || !/^[0-9a-f]{64}$/.test(keyHash)) return;
    void api.GET('/keys/{hash}', { params: { path: { hash: keyHash } } }).then(({ data }) => setKey(data));
  }, [scope, keyHash]);
  if (scope === 'ACCOUNT') {
    return {
      offered: true,
      words:
        'On the connections that let budgets act: each OpenAI project gets a hard spend limit (the account’s limit, lowered to what the project spent once the account reaches it), Anthropic and OpenRouter keys are stopped at the limit, and keys that send events are refused by the reporter.',
    };
  }
  if (scope === 'TAG') {
    return {
      offered: true,
      words:
        'Every key whose tags hold the tag, now and later: at the limit, Anthropic and OpenRouter keys are stopped, keys that send events are refused by the reporter, and an OpenAI project whose keys all hold the tag gets a hard spend limit.',
    };
  }
  if (scope === 'PROJECT') {
    if (!connection) return { offered: false, words: 'Choose a project first.' };
    if (connection.enforcement !== 'on') return { offered: false, words: `The connection ${connection.name} does not let budgets act: an admin turns that on on the Connections page.` };
    return connection.provider === 'openai'
      ? { offered: true, words: 'Sets the project’s own hard spend limit at OpenAI (OpenAI refuses its requests past it; its enforcement lags a little).' }
      : { offered: true, words: 'At the limit, every active key of the workspace is set inactive at Anthropic; exactly those are set active again on release. (Through the API, nativeCap: true also sets a monthly workspace spend limit at Anthropic, an early-access feature: it replaces any limit of your own on that workspace, and a release deletes it.)' };
  }
  if (!key) return { offered: false, words: 'Choose a key first.' };
  if (key.source !== 'connection') return { offered: true, words: 'At the limit, the Burnrate reporter refuses this key’s calls (answered with a 429, never sent).' };
  if (key.provider === 'openai') return { offered: false, words: 'OpenAI can pause no single key: make a budget on its project instead.' };
  if (key.providerKeyId === null) return { offered: false, words: 'Usage without a key can’t be stopped by Burnrate: cover it with an account budget, or keep this budget notify-only.' };
  if (key.providerStatus === 'archived' || key.providerStatus === 'expired' || key.providerStatus === 'deleted') return { offered: false, words: `This key is ${key.providerStatus}: there is nothing left to stop.` };
  if (key.provider === 'anthropic') return { offered: true, words: 'At the limit, Anthropic sets this key inactive; it is set active again on release or at the month’s start (a key someone had turned off stays off).' };
  if (key.provider === 'openrouter')
    return { offered: true, words: 'Sets the key’s own monthly limit at OpenRouter (OpenRouter refuses it past the limit, even while Burnrate is down) and disables it at the limit; both are undone on release or at the month’s start, and a limit of your own comes back.' };
  return { offered: false, words: 'This provider offers Burnrate no way to stop a key.' };
}

/** What a new budget starts with (the Projects screen's link: `/budgets?scope=PROJECT&projectId=…&connectionId=…&name=…`). */
export interface BudgetPreset {
  scope?: Scope | undefined;
  connectionId?: string | undefined;
  projectId?: string | undefined;
  name?: string | undefined;
}

/** Reads a preset from the Budgets screen's query string; anything else in it is ignored. */
export function presetFrom(query: URLSearchParams): BudgetPreset | undefined {
  const scope = query.get('scope');
  if (scope !== 'ACCOUNT' && scope !== 'KEY' && scope !== 'PROJECT') return undefined;
  return { scope, connectionId: query.get('connectionId') ?? undefined, projectId: query.get('projectId') ?? undefined, name: query.get('name') ?? undefined };
}

type ProjectGroup = { provider: string; project: { id: string; name: string } | null };

/** The month that leads back this far: projects with spend in the last 3 months are offered (one GET /spend). */
const projectRange = () => {
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1)).toISOString().slice(0, 10);
  return { from, to: now.toISOString().slice(0, 10) };
};

const PROVIDER_WORDS: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic', openrouter: 'OpenRouter' };

/**
 * The PROJECT field: the account's projects (OpenAI projects, Anthropic workspaces) by name, with their provider and
 * connection, from one `GET /spend?groupBy=project`. Choosing one sets both the connection and the project.
 */
function ProjectPicker({ connections, connectionId, projectId, error, onChange }: {
  connections: Schemas['Connection'][];
  connectionId: string;
  projectId: string;
  error: string | undefined;
  onChange: (connectionId: string, projectId: string) => void;
}) {
  const [groups, setGroups] = useState<ProjectGroup[] | undefined>();
  useEffect(() => {
    void api.GET('/spend', { params: { query: { groupBy: 'project', ...projectRange() } } }).then(({ data }) => setGroups(((data?.groups ?? []) as ProjectGroup[]).filter((g) => g.project !== null)));
  }, []);
  const options: [string, string][] = [];
  for (const g of groups ?? []) {
    for (const c of connections.filter((x) => x.provider === g.provider)) {
      const kind = g.provider === 'anthropic' ? 'workspace' : 'project';
      options.push([`${c.id}|${g.project!.id}`, `${g.project!.name} — ${PROVIDER_WORDS[g.provider] ?? g.provider} ${kind}, connection ${c.name}`]);
    }
  }
  // A project given without its connection (a link made before the connections were read): the one connection of
  // the project's provider, once the projects are read.
  useEffect(() => {
    if (connectionId || !projectId || !groups) return;
    const group = groups.find((g) => g.project?.id === projectId);
    const candidates = group ? connections.filter((c) => c.provider === group.provider) : [];
    if (candidates.length === 1) onChange(candidates[0]!.id, projectId);
  }, [connectionId, projectId, groups, connections]);
  const chosen = connectionId && projectId ? `${connectionId}|${projectId}` : '';
  if (chosen && !options.some(([v]) => v === chosen)) {
    const c = connections.find((x) => x.id === connectionId);
    options.unshift([chosen, `${projectId}${c ? ` — connection ${c.name}` : ''}`]);
  }
  return (
    <>
      <Select
        label="Project or workspace"
        value={chosen}
        options={[['', groups ? (options.length > 0 ? 'Choose a project' : 'No projects with spend yet') : 'Loading projects…'], ...options]}
        onChange={(e) => {
          const [c = '', p = ''] = e.currentTarget.value.split('|');
          onChange(c, p);
        }}
      />
      {error && <p class="error">{error}</p>}
    </>
  );
}

export function BudgetForm({ budget, keyLabel, preset, onDone, onCancel }: { budget?: Budget; keyLabel?: string | undefined; preset?: BudgetPreset | undefined; onDone: () => void; onCancel?: () => void }) {
  const [form, setForm] = useState({
    name: budget?.name ?? preset?.name ?? '',
    monthlyLimit: budget ? String(budget.monthlyLimit) : '',
    alertThreshold: String(budget?.alertThreshold ?? 80),
    scope: budget?.scope ?? preset?.scope ?? ('ACCOUNT' as Scope),
    keyHash: budget?.keyHash ?? '',
    connectionId: budget?.connectionId ?? preset?.connectionId ?? '',
    projectId: budget?.projectId ?? preset?.projectId ?? '',
    tagName: budget?.tag?.name ?? '',
    tagValue: budget?.tag?.value ?? '',
    stop: budget?.action === 'stop',
  });
  const [connections, setConnections] = useState<Schemas['Connection'][]>([]);
  useEffect(() => {
    void api.GET('/connections').then(({ data }) => setConnections(data?.items ?? []));
  }, []);
  const lever = useLever(form.scope, form.keyHash, connections.find((c) => c.id === form.connectionId));
  const submit = useSubmit();
  const title = budget ? `Edit budget ${budget.name ?? ''}`.trim() : 'New budget';
  const body = {
    name: form.name.trim() || null,
    monthlyLimit: Number(form.monthlyLimit),
    alertThreshold: Number(form.alertThreshold),
    scope: form.scope,
    action: form.stop ? ('stop' as const) : ('notify' as const),
    ...(form.scope === 'KEY' ? { keyHash: form.keyHash } : {}),
    ...(form.scope === 'PROJECT' ? { connectionId: form.connectionId, projectId: form.projectId.trim() } : {}),
    ...(form.scope === 'TAG' ? { tag: { name: form.tagName.trim(), value: form.tagValue } } : {}),
  };
  return (
    <Form
      label={title}
      error={submit.error}
      onSubmit={() =>
        void submit
          .run(() =>
            budget
              ? ok(api.PATCH('/budgets/{id}', { params: { path: { id: budget.id } }, body: { ...body, ...(form.scope !== 'KEY' ? { keyHash: null } : {}), ...(form.scope !== 'PROJECT' ? { connectionId: null, projectId: null } : {}), ...(form.scope !== 'TAG' ? { tag: null } : {}) } }))
              : ok(api.POST('/budgets', { body })),
          )
          .then((done) => {
            if (!done) return;
            if (!budget) setForm({ ...form, name: '', monthlyLimit: '' });
            onDone();
          })
      }
    >
      <Field label="Name" value={form.name} error={submit.fieldError('name', 'Name')} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
      <Field
        label="Monthly limit (US dollars)"
        inputMode="decimal"
        required
        value={form.monthlyLimit}
        error={submit.fieldError('monthlyLimit', 'Monthly limit (US dollars)')}
        onInput={(e) => setForm({ ...form, monthlyLimit: e.currentTarget.value })}
      />
      <Field
        label="Alert at (% of the limit)"
        inputMode="decimal"
        required
        value={form.alertThreshold}
        error={submit.fieldError('alertThreshold', 'Alert at (% of the limit)')}
        onInput={(e) => setForm({ ...form, alertThreshold: e.currentTarget.value })}
      />
      <Select
        label="Applies to"
        value={form.scope}
        options={[
          ['ACCOUNT', 'The whole account'],
          ['KEY', 'One key'],
          ['PROJECT', 'One project (OpenAI project, Anthropic workspace)'],
          ['TAG', 'Every key with a tag (team, product, …)'],
        ]}
        onChange={(e) => setForm({ ...form, scope: e.currentTarget.value as Scope })}
      />
      {form.scope === 'PROJECT' && (
        <>
          <ProjectPicker
            connections={connections}
            connectionId={form.connectionId}
            projectId={form.projectId}
            error={submit.fieldError('projectId', 'Project or workspace') ?? submit.fieldError('connectionId', 'Project or workspace')}
            onChange={(connectionId, projectId) => setForm({ ...form, connectionId, projectId })}
          />
        </>
      )}
      {form.scope === 'TAG' && (
        <>
          <Field label="Tag name" required value={form.tagName} error={submit.fieldError('tag.name', 'Tag name') ?? submit.fieldError('tag', 'Tag name')} onInput={(e) => setForm({ ...form, tagName: e.currentTarget.value })} />
          <Field label="Tag value" required value={form.tagValue} error={submit.fieldError('tag.value', 'Tag value')} onInput={(e) => setForm({ ...form, tagValue: e.currentTarget.value })} />
        </>
      )}
      {form.scope === 'KEY' && (
        <KeyPicker label="Key" value={form.keyHash} chosenName={form.keyHash === budget?.keyHash ? keyLabel : undefined} error={submit.fieldError('keyHash', 'Key')} onChange={(keyHash) => setForm({ ...form, keyHash })} />
      )}
      <label class="check">
        <input type="checkbox" checked={form.stop} disabled={!lever.offered && !form.stop} onChange={(e) => setForm({ ...form, stop: e.currentTarget.checked })} /> Stop spend at the limit
      </label>
      <p class={lever.offered ? 'muted' : 'notice warn'} style={{ margin: '4px 0' }}>
        {lever.words}
      </p>
      {submit.fieldError('action', 'Stop spend at the limit') && <p class="error">{submit.fieldError('action', 'Stop spend at the limit')}</p>}
      <FormActions busy={submit.busy} submitText={budget ? 'Save budget' : 'Create budget'} onCancel={onCancel} />
    </Form>
  );
}
